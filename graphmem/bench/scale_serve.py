"""The serving half of the scale benchmark, in a process of its own.

The write half (``scale.py``) fills a store and closes it; this opens it in a fresh process
and measures what an agent's server would see: the time to open the store, the query
embedding, retrieval at depth 0/1/2 with and without the query embedding, this process's
resident memory, the vector top-10's recall against an exhaustive search, and the hot cache.
The benchmark process itself holds the synthetic records and every pre-computed vector
(~3 GB at 1M), which is not the store's memory.

Run as ``python -m graphmem.bench.scale_serve`` with a JSON spec on stdin (``serve_spec``);
it prints the JSON result.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from graphmem import GraphMemory
from graphmem.bench import synthetic
from graphmem.bench.stats import latency, rss_mb
from graphmem.config import CacheConfig, EmbeddingConfig, GraphMemConfig, TuningConfig
from graphmem.engine.embedding import Embedder, queries_of
from graphmem.engine.long_lived import settle


def serve_spec(target: str, config: GraphMemConfig, namespace: str, embeddings: str,
               queries: int, quantized: bool, float_queries: bool = False) -> dict[str, Any]:
    """What the child needs (JSON): the store, its config, the namespace, the embedder.

    Example:
        >>> serve_spec("/tmp/x", GraphMemConfig(), "bench", "random", 10, False)["queries"]
        10
    """
    store = config.store
    if store.neo4j_password is not None or store.falkordb_password is not None:
        raise ValueError("the serving phase does not carry passwords: use a local server")
    return {"target": target, "config": config.model_dump(mode="json"),
            "namespace": namespace, "embeddings": embeddings, "queries": queries,
            "quantized": quantized, "float_queries": float_queries}


def _embedder(spec: dict[str, Any]) -> Embedder:
    if spec["embeddings"] == "random":
        from graphmem.bench.scale import RandomEmbedder

        return RandomEmbedder()
    from graphmem.engine.embedding import make_embedder

    return make_embedder(EmbeddingConfig(quantize=spec["quantized"]),
                         TuningConfig(quantize_queries=not spec.get("float_queries", False)))


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    from graphmem.bench.scale import PrecomputedEmbedder, Switch

    base = _embedder(spec)
    base.embed(["warm up"])
    namespace = spec["namespace"]
    config = GraphMemConfig.model_validate(spec["config"])
    # the main numbers are uncached: each query is asked twice (with and without its
    # embedding), which the hot cache would otherwise answer; its effect is measured apart
    uncached = config.model_copy(update={"cache": CacheConfig(ttl_seconds=0)})
    switch = Switch(base)
    start = time.perf_counter()
    mem = GraphMemory.open(spec["target"], embedder=switch, config=uncached)
    result: dict[str, Any] = {"startup_s": round(time.perf_counter() - start, 3),
                              "rss_after_open_mb": round(rss_mb(), 1)}
    # the embedded store loads a namespace's vectors on its first use (ADR 0068)
    start = time.perf_counter()
    mem.retrieve("a first question", namespace=namespace)
    result["first_retrieve_s"] = round(time.perf_counter() - start, 3)
    wait = getattr(mem.backend, "wait_for_ann", None)
    if wait is not None:  # a build the open started (codes missing or out of date)
        start = time.perf_counter()
        wait()
        result["ann_wait_after_open_s"] = round(time.perf_counter() - start, 2)
    settle()  # as `graphmem serve` does after start-up (the model is loaded above)
    states = getattr(mem.backend, "ann_states", None)
    result["vector_index"] = (states() if states is not None else {}).get(namespace, "exact")
    qs = synthetic.queries(spec["queries"])
    qpre = PrecomputedEmbedder(base, queries=True)
    qpre.fill(qs)
    t_q = []
    embed_query = queries_of(base)  # what a retrieval pays: the query model (ADR 0046)
    for q in qs[:50]:
        t0 = time.perf_counter()
        embed_query([q])
        t_q.append(time.perf_counter() - t0)
    result["embed_query"] = latency(t_q)
    result["query_model"] = str(getattr(base, "query_model_file", None) or "")
    result["retrieve"] = {}
    for depth in (0, 1, 2):
        total, core = [], []
        for q in qs:
            switch.inner = base
            t0 = time.perf_counter()
            mem.retrieve(q, namespace=namespace, depth=depth)
            total.append(time.perf_counter() - t0)
            switch.inner = qpre
            t0 = time.perf_counter()
            mem.retrieve(q, namespace=namespace, depth=depth)
            core.append(time.perf_counter() - t0)
        result["retrieve"][f"depth_{depth}"] = {"with_query_embedding": latency(total),
                                                "without_query_embedding": latency(core)}
        sys.stderr.write(f"depth {depth}: {result['retrieve'][f'depth_{depth}']}\n")
    # memory before the recall check, whose exhaustive search reads every vector
    result["rss_mb"] = round(rss_mb(), 1)
    result["rss_anon_mb"] = round(rss_mb("RssAnon"), 1)
    result["rss_file_mb"] = round(rss_mb("RssFile"), 1)
    # VmHWM, not getrusage's ru_maxrss: that survives fork and exec, so it would report the
    # benchmark process's peak (its pre-computed vectors) as this one's
    result["peak_rss_mb"] = round(rss_mb("VmHWM"), 1)
    result["ann_recall@10"] = ann_recall(mem, namespace, [qpre.table[q] for q in qs[:100]])
    mem.close()
    switch.inner = base
    with GraphMemory.open(spec["target"], embedder=switch, config=config) as mem:
        result["hot_cache"] = hot_cache(mem, list(dict.fromkeys(qs))[:100], namespace)
    return result


def _exhaustive(mem: GraphMemory, namespace: str) -> Callable[[np.ndarray, int], set[str]]:
    """The exact top-k over the store's own vectors: the embedded store scans its rows; a
    graph engine's vectors are read out once."""
    index = getattr(mem.backend, "_vectors", {}).get(namespace)
    if index is not None:
        return lambda q, k: {i for i, _ in index.topk(q, k, exact=True)}
    ids, rows = [], []
    for page in mem.backend.iter_memories(namespace, embeddings=True):
        for m in page:
            if m.embedding is not None and m.status.value == "active":
                ids.append(m.id)
                rows.append(m.embedding)
    matrix = np.stack(rows)
    return lambda q, k: {ids[j] for j in np.argsort(-(matrix @ q))[:k]}


