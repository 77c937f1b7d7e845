"""Loopback load on the REST API: req/s and latency of search and write at N stored memories.

Fills a fresh data folder with N synthetic memories (seeded random vectors: filling is not what
is measured), starts the real server as a deployment runs it (``graphmem serve`` in a process
of its own, the real embedding model, the scheduler off) on 127.0.0.1, then runs ``clients``
concurrent clients (threads, each on a keep-alive connection) from this process for
``seconds`` against POST /v1/search (200 queries asked again and again: the hot cache answers
the repeats), POST /v1/search with every query new (the whole pipeline each time) and then
POST /v1/memories. Each phase reports the server's CPU and the load generator's per request.
Before the server starts, the same store answers new queries in one process without HTTP
(``in_process``): the hour's baseline, since the machine's speed moves within minutes.
Bounded in time and count; loopback only; the load generator shares the two cores with the
server (not its GIL).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http import client
from pathlib import Path
from typing import Any

import httpx

from graphmem import GraphMemory
from graphmem.api.keys import KeyStore
from graphmem.bench import in_process, synthetic
from graphmem.bench.scale import RandomEmbedder
from graphmem.bench.stats import latency as _latency
from graphmem.bench.stats import latency_or_none, ratio, run_together


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _drive(url: str, key: str, kind: str, clients: int, seconds: float,
           max_requests: int, server_pid: int | None = None) -> dict[str, Any]:
    """``clients`` threads, each on one keep-alive connection (the standard library's
    ``http.client``: ~0.35 ms of this process's CPU a request against httpx's async client's
    2.0-2.7 ms, which the server shares the two cores with; ADR 0043). ``server_pid``: the
    server's CPU per request is measured too, while the threads run (not the stats reads)."""
    queries = synthetic.queries(200)
    texts = synthetic.texts(max_requests, seed=99)
    times: list[float] = []
    errors = 0
    hits = _cache_hits(url, key)  # before the clock starts: stats read the namespace
    counter = iter(range(max_requests))
    lock = threading.Lock()
    host, port = url.removeprefix("http://").rsplit(":", 1)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    path = "/v1/memories" if kind == "write" else "/v1/search"
    deadline = time.monotonic() + seconds

    def worker(n: int) -> None:
        nonlocal errors
        http = client.HTTPConnection(host, int(port), timeout=60)
        try:
            while time.monotonic() < deadline:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                query = queries[i % len(queries)]
                if kind == "search_distinct":  # never asked before: the hot cache cannot answer
                    query = f"{query} (ticket {i})"
                body = ({"namespace": "bench", "query": query} if kind != "write" else
                        {"namespace": "bench", "content": f"{texts[i]} (load {n})"})
                t0 = time.perf_counter()
                try:
                    http.request("POST", path, json.dumps(body), headers)
                    response = http.getresponse()
                    response.read()
                except (OSError, client.HTTPException):  # a dropped connection: an error,
                    http.close()  # and the next request opens a new one
                    with lock:
                        errors += 1
                    continue
                elapsed = time.perf_counter() - t0
                with lock:
                    times.append(elapsed)
                    errors += response.status >= 400
        finally:
            http.close()

    server_cpu = _cpu_seconds(server_pid) if server_pid is not None else 0.0
    elapsed, cpu = run_together([threading.Thread(target=worker, args=(n,))
                                 for n in range(clients)])
    if server_pid is not None:
        server_cpu = _cpu_seconds(server_pid) - server_cpu
    served = ({"server_cpu_ms_per_request": round(server_cpu * 1000 / len(times), 1)
               if times else None} if server_pid is not None else {})
    return {"requests": len(times), "errors": errors,
            "req_per_s": round(len(times) / elapsed, 1),
            **latency_or_none(times),
            "cache_hits": _cache_hits(url, key) - hits,
            "load_cpu_ms_per_request": round(cpu * 1000 / len(times), 2) if times else None,
            **served}


def _cache_hits(url: str, key: str) -> int:
    """The hot cache's hits in the bench namespace so far (from GET /v1/stats)."""
    stats = httpx.get(f"{url}/v1/stats", params={"namespace": "bench"}, timeout=60,
                      headers={"Authorization": f"Bearer {key}"}).json()
    return int((stats.get("cache") or {}).get("hits") or 0)


