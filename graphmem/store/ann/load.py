"""The SQLite store's in-memory vector indexes, built at ``open``: a large namespace maps the
row files its last close saved when SQLite agrees with them (ADR 0020); the others, and any
whose files do not serve, are read from SQLite (into files when past ``mapped_rows_min``).
SQLite stays the source of truth; nothing here writes to it."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.config import StoreConfig
from graphmem.models import Status, Tier
from graphmem.store.ann.row_files import RowFiles
from graphmem.store.ann.vectors import STATUS_CODE, TIER_CODE, Allocator, VectorIndex

log = logging.getLogger(__name__)

#: rows fetched at a time while reading vectors: in bulk, ~4x faster than row by row
_FETCH = 20_000


def namespaces(conn: sqlite3.Connection) -> list[str]:
    """Every namespace with memories, one index seek each (a loose index scan)."""
    out: list[str] = []
    row = conn.execute("SELECT min(namespace) FROM memories").fetchone()
    while row is not None and row[0] is not None:
        out.append(row[0])
        row = conn.execute("SELECT min(namespace) FROM memories WHERE namespace > ?",
                           (row[0],)).fetchone()
    return out


def mapped(files: RowFiles, namespace: str) -> Allocator:
    """An index's allocator over the namespace's row files."""
    return lambda field, cap, old: files.matrix(namespace, field, cap, old)


def load_indexes(conn: sqlite3.Connection, folder: Path, dim: int, config: StoreConfig,
                 files: RowFiles) -> dict[str, VectorIndex]:
    """namespace -> its vector index, from the row files or from SQLite (module docstring)."""
    indexes: dict[str, VectorIndex] = {}
    unread: list[str] = []
    for ns in namespaces(conn):
        arrays = files.load(ns, conn) if config.mapped_rows_min else None
        if arrays is not None:
            indexes[ns] = VectorIndex.from_arrays(dim, arrays, mapped(files, ns))
        else:
            unread.append(ns)
    from_files = len(indexes)
    if unread:
        big = config.mapped_rows_min
        if big:
            for ns, count in conn.execute(
                    "SELECT namespace, count(*) FROM memories GROUP BY namespace"):
                if ns in unread and count >= big:
                    indexes[ns] = VectorIndex(dim, alloc=mapped(files, ns))
        # all at once in pk order when nothing was mapped, else namespace by namespace
        # (a scan in pk order would read the mapped namespaces' pages too)
        groups: list[str | None] = [None] if from_files == 0 else list(unread)
        for only in groups:
            cursor = conn.execute(
                "SELECT namespace, id, tier, status, embedding, context_embedding, "
                "memories.pk FROM memories JOIN vectors ON vectors.pk = memories.pk "
                + ("" if only is None else "WHERE namespace = ? ")
                + "ORDER BY memories.pk",
                () if only is None else (only,))
            while rows := cursor.fetchmany(_FETCH):
                by_ns: dict[str, list[Any]] = {}
                for row in rows:
                    by_ns.setdefault(row[0], []).append(row)
                for name, part in by_ns.items():
                    index = indexes.get(name)
                    if index is None:
                        index = indexes[name] = VectorIndex(dim)
                    _extend(index, dim, part)
    log.info("opened %s: %d namespaces (%d from mapped rows)", folder, len(indexes),
             from_files)
    return indexes


def _extend(index: VectorIndex, dim: int, rows: list[Any]) -> None:
    """Rows of (namespace, id, tier, status, embedding, context_embedding, pk) appended."""
    content = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32)
    has = np.array([r[5] is not None for r in rows], dtype=bool)
    context = np.zeros((len(rows), dim), dtype=np.float32)
    if has.any():
        context[has] = np.frombuffer(b"".join(r[5] for r in rows if r[5] is not None),
                                     dtype=np.float32).reshape(-1, dim)
    index.extend(
        [r[1] for r in rows], [r[6] for r in rows], content.reshape(-1, dim),
        context, has, np.array([TIER_CODE[Tier(r[2])] for r in rows], dtype=np.int8),
        np.array([STATUS_CODE[Status(r[3])] for r in rows], dtype=np.int8))
