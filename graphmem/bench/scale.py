"""Scale benchmark: write throughput, retrieval latency at depth 0/1/2, RSS, disk, start-up.

Stores N synthetic memories (sessions, FOLLOWS and SIMILAR_TO edges, realistic text) in a
fresh store (the embedded folder, FalkorDB or Neo4j: ``engines.py``) and measures:
- embedding throughput of the model (memories and their context texts);
- write throughput without embedding (vectors precomputed) for all N, and with embedding on a
  subset (the real model in the loop);
- then, in a fresh process that only opens the store (``scale_serve``): the time to open it,
  retrieve latency p50/p95/p99 at depth 0, 1 and 2 with and without the query embedding,
  that process's resident memory, the vector top-10's recall, the hot cache; and disk use
  (a server's own memory is not counted).
``--embeddings random`` swaps the model for seeded random vectors (store costs only; use it for
100k runs on 2 cores, where embedding alone would take ~25 minutes).
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphmem import GraphMemory
from graphmem.bench import synthetic
from graphmem.bench.engines import Engine, engine
from graphmem.bench.scale_serve import serve_spec
from graphmem.config import EmbeddingConfig, TuningConfig
from graphmem.engine.embedding import Embedder, make_embedder, queries_of
from graphmem.engine.writes import context_text
from graphmem.testing import RandomEmbedder


class PrecomputedEmbedder:
    """Serves vectors computed beforehand; falls back to the wrapped embedder on a miss.

    Example:
        >>> e = PrecomputedEmbedder(RandomEmbedder())
        >>> _ = e.fill(["a", "b"]); _ = e.embed(["a", "c"]); e.misses
        1
    """

    def __init__(self, inner: Embedder, *, queries: bool = False) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.table: dict[str, np.ndarray] = {}
        self.misses = 0
        #: ``queries``: the table holds the inner embedder's query vectors (ADR 0046), and
        #: ``embed`` serves them too: such a table stands in for the query model only
        self._embed = queries_of(inner) if queries else inner.embed

    def fill(self, texts: Sequence[str], batch: int = 256) -> float:
        todo = [t for t in dict.fromkeys(texts) if t not in self.table]
        start = time.perf_counter()
        for i in range(0, len(todo), batch):
            chunk = todo[i:i + batch]
            for t, v in zip(chunk, self._embed(chunk), strict=True):
                self.table[t] = v
        return time.perf_counter() - start

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing:
            self.misses += len(missing)
            for t, v in zip(missing, self._embed(missing), strict=True):
                self.table[t] = v
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, self.dim))


class Switch:
    """An embedder whose implementation the benchmark swaps between phases.

    Example:
        >>> s = Switch(RandomEmbedder()); s.inner = PrecomputedEmbedder(RandomEmbedder())
        >>> s.embed(["a"]).shape
        (1, 384)
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dim = inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return queries_of(self.inner)(texts)


def _disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def _context_texts(records: list[dict[str, Any]]) -> list[str]:
    out = []
    for prev, cur in itertools.pairwise(records):
        if prev["session_id"] == cur["session_id"]:
            out.append(context_text(str(prev["content"]), str(cur["content"])))
    return out


def run_scale(n: int, *, embeddings: str = "real", queries: int = 200, batch: int = 1000,
              with_embedding_subset: int = 2000, folder: Path | None = None,
              store: str = "sqlite", neo4j_uri: str | None = None,
              quantized: bool = False, float_queries: bool = False,
              float_batches: bool = False, progress: Any = print) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="graphmem-bench-")) if folder is None else folder
    try:
        with engine(store, tmp, neo4j_uri=neo4j_uri) as eng:
            return _run(eng, n, embeddings=embeddings, queries=queries, batch=batch,
                        with_embedding_subset=with_embedding_subset, quantized=quantized,
                        float_queries=float_queries, float_batches=float_batches,
                        progress=progress)
    finally:
        if folder is None:
            shutil.rmtree(tmp, ignore_errors=True)