async def _mixed(url: str, key: str, writers: int, per_writer: int, searchers: int
                 ) -> dict[str, Any]:
    """``writers`` x ``per_writer`` writes with ``searchers`` searching all along: write
    latency under load, and a count of what was written (nothing may be lost)."""
    queries = synthetic.queries(200)
    times: list[float] = []
    errors = 0
    writing = True

    async def writer(n: int) -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=url, timeout=120,
                                     headers={"Authorization": f"Bearer {key}"}) as http:
            for i in range(per_writer):
                t0 = time.perf_counter()
                r = await http.post("/v1/memories", json={
                    "namespace": "mixed", "content": f"writer {n} note {i} under load"})
                times.append(time.perf_counter() - t0)
                errors += r.status_code != 201

    async def searcher(n: int) -> int:
        done = 0
        async with httpx.AsyncClient(base_url=url, timeout=120,
                                     headers={"Authorization": f"Bearer {key}"}) as http:
            while writing:
                await http.post("/v1/search", json={"namespace": "bench",
                                                    "query": queries[(n + done) % 200]})
                done += 1
        return done

    tasks = [asyncio.create_task(searcher(n)) for n in range(searchers)]
    started = time.perf_counter()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    elapsed = time.perf_counter() - started
    writing = False
    searches = sum(await asyncio.gather(*tasks))
    async with httpx.AsyncClient(base_url=url, timeout=60,
                                 headers={"Authorization": f"Bearer {key}"}) as http:
        stats = (await http.get("/v1/stats", params={"namespace": "mixed"})).json()
    return {"writers": writers, "per_writer": per_writer, "searchers": searchers,
            "writes": len(times), "errors": errors, "searches": searches,
            "stored": stats.get("memories"), "lost": writers * per_writer - int(
                stats.get("memories") or 0),
            "write_req_per_s": round(len(times) / elapsed, 1),
            **{f"write_{k}": v for k, v in _latency(times).items()}}


def _stall(url: str, key: str, admin: str, max_seconds: float) -> dict[str, Any]:
    """The longest a write waits while a consolidation of the stored memories runs."""
    times: list[float] = []
    result: dict[str, Any] = {}

    def consolidate() -> None:
        t0 = time.perf_counter()
        r = httpx.post(f"{url}/v1/consolidation/runs", json={"namespace": "bench"},
                       headers={"Authorization": f"Bearer {admin}"}, timeout=3600)
        result["run_seconds"] = round(time.perf_counter() - t0, 1)
        json_body = r.headers.get("content-type", "").startswith("application/json")
        body: dict[str, Any] = (r.json() if json_body else
                                {"status": f"HTTP {r.status_code}: {r.text[:120]}"})
        result["run_status"] = body.get("status")
        report = body.get("report") or {}
        result["candidates"] = report.get("candidates")
        result["summaries"] = report.get("summaries")

    worker = threading.Thread(target=consolidate)
    worker.start()
    deadline = time.monotonic() + max_seconds
    with httpx.Client(base_url=url, timeout=3600,
                      headers={"Authorization": f"Bearer {key}"}) as http:
        i = 0
        while True:  # at least one write, then as long as the run goes on
            t0 = time.perf_counter()
            http.post("/v1/memories", json={"namespace": "stall", "content": f"stall {i}"})
            times.append(time.perf_counter() - t0)
            i += 1
            if not worker.is_alive() or time.monotonic() > deadline:
                break
    worker.join()
    result["writes_during_run"] = len(times)
    result["longest_write_ms"] = round(max(times) * 1000, 1) if times else None
    result.update({f"write_{k}": v for k, v in _latency(times).items()} if times else {})
    return result


