"""Many small namespaces (issue 46, point 6): N namespaces of PER memories each, as an agents'
service that gives each end user a namespace holds them. A fresh process opens the store
(seconds, resident memory), then asks queries in one namespace with the real query embedding
(p50 / p95, the model loaded beforehand) and reports its memory after.

The memories are written with seeded random vectors (``graphmem.testing.RandomEmbedder``:
100,000 namespaces in minutes, not an hour of embedding); only the queries use the model, so
the store's one-model check is off for the serving process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = ["billing", "deploy", "invoice", "cache", "queue", "schema", "login", "search", "alert",
         "backup"]
QUERIES = ["why did the billing job fail", "what broke after the deploy", "invoice errors",
           "the cache change", "login problems after the schema change"]


def _note(n: int, i: int) -> str:
    return (f"user {n} note {i}: the {WORDS[(n + i) % 10]} job failed after the "
            f"{WORDS[(n * 3 + i) % 10]} change")


def run_tenants(n: int, per: int, *, queries: int = 200, folder: Path | None = None,
                progress: Any = print) -> dict[str, Any]:
    from graphmem import GraphMemory
    from graphmem.testing import RandomEmbedder

    tmp = Path(tempfile.mkdtemp(prefix="graphmem-tenants-")) if folder is None else folder
    try:
        progress(f"writing {n} namespaces of {per} memories (random vectors) ...")
        start = time.perf_counter()
        with GraphMemory.open(tmp, embedder=RandomEmbedder()) as mem:
            for u in range(n):
                mem.store_many([_note(u, i) for i in range(per)], namespace=f"user-{u}")
        result: dict[str, Any] = {"namespaces": n, "per_namespace": per,
                                  "write_s": round(time.perf_counter() - start, 1)}
        progress("measuring in a fresh process: open, RSS, queries ...")
        spec = {"target": str(tmp), "namespace": f"user-{n // 2}", "queries": queries}
        child = subprocess.run([sys.executable, "-m", "graphmem.bench.tenants"],
                               input=json.dumps(spec), capture_output=True, text=True)
        if child.returncode != 0:
            raise RuntimeError(f"the serving phase failed: {child.stderr.strip()[-2000:]}")
        result.update(json.loads(child.stdout))
        return result
    finally:
        if folder is None:
            shutil.rmtree(tmp, ignore_errors=True)


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """In a fresh process: open, then queries in one namespace with the query embedding."""
    from graphmem import GraphMemory
    from graphmem.bench.stats import latency, rss_mb
    from graphmem.config import CacheConfig, EmbeddingConfig, GraphMemConfig

    config = GraphMemConfig(embedding=EmbeddingConfig(verify_store=False),
                            cache=CacheConfig(ttl_seconds=0))
    rss_before = rss_mb()
    start = time.perf_counter()
    mem = GraphMemory.open(spec["target"], config=config)
    out: dict[str, Any] = {"open_s": round(time.perf_counter() - start, 3),
                           "rss_before_open_mb": round(rss_before, 1),
                           "rss_after_open_mb": round(rss_mb(), 1)}
    mem.embedder.embed(["warm up"])  # the model loads here, not in the timed queries
    times = []
    for j in range(spec["queries"]):
        t0 = time.perf_counter()
        mem.retrieve(QUERIES[j % len(QUERIES)] + f" {j}", namespace=spec["namespace"],
                     limit=5, record_access=False)
        times.append(time.perf_counter() - t0)
    out["query_with_embedding"] = latency(times)
    out["rss_after_queries_mb"] = round(rss_mb(), 1)
    mem.close()
    return out


def table(r: dict[str, Any]) -> str:
    q = r["query_with_embedding"]
    return "\n".join([
        "| namespaces x memories | open s | RSS after open MB | query p50 / p95 ms "
        "(with embedding) | RSS after queries MB |",
        "|---|---:|---:|---:|---:|",
        f"| {r['namespaces']:,} x {r['per_namespace']} | {r['open_s']} | "
        f"{r['rss_after_open_mb']} | {q['p50_ms']} / {q['p95_ms']} | "
        f"{r['rss_after_queries_mb']} |"])


def main() -> None:
    sys.stdout.write(json.dumps(measure(json.load(sys.stdin))) + "\n")


if __name__ == "__main__":
    main()