def _run(eng: Engine, n: int, *, embeddings: str, queries: int, batch: int,
         with_embedding_subset: int, quantized: bool, float_queries: bool,
         float_batches: bool, progress: Any) -> dict[str, Any]:
    base: Embedder = (RandomEmbedder() if embeddings == "random" else make_embedder(
        EmbeddingConfig(quantize=quantized), TuningConfig(quantize_queries=not float_queries,
                                                          bf16_batches=not float_batches)))
    data, store = eng.target, eng.store
    namespace = f"bench-{uuid.uuid4().hex[:8]}" if eng.disk is None else "bench"
    records = synthetic.records(n)
    pre = PrecomputedEmbedder(base)
    base.embed(["warm up"])
    texts = [str(r["content"]) for r in records]
    # context vectors are made from the memories' own (ADR 0015) unless configured as text
    ctx = _context_texts(records) if eng.config.write.context_embedding == "text" else []
    progress(f"embedding {len(texts)} memories + {len(ctx)} context texts ({embeddings}) ...")
    t_embed = pre.fill(texts + ctx)
    result: dict[str, Any] = {
        "n": n, "embeddings": embeddings, "store": store,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "embed": {"texts": len(texts) + len(ctx),
                  "texts_per_s": round((len(texts) + len(ctx)) / t_embed, 1)},
    }
    progress(f"writing {n} memories in batches of {batch} (vectors precomputed) ...")
    switch = Switch(pre)
    mem = GraphMemory.open(data, embedder=switch, config=eng.config)
    start = time.perf_counter()
    for i in range(0, n, batch):
        mem.store_many(records[i:i + batch], namespace=namespace)
    t_write = time.perf_counter() - start
    stats = mem.stats(namespace=namespace)
    result["write"] = {"batch": batch, "seconds": round(t_write, 2),
                       "memories_per_s_without_embedding": round(n / t_write, 1),
                       "edges": stats["edges"], "misses": pre.misses}
    if embeddings == "real" and with_embedding_subset > 0:
        subset = synthetic.records(min(n, with_embedding_subset), seed=7)
        switch.inner = base
        start = time.perf_counter()
        for i in range(0, len(subset), batch):
            mem.store_many(subset[i:i + batch], namespace=f"{namespace}-embedded")
        t = time.perf_counter() - start
        result["write"]["memories_per_s_with_embedding"] = round(len(subset) / t, 1)
        result["write"]["with_embedding_subset"] = len(subset)
        switch.inner = pre
    wait = getattr(mem.backend, "wait_for_ann", None)
    if wait is not None:  # the embedded store's product codes, if the namespace earns them
        start = time.perf_counter()
        wait()
        result["write"]["ann_build_wait_s"] = round(time.perf_counter() - start, 2)
    start = time.perf_counter()
    mem.close()
    result["close_s"] = round(time.perf_counter() - start, 3)

    # the serving half in a process of its own: this one holds every pre-computed vector
    spec = serve_spec(data, eng.config, namespace, embeddings, queries, quantized,
                      float_queries)
    progress("measuring in a fresh process: open, retrieve at depth 0/1/2, memory, recall ...")
    child = subprocess.run([sys.executable, "-m", "graphmem.bench.scale_serve"],
                           input=json.dumps(spec), capture_output=True, text=True)
    if child.returncode != 0:
        raise RuntimeError(f"the serving phase failed: {child.stderr.strip()[-2000:]}")
    result.update(json.loads(child.stdout))
    if eng.disk is not None:  # a server's RSS is its own process: disk is its folder
        result["disk_mb"] = round(_disk_mb(eng.disk), 1)
        result["disk_mb_per_100k"] = round(result["disk_mb"] * 100_000 / n, 1)
    return result


def table(r: dict[str, Any]) -> str:
    w = r["write"]
    rows = [
        ("memories", f"{r['n']:,} ({r['embeddings']} embeddings, {r.get('store', 'sqlite')})"),
        ("edges", ", ".join(f"{k} {v:,}" for k, v in w["edges"].items() if v)),
        ("embedding throughput", f"{r['embed']['texts_per_s']:,} texts/s"),
        ("write, without embedding", f"{w['memories_per_s_without_embedding']:,} memories/s"),
    ]
    if "memories_per_s_with_embedding" in w:
        rows.append(("write, with embedding",
                     f"{w['memories_per_s_with_embedding']:,} memories/s"))
    rows.append(("embed one query p50 / p95",
                 f"{r['embed_query']['p50_ms']} / {r['embed_query']['p95_ms']} ms"))
    for depth, d in r["retrieve"].items():
        a, b = d["with_query_embedding"], d["without_query_embedding"]
        rows.append((f"retrieve {depth.replace('_', ' ')} p50 / p95 / p99",
                     f"{a['p50_ms']} / {a['p95_ms']} / {a['p99_ms']} ms "
                     f"(without query embedding {b['p50_ms']} / {b['p95_ms']} / {b['p99_ms']})"))
    if "hot_cache" in r:
        h = r["hot_cache"]
        rows.append(("hot cache: first ask / repeat p50 / p95 (depth 1)",
                     f"{h['first']['p50_ms']} / {h['first']['p95_ms']} ms -> "
                     f"{h['repeat']['p50_ms']} / {h['repeat']['p95_ms']} ms "
                     f"({h['hits']} hits, {h['misses']} misses)"))
    if "ann_recall@10" in r:
        rows.append(("vector top-10 recall vs exact",
                     f"{r['ann_recall@10']} ({r.get('vector_index', 'exact')} index)"))
    rows += [("RSS after queries / peak", f"{r['rss_mb']} / {r['peak_rss_mb']} MB"),
             ("disk", f"{r['disk_mb']} MB ({r['disk_mb_per_100k']} MB per 100k)"
              if "disk_mb" in r else "not seen (an external server)"),
             ("start-up (open store)", f"{r['startup_s']} s"
              + (f"; first retrieve {r['first_retrieve_s']} s" if "first_retrieve_s" in r
                 else ""))]
    width = max(len(k) for k, _ in rows)
    lines = [f"| {'measure'.ljust(width)} | value |", f"|{'-' * (width + 2)}|-------|"]
    lines += [f"| {k.ljust(width)} | {v} |" for k, v in rows]
    return "\n".join(lines)
