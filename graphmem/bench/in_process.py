"""The REST benchmark's baseline of the hour: the same store, the same settings and the same
kind of queries (every one new) retrieved in one process without HTTP, by as many threads as
the REST run has clients, just before the server starts.

The VM this project is measured on changes speed by up to 35% within minutes, so a REST
rate alone does not say whether the code or the hour moved it; the ratio of the two runs,
minutes apart, does. It runs in a process of its own, with the server's environment (its
settings come from ``api/settings.py``, the only reader of the environment), opened and
settled as ``graphmem serve`` opens it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from graphmem.bench import synthetic
from graphmem.bench.stats import latency_or_none, run_together


def measure(data: Path, env: dict[str, str], *, threads: int, seconds: float,
            max_requests: int, namespace: str = "bench") -> dict[str, Any]:
    """Runs ``main`` in a child process with ``env``; its JSON result."""
    done = subprocess.run(
        [sys.executable, "-c", "from graphmem.bench.in_process import main; main()",
         str(data), namespace, str(threads), str(seconds), str(max_requests)],
        env=env, capture_output=True, text=True, timeout=600 + seconds)
    if done.returncode != 0:
        raise RuntimeError(f"the in-process baseline failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """argv: data namespace threads seconds max_requests; prints one JSON line."""
    from graphmem.api.settings import Settings
    from graphmem.engine.long_lived import settle
    from graphmem.memory import GraphMemory

    data, namespace = sys.argv[1], sys.argv[2]
    threads, seconds, max_requests = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    settings = Settings.from_env(data=data)
    queries = synthetic.queries(200)
    with GraphMemory.open(settings.data, config=settings.memory_config()) as mem:
        settle(mem.embedder)
        mem.retrieve("warm up", namespace=namespace)
        times: list[float] = []
        counter = iter(range(max_requests))
        lock = threading.Lock()
        deadline = time.monotonic() + seconds

        def worker() -> None:
            while time.monotonic() < deadline:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                t0 = time.perf_counter()
                mem.retrieve(f"{queries[i % len(queries)]} (in process {i})",
                             namespace=namespace)
                elapsed = time.perf_counter() - t0
                with lock:
                    times.append(elapsed)

        elapsed, cpu = run_together([threading.Thread(target=worker) for _ in range(threads)])
    done = len(times)  # none when the deadline or the request budget came first
    sys.stdout.write(json.dumps({
        "threads": threads, "requests": done, "req_per_s": round(done / elapsed, 1),
        "cpu_ms_per_request": round(cpu * 1000 / done, 1) if done else None,
        **latency_or_none(times)}) + "\n")