def run_api_load(n: int = 10_000, *, clients: int = 8, seconds: float = 10.0,
                 max_requests: int = 5000, progress: Any = print, writers: int = 8,
                 per_writer: int = 200, searchers: int = 4,
                 stall_seconds: float = 600.0, stall: bool = True,
                 quantized: bool = False, float_queries: bool = False,
                 float_batches: bool = False, baseline: bool = True,
                 against: str | None = None, against_n: int = 10_000,
                 listeners: int = 0) -> dict[str, Any]:
    """``baseline``: before the server starts, the same store's retrievals in one process
    without HTTP (``in_process``): the hour's speed, beside which the REST rate is read.
    ``listeners``: the write phase again with that many idle ``/v1/events`` listeners of
    the written namespace, and once more without (``bench.listeners``).
    ``against``: another install's Python, whose server at ``against_n`` memories is driven
    the same way before this one's (``api_against``: issue 14's ratios in one run)."""
    from datetime import UTC, datetime, timedelta

    from graphmem.bench import api_against  # it imports this module's load generator

    if against is not None:
        api_against.check(against)

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        progress(f"filling {n} memories (stored 40 days ago: consolidation candidates) ...")
        then = datetime.now(UTC) - timedelta(days=40)
        with GraphMemory.open(data, embedder=RandomEmbedder(), clock=lambda: then) as mem:
            records = synthetic.records(n)
            for i in range(0, n, 1000):
                mem.store_many(records[i:i + 1000], namespace="bench")
        keys = KeyStore(Path(tmp) / "keys.db")
        key = keys.create(["bench", "mixed", "stall"], "writer")[1]
        admin = keys.create(["bench"], "admin")[1]
        inproc = None
        if baseline:  # before the server owns the folder: the store its searches will see
            progress(f"the hour's baseline: {clients} threads in one process, no HTTP ...")
            inproc = in_process.measure(
                data, server_env(Path(tmp) / "keys.db", quantized, float_queries,
                                 float_batches),
                threads=clients, seconds=seconds, max_requests=max_requests)
        other = (api_against.measure(against, against_n, clients=clients, seconds=seconds,
                                     max_requests=max_requests, progress=progress)
                 if against is not None else None)
        port = _port()
        url = f"http://127.0.0.1:{port}"
        server = _serve(data, Path(tmp) / "keys.db", port, Path(tmp) / "server.log",
                        quantized, float_queries, float_batches)
        try:
            _wait_ready(url, server, Path(tmp) / "server.log")
            httpx.post(f"{url}/v1/search", json={"namespace": "bench", "query": "warm up"},
                       headers={"Authorization": f"Bearer {key}"}, timeout=120)
            result: dict[str, Any] = {"n": n, "clients": clients, "seconds": seconds,
                                      "server": "graphmem serve (a process of its own)",
                                      "embedding_quantized": quantized,
                                      "float_queries": float_queries,
                                      "float_batches": float_batches}
            for kind in ("search", "search_distinct", "write"):
                progress(f"{kind}: {clients} clients for {seconds:g} s ...")
                result[kind] = _drive(url, key, kind, clients, seconds, max_requests,
                                      server_pid=server.pid)
            if listeners:
                from graphmem.bench.listeners import with_listeners

                result["listeners"] = with_listeners(
                    lambda: _drive(url, key, "write", clients, seconds, max_requests,
                                   server_pid=server.pid),
                    url, key, "bench", "stall", listeners, progress)
            if inproc is not None:
                result["in_process"] = inproc
                result["rest_over_in_process"] = ratio(
                    result["search_distinct"]["req_per_s"], inproc["req_per_s"])
            if other is not None:
                result["against"] = other
                result["over_against"] = ratio(result["search_distinct"]["req_per_s"],
                                               other["search_distinct"]["req_per_s"])
            progress(f"mixed: {writers} writers x {per_writer} and {searchers} searchers ...")
            result["mixed"] = asyncio.run(_mixed(url, key, writers, per_writer, searchers))
            if stall:
                progress(f"write stall: writes while {n} candidates consolidate ...")
                result["consolidation_stall"] = _stall(url, key, admin, stall_seconds)
        finally:
            server.terminate()  # uvicorn shuts down; the store closes (queued accesses first)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
    return result


def _serve(data: Path, keys: Path, port: int, log: Path, quantized: bool = False,
           float_queries: bool = False,
           float_batches: bool = False) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", "from graphmem.cli import main; main()", "serve",
             "--data", str(data), "--port", str(port)],
            env=server_env(keys, quantized, float_queries, float_batches),
            stdout=out, stderr=subprocess.STDOUT)


