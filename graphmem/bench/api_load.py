"""Loopback load on the REST API: req/s and latency of search and write at N stored memories.

Fills a fresh data folder with N synthetic memories (seeded random vectors: filling is not what
is measured), starts the real server (uvicorn, the real embedding model) on 127.0.0.1, then
runs ``clients`` concurrent async clients for ``seconds`` against POST /v1/search and then
POST /v1/memories. Bounded in time and count; loopback only.
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from graphmem import GraphMemory
from graphmem.api.app import create_app
from graphmem.api.keys import KeyStore
from graphmem.api.settings import Settings
from graphmem.bench import synthetic
from graphmem.bench.scale import RandomEmbedder, _latency


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _drive(url: str, key: str, kind: str, clients: int, seconds: float,
                 max_requests: int) -> dict[str, Any]:
    queries = synthetic.queries(200)
    texts = synthetic.texts(max_requests, seed=99)
    times: list[float] = []
    errors = 0
    deadline = time.monotonic() + seconds
    counter = iter(range(max_requests))

    async def worker(n: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=url, timeout=60,
                                     headers={"Authorization": f"Bearer {key}"}) as http:
            while time.monotonic() < deadline:
                i = next(counter, None)
                if i is None:
                    return
                body = ({"namespace": "bench", "query": queries[i % len(queries)]}
                        if kind == "search" else
                        {"namespace": "bench", "content": f"{texts[i]} (load {n})"})
                t0 = time.perf_counter()
                r = await http.post("/v1/search" if kind == "search" else "/v1/memories",
                                    json=body)
                times.append(time.perf_counter() - t0)
                errors += r.status_code >= 400

    started = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(clients)))
    elapsed = time.perf_counter() - started
    return {"requests": len(times), "errors": errors,
            "req_per_s": round(len(times) / elapsed, 1), **_latency(times)}


def run_api_load(n: int = 10_000, *, clients: int = 8, seconds: float = 10.0,
                 max_requests: int = 5000, progress: Any = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        progress(f"filling {n} memories ...")
        with GraphMemory.open(data, embedder=RandomEmbedder()) as mem:
            records = synthetic.records(n)
            for i in range(0, n, 1000):
                mem.store_many(records[i:i + 1000], namespace="bench")
        key = KeyStore(Path(tmp) / "keys.db").create(["bench"], "writer")[1]
        settings = Settings(data=str(data), keys_file=Path(tmp) / "keys.db", port=_port(),
                            scheduler=False)
        server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1",
                                               port=settings.port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{settings.port}"
        try:
            httpx.post(f"{url}/v1/search", json={"namespace": "bench", "query": "warm up"},
                       headers={"Authorization": f"Bearer {key}"}, timeout=120)
            result: dict[str, Any] = {"n": n, "clients": clients, "seconds": seconds}
            for kind in ("search", "write"):
                progress(f"{kind}: {clients} clients for {seconds:g} s ...")
                result[kind] = asyncio.run(_drive(url, key, kind, clients, seconds,
                                                  max_requests))
        finally:
            server.should_exit = True
            thread.join(timeout=30)
    return result


def table(r: dict[str, Any]) -> str:
    lines = [f"REST API on loopback, {r['n']:,} memories stored, {r['clients']} clients, "
             f"{r['seconds']:g} s per route", "",
             "| route | requests | errors | req/s | p50 ms | p95 ms | p99 ms |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, route in (("search", "POST /v1/search"), ("write", "POST /v1/memories")):
        x = r[kind]
        lines.append(f"| {route} | {x['requests']} | {x['errors']} | {x['req_per_s']} | "
                     f"{x['p50_ms']} | {x['p95_ms']} | {x['p99_ms']} |")
    return "\n".join(lines)
