"""The float32 rows of a large namespace in memory-mapped files beside SQLite (ADR 0020).

A namespace with at least ``StoreConfig.mapped_rows_min`` vectors keeps its two vector
matrices (content, context) in files under ``<data>/vectors/`` mapped into memory, instead of
in the process's own memory: opening the store maps them instead of reading every vector from
SQLite (1M memories: ~10 s), and the pages are the page cache's, which the kernel can drop
and share; a query touches only the rows it re-scores.

The files are a cache of SQLite, as the product codes are. At ``close`` the rows are flushed
and the rest of the index (ids, pks, tiers, statuses, which rows have a context vector) is
written beside them with a sidecar naming the namespace's *rows epoch*, a counter that every
transaction changing what the index holds bumps. At ``open`` the files are used only when the
sidecar's epoch, the row count and a sample of rows agree with SQLite; the sidecar is then
deleted before any write can change the files, so after a crash nothing vouches for them and
they are rebuilt from SQLite.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

FORMAT = "graphmem-rows-1"
#: rows compared with SQLite at open: files of another store or database copy differ in nearly
#: every row, so a few suffice; each is ~3 random page reads, ~28 ms on a cold disk (32 rows:
#: 0.9 s of a 3.4 s cold open at 1M)
_SAMPLE = 8
FIELDS = ("content", "context")


def epoch_key(namespace: str) -> str:
    return "rows_epoch:" + namespace


def read_epoch(conn: sqlite3.Connection, namespace: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (epoch_key(namespace),)).fetchone()
    return int(row[0]) if row else 0


def bump_epoch(conn: sqlite3.Connection, namespace: str) -> None:
    """In the writing transaction: the namespace's saved rows are out of date from now on."""
    conn.execute("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE "
                 "SET value = CAST(value AS INTEGER) + 1", (epoch_key(namespace),))


