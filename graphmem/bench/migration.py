"""Migration benchmark: N synthetic memories (sessions, FOLLOWS edges, seeded random vectors)
written to a fresh embedded store, then copied to FalkorDB or Neo4j with ``graphmem.engine.migrate``
(which verifies counts and a sample of records field by field). Reports the copy's rate and
the verification's verdict."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from graphmem import GraphMemory
from graphmem.bench import synthetic
from graphmem.bench.engines import engine
from graphmem.bench.scale import RandomEmbedder
from graphmem.engine.migrate import migrate
from graphmem.store import make_store
from graphmem.store.sqlite.store import SQLiteStore


def run_migration(n: int, *, to: str = "neo4j", neo4j_uri: str | None = None,
                  batch: int = 1000, progress: Any = print) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="graphmem-migrate-"))
    try:
        progress(f"writing {n:,} memories to a fresh embedded store ...")
        start = time.perf_counter()
        with GraphMemory.open(tmp / "data", embedder=RandomEmbedder()) as mem:
            records = synthetic.records(n)
            for i in range(0, n, batch):
                mem.store_many(records[i:i + batch], namespace="bench")
        prepared = time.perf_counter() - start
        with engine(to, tmp, neo4j_uri=neo4j_uri) as eng:
            source, target = SQLiteStore(tmp / "data"), make_store(eng.target, eng.config)
            source.open()
            target.open()
            try:
                namespace = "bench"
                progress(f"copying to {to} ...")
                start = time.perf_counter()
                report = migrate(source, target, namespace, page=batch)
                seconds = time.perf_counter() - start
                counts = target.counts(namespace)
            finally:
                source.close()
                target.close()
        return {"n": n, "to": to, "prepare_s": round(prepared, 1), "seconds": round(seconds, 1),
                "memories_per_s": round(report.memories / seconds, 1),
                "memories": report.memories, "edges": report.edges,
                "target_memories": sum(counts.memories.values()),
                "target_edges": sum(counts.edges.values()), "sampled": report.sampled,
                "ok": report.ok, "problems": report.problems[:10]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def table(r: dict[str, Any]) -> str:
    return "\n".join([
        "| measure | value |", "|---|---|",
        f"| memories / edges copied | {r['memories']:,} / {r['edges']:,} |",
        f"| in the target | {r['target_memories']:,} / {r['target_edges']:,} |",
        f"| copy time | {r['seconds']} s ({r['memories_per_s']:,} memories/s) |",
        f"| verified | {'ok' if r['ok'] else 'FAILED'} ({r['sampled']} records compared "
        f"field by field) |",
    ])
