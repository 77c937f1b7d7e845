"""ANN recall: FalkorDB's HNSW vector search against exact search, at N memories.

Stores N synthetic memories (real or random embeddings) through the Cypher adapter on a local
FalkorDB server, then for each query compares ``vector_topk(k)`` with the exact top-k by
cosine (numpy): recall@k, and the latency of the vector search. The HNSW parameters are the
ones in ``cypher/schema/vector_content.falkordb.cypher``
(ADR 0003 has the parameter sweep that chose them).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.bench import synthetic
from graphmem.bench.scale import RandomEmbedder
from graphmem.bench.stats import latency as _latency
from graphmem.engine.embedding import make_embedder
from graphmem.models import Memory
from graphmem.rules.text import content_hash
from graphmem.store.base import WriteBatch
from graphmem.store.graph.falkordb_conn import FalkorDBConnection
from graphmem.store.graph.falkordb_server import FalkorDBServer
from graphmem.store.graph.rows import JOIN_SEP, vector_matches
from graphmem.store.graph.store import CypherStore


def _measure(store: CypherStore, ids: list[str], vecs: np.ndarray, queries: np.ndarray,
             k: int) -> dict[str, Any]:
    """Recall of the adapter's vector_topk (which over-fetches what the join lets survive)
    and of the bare index asked for exactly k, against the exact top-k."""
    exact = np.argsort(-(queries @ vecs.T), axis=1)[:, :k]
    recalls, raw, times = [], [], []
    st = store._st("search/vector")
    for q, truth in zip(queries, exact, strict=True):
        want = {ids[j] for j in truth}
        t0 = time.perf_counter()
        got = store.vector_topk("bench", q, k)
        times.append(time.perf_counter() - t0)
        recalls.append(len({i for i, _ in got} & want) / k)
        rows = store.conn.run(st, {"label": "ContentVector", "fetch": k, "namespace": "bench",
                                   "vector": [float(x) for x in q], "statuses": ["active"],
                                   "tiers": None, "sep": JOIN_SEP})
        raw.append(len({i for i, _ in vector_matches(rows[0])} & want) / k)
    return {f"recall@{k}": round(float(np.mean(recalls)), 4),
            f"index_recall@{k}": round(float(np.mean(raw)), 4), "latency": _latency(times)}


def run_ann(n: int, *, embeddings: str = "real", queries: int = 200, k: int = 10,
            progress: Any = print) -> dict[str, Any]:
    emb = make_embedder() if embeddings == "real" else RandomEmbedder()
    texts = synthetic.texts(n)
    progress(f"embedding {n} memories ({embeddings}) ...")
    vecs = np.concatenate([emb.embed(texts[i:i + 512]) for i in range(0, n, 512)])
    qvecs = emb.embed(synthetic.queries(queries))
    with tempfile.TemporaryDirectory() as tmp, FalkorDBServer(Path(tmp)) as server:
        store = CypherStore(FalkorDBConnection(server.url, graph="ann"))
        store.open()
        ids = [f"m{i}" for i in range(n)]
        progress(f"writing {n} memories to FalkorDB ...")
        t0 = time.perf_counter()
        for i in range(0, n, 500):
            batch = [Memory(id=ids[j], namespace="bench", content=texts[j],
                            content_hash=content_hash(texts[j]), embedding=vecs[j])
                     for j in range(i, min(n, i + 500))]
            store.apply(WriteBatch("bench", memories=batch))
        write_s = time.perf_counter() - t0
        result: dict[str, Any] = {"n": n, "k": k, "embeddings": embeddings,
                                  "queries": queries, "write_memories_per_s":
                                  round(n / write_s, 1),
                                  "default": _measure(store, ids, vecs, qvecs, k)}
        progress(f"schema settings: {result['default']}")
        store.close()
    return result