class RowFiles:
    """The mapped matrices of one store's large namespaces, and their save / load.

    Example:
        >>> import tempfile
        >>> files = RowFiles(Path(tempfile.mkdtemp()), dim=4)  # no I/O
        >>> m = files.matrix("ops", "content", 8)
        >>> m.shape, m.dtype.name, float(m.sum())
        ((8, 4), 'float32', 0.0)
        >>> files.matrix("ops", "content", 16, old=m).shape
        (16, 4)
    """

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder / "vectors"
        self.dim = dim

    def _stem(self, namespace: str) -> Path:
        return self.folder / hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()

    def _path(self, namespace: str, suffix: str) -> Path:
        stem = self._stem(namespace)
        return stem.with_name(f"{stem.name}.{suffix}")

    def matrix(self, namespace: str, field: str, capacity: int,
               old: np.ndarray | None = None) -> np.ndarray:
        """The field's rows mapped from its file, ``capacity`` rows long (the file grows,
        sparse, to fit; its rows stay). ``old``: the mapping it replaces, whose rows are copied
        in when it is not already this file's (a namespace moving out of memory)."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self._path(namespace, f"{field}.f32")
        size = capacity * self.dim * 4
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < size:
                os.ftruncate(fd, size)
        finally:
            os.close(fd)
        mapped = _random_access(np.memmap(path, dtype=np.float32, mode="r+",
                                          shape=(capacity, self.dim)))
        if old is not None and not _maps(old, path):
            mapped[:len(old)] = old
        return mapped

    def save(self, namespace: str, epoch: int, arrays: dict[str, Any], memories: int) -> None:
        """Flush the rows and write the index beside them, the sidecar last (after ``close``
        of the builds: nothing writes meanwhile). ``memories``: the namespace's count in
        SQLite (``count_memories``), checked at the next open."""
        try:
            for field in FIELDS:
                matrix = arrays[field]
                if isinstance(matrix, np.memmap):
                    matrix.flush()
            n = len(arrays["ids"])
            rows = self._path(namespace, "rows.npz")
            tmp = rows.with_name(rows.name + ".tmp")
            with open(tmp, "wb") as fh:
                np.savez(fh, ids=np.frombuffer("\n".join(arrays["ids"]).encode(), np.uint8),
                         pk=arrays["pk"][:n], tier=arrays["tier"][:n],
                         status=arrays["status"][:n], has_context=arrays["has_context"][:n])
            os.chmod(tmp, 0o600)
            os.replace(tmp, rows)
            side = self._path(namespace, "json")
            tmp = side.with_name(side.name + ".tmp")
            tmp.write_text(json.dumps({
                "format": FORMAT, "namespace": namespace, "epoch": epoch, "dim": self.dim,
                "rows": n, "memories": memories,
                "capacity": int(arrays["content"].shape[0])}))
            os.chmod(tmp, 0o600)
            os.replace(tmp, side)
        except OSError as exc:  # a cache: the next open reads the rows from SQLite
            log.warning("could not save a namespace's mapped rows: %s", exc)

    def load(self, namespace: str, conn: sqlite3.Connection) -> dict[str, Any] | None:
        """The arrays saved at the last close, when SQLite still agrees with them; the
        sidecar is deleted (the files are about to change). None: read SQLite instead."""
        side = self._path(namespace, "json")
        try:
            meta = json.loads(side.read_text())
        except (OSError, ValueError):
            return None
        try:
            side.unlink()  # from here on nothing vouches for the files (writes, a crash)
            if (meta.get("format") != FORMAT or meta.get("namespace") != namespace
                    or meta.get("dim") != self.dim
                    or meta.get("epoch") != read_epoch(conn, namespace)):
                log.info("mapped rows of a namespace are out of date: reading SQLite")
                return None
            capacity, n = int(meta["capacity"]), int(meta["rows"])
            with np.load(self._path(namespace, "rows.npz")) as saved:
                arrays: dict[str, Any] = {k: saved[k] for k in (
                    "pk", "tier", "status", "has_context")}
                blob = saved["ids"].tobytes().decode()
            arrays["ids"] = blob.split("\n") if n else []
            for field in FIELDS:
                path = self._path(namespace, f"{field}.f32")
                if path.stat().st_size < capacity * self.dim * 4:
                    raise ValueError(f"{path.name} is shorter than its sidecar says")
                arrays[field] = _random_access(np.memmap(
                    path, dtype=np.float32, mode="r+", shape=(capacity, self.dim)))
        except (OSError, ValueError, KeyError) as exc:
            log.warning("mapped rows not used (%s): reading SQLite", exc)
            return None
        if len(arrays["ids"]) != n or len(arrays["pk"]) != n or n > capacity \
                or meta.get("memories") != count_memories(conn, namespace) \
                or not self._agrees(conn, namespace, arrays):
            log.warning("mapped rows disagree with the database: reading SQLite")
            return None
        return arrays

    @staticmethod
    def _agrees(conn: sqlite3.Connection, namespace: str, arrays: dict[str, Any]) -> bool:
        """A sample of rows (id, vectors) is SQLite's."""
        n = len(arrays["ids"])
        if n == 0:
            return True
        rows = np.random.default_rng(n).choice(n, size=min(_SAMPLE, n), replace=False)
        pks = [int(arrays["pk"][r]) for r in rows]
        stored = {pk: (id_, emb, ctx) for pk, id_, emb, ctx in conn.execute(
            f"SELECT memories.pk, id, embedding, context_embedding FROM memories JOIN vectors "
            f"ON vectors.pk = memories.pk WHERE namespace = ? "
            f"AND memories.pk IN ({', '.join('?' * len(pks))})", (namespace, *pks))}
        for r, pk in zip(rows.tolist(), pks, strict=True):
            got = stored.get(pk)
            if got is None or got[0] != arrays["ids"][r] \
                    or got[1] != arrays["content"][r].tobytes():
                return False
            has = bool(arrays["has_context"][r])
            if has != (got[2] is not None) or (has and got[2] != arrays["context"][r].tobytes()):
                return False
        return True


def count_memories(conn: sqlite3.Connection, namespace: str) -> int:
    """The namespace's memories in SQLite, from the counts the triggers keep (schema 9, ADR
    0034): counting the index had read 1M entries at every open and close (0.08 s warm)."""
    return int(conn.execute("SELECT coalesce(sum(n), 0) FROM memory_counts WHERE namespace = ?",
                            (namespace,)).fetchone()[0])


def _random_access(matrix: np.memmap) -> np.memmap:
    """Rows are read one by one (re-scoring candidates): no read-ahead, and no fault-around
    mapping the 64 KB around each row touched into the process's resident memory."""
    mapped = getattr(matrix, "_mmap", None)
    if mapped is not None and hasattr(mmap, "MADV_RANDOM"):
        mapped.madvise(mmap.MADV_RANDOM)
    return matrix


def release(matrix: np.ndarray) -> None:
    """Drop this process's mappings of a matrix's pages (``MADV_DONTNEED`` on a shared file
    mapping: the data stays in the file and the page cache, the next touch maps it again)."""
    mapped = getattr(matrix, "_mmap", None)
    if mapped is not None and hasattr(mmap, "MADV_DONTNEED"):
        mapped.madvise(mmap.MADV_DONTNEED)


def _maps(array: np.ndarray, path: Path) -> bool:
    """``array`` is a mapping of ``path`` (growing it needs no copy)."""
    return isinstance(array, np.memmap) and array.filename is not None \
        and Path(array.filename).resolve() == path.resolve()
