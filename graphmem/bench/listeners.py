"""Idle listeners of ``GET /v1/events`` for ``graphmem bench api --listeners N``: N streams
open on the namespace the write phase writes to, each read (and dropped) as a client would,
so a write's latency with N listeners can be set beside the same phase with none.

Each listener is a thread on one connection of the standard library's ``http.client`` (the
load generator's own client: little of this process's CPU, which shares the cores with the
server). A listener counts the events it read: all of them arriving is part of the result.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http import client
from typing import Any


class Listeners:
    """``count`` open event streams of ``namespace`` at ``url``; ``close`` ends them.

    Example:
        >>> pool = Listeners("http://127.0.0.1:9", "gm_x", "bench", 0)
        >>> pool.events, pool.connected
        (0, 0)
    """

    def __init__(self, url: str, key: str, namespace: str, count: int) -> None:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        self.host, self.port, self.key, self.namespace = host, int(port), key, namespace
        self.count = count
        self.events = self.connected = self.failed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns: list[client.HTTPConnection] = []
        self._threads: list[threading.Thread] = []

    def open(self, timeout: float = 60.0) -> None:
        """Start the listeners; return once every one has its stream open."""
        for _ in range(self.count):
            t = threading.Thread(target=self._listen, daemon=True)
            t.start()
            self._threads.append(t)
        deadline = time.monotonic() + timeout
        while self.connected + self.failed < self.count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.connected} of {self.count} listeners connected")
            time.sleep(0.05)
        if self.failed:
            raise RuntimeError(f"{self.failed} of {self.count} listeners were refused")

    def _listen(self) -> None:
        http = client.HTTPConnection(self.host, self.port, timeout=120)
        with self._lock:
            self._conns.append(http)
        try:
            http.request("GET", f"/v1/events?namespace={self.namespace}",
                         headers={"Authorization": f"Bearer {self.key}",
                                  "Accept": "text/event-stream"})
            response = http.getresponse()
            with self._lock:
                if response.status != 200:
                    self.failed += 1
                    return
                self.connected += 1
            while not self._stop.is_set():
                line = response.fp.readline()
                if not line:
                    return
                if line.startswith(b"event: "):
                    with self._lock:
                        self.events += 1
        except (OSError, client.HTTPException, ValueError):
            return  # closed by ``close`` (or the server went away)

    def close(self) -> dict[str, Any]:
        """End every stream; what they read."""
        self._stop.set()
        with self._lock:
            conns = list(self._conns)
        for http in conns:
            if http.sock is not None:
                http.sock.shutdown(2)  # wakes the blocked read
            http.close()
        for t in self._threads:
            t.join(timeout=10)
        return {"listeners": self.count, "connected": self.connected,
                "events_read": self.events}


def with_listeners(drive: Callable[[], dict[str, Any]], before: dict[str, Any], url: str,
                   key: str, namespace: str, count: int,
                   progress: Callable[[str], None]) -> dict[str, Any]:
    """The write phase (``drive``) again with ``count`` listeners, then once more without
    (the machine's speed drifts within minutes: the listeners' run is set beside the mean
    of the runs before and after it). ``before``: the phase's run without listeners."""
    pool = Listeners(url, key, namespace, count)
    progress(f"write with {count} idle listeners of the written namespace ...")
    pool.open()
    try:
        listened = drive()
    finally:
        read = pool.close()
    progress("write again without listeners ...")
    after = drive()
    base = [x["p50_ms"] for x in (before, after) if x.get("p50_ms")]
    base95 = [x["p95_ms"] for x in (before, after) if x.get("p95_ms")]
    return {**read, "write": listened, "write_after": after,
            "p50_over_none": round(listened["p50_ms"] / (sum(base) / len(base)), 3)
            if base and listened.get("p50_ms") else None,
            "p95_over_none": round(listened["p95_ms"] / (sum(base95) / len(base95)), 3)
            if base95 and listened.get("p95_ms") else None}
