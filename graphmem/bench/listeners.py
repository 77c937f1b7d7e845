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
            tail = b""
            while not self._stop.is_set():
                chunk = response.read1(65536)  # whole reads: a line at a time cost this
                if not chunk:                  # process (which shares the cores) 4x more
                    return
                data = tail + chunk
                tail = data[-6:]  # shorter than the marker: a match is never counted twice
                with self._lock:
                    self.events += data.count(b"event: ")
        except (OSError, client.HTTPException, ValueError, AttributeError):
            return  # closed by ``close`` under the read (http.client then trips over itself)

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


def with_listeners(drive: Callable[[], dict[str, Any]], url: str, key: str, namespace: str,
                   idle_namespace: str, count: int, progress: Callable[[str], None],
                   rounds: int = 3) -> dict[str, Any]:
    """The write phase (``drive``) in ``rounds`` rounds of three: without listeners, with
    ``count`` idle listeners of another namespace (nothing for them to receive), and with
    ``count`` listeners of the written namespace (every write's event goes to each). The
    machine's speed drifts within minutes (and the store grows): each round's runs are set
    beside that round's run without listeners, and the median of the rounds is reported."""
    runs: dict[str, list[dict[str, Any]]] = {"none": [], "idle": [], "receiving": []}
    for r in range(rounds):
        for name, ns in (("none", None), ("idle", idle_namespace), ("receiving", namespace)):
            progress(f"round {r + 1}/{rounds}: write with {count if ns else 0} listeners"
                     + (f" of {ns!r}" if ns else "") + " ...")
            if ns is None:
                runs[name].append(drive())
                continue
            pool = Listeners(url, key, ns, count)
            pool.open()
            try:
                run = drive()
            finally:
                run["events_read"] = pool.close()["events_read"]
            runs[name].append(run)

    def median(values: list[float]) -> float:
        ordered = sorted(values)
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2

    out: dict[str, Any] = {"listeners": count, "rounds": runs}
    for name in runs:
        out[name] = {q: round(median([x[q] for x in runs[name]]), 2)
                     for q in ("p50_ms", "p95_ms", "server_cpu_ms_per_request")}
        out[name]["requests"] = sum(x["requests"] for x in runs[name])
        out[name]["events_read"] = sum(x.get("events_read", 0) for x in runs[name])
        if name != "none":
            for q in ("p50_ms", "p95_ms"):
                out[f"{name}_{q[:3]}_over_none"] = round(median(
                    [x[q] / n[q] for x, n in zip(runs[name], runs["none"], strict=True)]), 3)
    return out