def server_env(keys: Path, quantized: bool, float_queries: bool = False,
               float_batches: bool = False) -> dict[str, str]:
    """The benchmark server's environment: its keys, no scheduler, the model chosen."""
    # random vectors fill the store and the real model embeds the queries (ADR 0025's check
    # would refuse that mix: it is the benchmark's shortcut, not a user's store)
    return {**os.environ, "GRAPHMEM_KEYS_FILE": str(keys), "GRAPHMEM_SCHEDULER": "false",
            "GRAPHMEM_EMBEDDING__VERIFY_STORE": "false",
            "GRAPHMEM_EMBEDDING__QUANTIZE": "true" if quantized else "false",
            "GRAPHMEM_TUNING__QUANTIZE_QUERIES": "false" if float_queries else "true",
            "GRAPHMEM_TUNING__BF16_BATCHES": "false" if float_batches else "true",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _wait_ready(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the server did not start within 120 s")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _row(route: str, x: dict[str, Any]) -> str:
    """One route's line of the table."""
    return (f"| {route} | {x['requests']} | {x['errors']} | {x['req_per_s']} | "
            f"{x['p50_ms']} | {x['p95_ms']} | {x['p99_ms']} | {x.get('cache_hits', '-')} | "
            f"{x.get('server_cpu_ms_per_request', '-')} | "
            f"{x.get('load_cpu_ms_per_request', '-')} |")


def table(r: dict[str, Any]) -> str:
    model = " (int8 model)" if r.get("embedding_quantized") else ""
    lines = [f"REST API on loopback, {r['n']:,} memories stored, {r['clients']} clients, "
             f"{r['seconds']:g} s per route{model}", "",
             "| route | requests | errors | req/s | p50 ms | p95 ms | p99 ms | cache hits "
             "| server CPU ms/request | load generator CPU ms/request |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for kind, route in (("search", "POST /v1/search (200 queries, repeated)"),
                        ("search_distinct", "POST /v1/search (every query new)"),
                        ("write", "POST /v1/memories")):
        if kind in r:
            lines.append(_row(route, r[kind]))
    if r.get("listeners"):
        ls = r["listeners"]
        lines += ["", f"POST /v1/memories and GET /v1/events listeners, "
                  f"{len(ls['rounds']['none'])} rounds (medians)", "",
                  "| listeners | writes | p50 ms | p95 ms | server CPU ms/write |",
                  "|---|---:|---:|---:|---:|"]
        for name, what in (("none", "none"),
                           ("idle", f"{ls['listeners']} idle (another namespace)"),
                           ("receiving", f"{ls['listeners']} receiving every write "
                                         f"({ls['receiving']['events_read']} events read)")):
            x = ls[name]
            lines.append(f"| {what} | {x['requests']} | {x['p50_ms']} | {x['p95_ms']} | "
                         f"{x['server_cpu_ms_per_request']} |")
    b, o = r.get("in_process"), r.get("against")
    if b:
        lines.append(f"| retrieve in one process, no HTTP (every query new; {b['threads']} "
                     f"threads, before the server) | {b['requests']} | 0 | {b['req_per_s']} | "
                     f"{b['p50_ms']} | {b['p95_ms']} | {b['p99_ms']} | - | "
                     f"{b['cpu_ms_per_request']} | - |")
    if o:
        lines.append(_row(f"the same route served by {o['python']} (graphmem "
                          f"{o['version']}; {o['n']:,} memories, every query new, before "
                          "this server)", o["search_distinct"]))
    if b or o:
        lines.append("")
    if b:
        lines.append(f"REST / in process, every query new: {r['rest_over_in_process']}")
    if o:
        lines.append(f"REST at {r['n']:,} / the other install at {o['n']:,}, every query "
                     f"new: {r['over_against']}")
    if r.get("listeners"):
        ls = r["listeners"]
        lines += ["", f"Write with {ls['listeners']} listeners / without (median of the "
                  f"rounds' ratios): idle p50 {ls['idle_p50_over_none']}, p95 "
                  f"{ls['idle_p95_over_none']}; receiving every write p50 "
                  f"{ls['receiving_p50_over_none']}, p95 {ls['receiving_p95_over_none']}"]
    m = r.get("mixed")
    if m:
        lines += ["", f"Mixed: {m['writers']} writers x {m['per_writer']} with "
                  f"{m['searchers']} searchers ({m['searches']} searches): {m['writes']} "
                  f"writes, {m['errors']} errors, {m['lost']} lost; write "
                  f"{m['write_req_per_s']} req/s, p50 {m['write_p50_ms']} / p95 "
                  f"{m['write_p95_ms']} / p99 {m['write_p99_ms']} ms"]
    c = r.get("consolidation_stall")
    if c:
        lines += ["", f"Consolidation of {c.get('candidates')} candidates "
                  f"({c.get('run_seconds')} s, {c.get('run_status')}): {c['writes_during_run']} "
                  f"writes meanwhile, longest {c['longest_write_ms']} ms, p95 "
                  f"{c.get('write_p95_ms')} ms"]
    return "\n".join(lines)
