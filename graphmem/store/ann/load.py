"""One namespace's vectors, loaded on its first use: the files its last close saved when SQLite
still agrees with them (``files``), else its rows read from SQLite (mapped to files from
``TuningConfig.ann_min`` rows). Opening a store reads no vectors. SQLite stays the truth."""

from __future__ import annotations

import sqlite3

import numpy as np

from graphmem.models import Status, Tier
from graphmem.store.ann.files import RowFiles
from graphmem.store.ann.index import STATUS_CODE, TIER_CODE, Allocator, VectorIndex


def mapped(files: RowFiles, namespace: str) -> Allocator:
    """An index's allocator over the namespace's row files."""
    return lambda field, cap, old: files.matrix(namespace, field, cap, old)


def load(conn: sqlite3.Connection, namespace: str, dim: int, files: RowFiles,
         ann_min: int) -> VectorIndex:
    state = files.load(namespace, conn) if ann_min else None
    if state is not None:
        return VectorIndex(dim, state, mapped(files, namespace))
    rows = conn.execute(
        "SELECT id, tier, status, embedding, context_embedding, memories.pk FROM memories "
        "JOIN vectors ON vectors.pk = memories.pk WHERE namespace = ? ORDER BY memories.pk",
        (namespace,)).fetchall()
    n = len(rows)
    has = np.array([r[4] is not None for r in rows], dtype=bool)
    context = np.zeros((n, dim), dtype=np.float32)
    if has.any():
        context[has] = np.frombuffer(b"".join(r[4] for r in rows if r[4] is not None),
                                     dtype=np.float32).reshape(-1, dim)
    index = VectorIndex(dim, {
        "ids": [r[0] for r in rows], "pk": [r[5] for r in rows], "key": np.arange(n),
        "tier": [TIER_CODE[Tier(r[1])] for r in rows],
        "status": [STATUS_CODE[Status(r[2])] for r in rows], "has_context": has,
        "content": np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(
            n, dim).copy(), "context": context})
    if ann_min and n >= ann_min:
        index.map_rows(mapped(files, namespace))
    return index