def ann_recall(mem: GraphMemory, namespace: str, queries: list[np.ndarray],
               k: int = 10) -> float:
    """The store's vector top-k against an exhaustive search over the same vectors."""
    exact = _exhaustive(mem, namespace)
    hits = [len(exact(q, k) & {i for i, _ in mem.backend.vector_topk(namespace, q, k)}) / k
            for q in queries]
    return round(float(np.mean(hits)), 4)


def hot_cache(mem: GraphMemory, qs: list[str], namespace: str) -> dict[str, Any]:
    """Each (distinct) query twice in a row at depth 1, query embedding included: the first
    is answered by the pipeline, the repeat by the hot cache (seed 003); then one write and
    the query again (the write must clear the namespace's answers: a miss)."""
    first, repeat = [], []
    for q in qs:
        t0 = time.perf_counter()
        mem.retrieve(q, namespace=namespace, depth=1)
        t1 = time.perf_counter()
        mem.retrieve(q, namespace=namespace, depth=1)
        first.append(t1 - t0)
        repeat.append(time.perf_counter() - t1)
    before = mem.stats(namespace=namespace)["cache"]
    mem.store("a write that clears the cached answers", namespace=namespace)
    t0 = time.perf_counter()
    mem.retrieve(qs[0], namespace=namespace, depth=1)
    after_write = time.perf_counter() - t0
    stats = mem.stats(namespace=namespace)["cache"]
    return {"first": latency(first), "repeat": latency(repeat),
            "after_write_ms": round(after_write * 1000, 2),
            "hits": stats["hits"], "misses": stats["misses"],
            "miss_after_write": stats["misses"] == before["misses"] + 1}


def main() -> None:
    sys.stdout.write(json.dumps(measure(json.load(sys.stdin))) + "\n")


if __name__ == "__main__":
    main()
