"""A large namespace's vectors beside SQLite, so a restart maps them instead of reading SQLite.

The rows (content, context) live in ``numpy.memmap`` files under ``<data>/vectors/``; at close
the per-row columns and the faiss indexes are written beside them, then a sidecar naming the
namespace's *epoch*, a counter that every transaction changing what the index holds bumps in
the same transaction (``bump_epoch``). A load trusts the files only when the sidecar's epoch
and count agree with SQLite, and deletes the sidecar first: after a crash nothing vouches for
them and the namespace is read from SQLite again (ADR 0020, 0068).
"""

from __future__ import annotations

import hashlib
import json
import logging
import mmap
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.store.ann.index import COLUMNS, FIELDS

log = logging.getLogger(__name__)

FORMAT = "graphmem-vectors-3"  # 3: the saved indexes hold no float refine stage
_SAMPLE = 8  # rows compared with SQLite at load: another store's files differ in nearly all
#: Linux's MADV_POPULATE_READ (5.14; Python's ``mmap`` has no name for it)
_POPULATE_READ = 22


def epoch_key(namespace: str) -> str:
    return "rows_epoch:" + namespace


def read_epoch(conn: sqlite3.Connection, namespace: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (epoch_key(namespace),)).fetchone()
    return int(row[0]) if row else 0


def bump_epoch(conn: sqlite3.Connection, namespace: str) -> None:
    """In the writing transaction: the namespace's saved files are out of date from now on."""
    conn.execute("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE "
                 "SET value = CAST(value AS INTEGER) + 1", (epoch_key(namespace),))


def count_memories(conn: sqlite3.Connection, namespace: str) -> int:
    """The namespace's memories, from the counts the triggers keep (ADR 0034)."""
    return int(conn.execute("SELECT coalesce(sum(n), 0) FROM memory_counts WHERE namespace = ?",
                            (namespace,)).fetchone()[0])


class RowFiles:
    """The files of one store's large namespaces.

    Example:
        >>> import tempfile
        >>> files = RowFiles(Path(tempfile.mkdtemp()), dim=4)
        >>> m = files.matrix("ops", "content", 8)
        >>> m.shape, files.matrix("ops", "content", 16, old=m).shape
        ((8, 4), (16, 4))
    """

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder / "vectors"
        self.dim = dim

    def path(self, namespace: str, suffix: str) -> Path:
        stem = hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()
        return self.folder / f"{stem}.{suffix}"

    def matrix(self, namespace: str, field: str, capacity: int,
               old: np.ndarray | None = None) -> np.ndarray:
        """The field's rows mapped from its file, grown (sparse) to ``capacity`` rows; ``old``
        is copied in unless it already maps this file."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.path(namespace, f"{field}.f32")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < capacity * self.dim * 4:
                os.ftruncate(fd, capacity * self.dim * 4)
        finally:
            os.close(fd)
        same = isinstance(old, np.memmap) and old.filename is not None \
            and Path(old.filename).resolve() == path.resolve()
        mapped = _map(path, capacity, self.dim, len(old) if same and old is not None else 0)
        if old is not None and not same:
            mapped[:len(old)] = old
        return mapped

    def save(self, namespace: str, epoch: int, memories: int, state: dict[str, Any],
             indexes: dict[str, Any] | None) -> None:
        """Flush the rows, write the columns, ids and faiss indexes, the sidecar last."""
        try:
            for field in FIELDS:
                if isinstance(state[field], np.memmap):
                    state[field].flush()
            n = len(state["ids"])
            columns = {c: state[c][:n] for c in COLUMNS}
            ids = np.frombuffer("\n".join(state["ids"]).encode(), np.uint8)
            _atomic(self.path(namespace, "rows.npz"),
                    lambda fh: np.savez(fh, ids=ids, **columns))
            if indexes is not None:
                import faiss

                for field, index in indexes.items():
                    blob = faiss.serialize_index(index).tobytes()
                    _atomic(self.path(namespace, f"{field}.faiss"), lambda fh, b=blob: fh.write(b))
            side = {"format": FORMAT, "namespace": namespace, "epoch": epoch, "dim": self.dim,
                    "rows": n, "memories": memories, "capacity": int(state["content"].shape[0]),
                    "keys": int(state["next_key"]), "faiss": indexes is not None}
            _atomic(self.path(namespace, "json"), lambda fh: fh.write(json.dumps(side).encode()))
        except OSError as exc:  # a cache: the next load reads SQLite
            log.warning("could not save a namespace's vectors: %s", exc)

    def load(self, namespace: str, conn: sqlite3.Connection) -> dict[str, Any] | None:
        """What the last close saved, when SQLite still agrees; None: read SQLite."""
        side_path = self.path(namespace, "json")
        try:
            side = json.loads(side_path.read_text())
            side_path.unlink()  # from here on nothing vouches for the files (writes, a crash)
        except (OSError, ValueError):
            return None
        try:
            n, cap = int(side["rows"]), int(side["capacity"])
            if (side.get("format") != FORMAT or side.get("namespace") != namespace
                    or side.get("dim") != self.dim or n > cap
                    or side.get("epoch") != read_epoch(conn, namespace)
                    or side.get("memories") != count_memories(conn, namespace)):
                log.info("saved vectors of a namespace are out of date: reading SQLite")
                return None
            with np.load(self.path(namespace, "rows.npz")) as saved:
                state: dict[str, Any] = {c: saved[c] for c in COLUMNS}
                blob = saved["ids"].tobytes().decode()
            state["ids"] = blob.split("\n") if n else []
            for field in FIELDS:
                path = self.path(namespace, f"{field}.f32")
                if path.stat().st_size < cap * self.dim * 4:
                    raise ValueError(f"{path.name} is shorter than its sidecar says")
                state[field] = _map(path, cap, self.dim, n)
            state["next_key"], state["indexes"] = int(side["keys"]), None
            if side.get("faiss"):
                import faiss

                state["indexes"] = {f: faiss.deserialize_index(np.fromfile(
                    self.path(namespace, f"{f}.faiss"), dtype=np.uint8)) for f in FIELDS}
            if len(state["ids"]) != n or any(len(state[c]) != n for c in COLUMNS) \
                    or not _agrees(conn, namespace, state):
                raise ValueError("the files disagree with the database")
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            log.warning("saved vectors not used (%s): reading SQLite", exc)
            return None
        return state


def _agrees(conn: sqlite3.Connection, namespace: str, state: dict[str, Any]) -> bool:
    """A few sampled rows (id, content vector) are SQLite's: another store's files are not."""
    n = len(state["ids"])
    for r in np.random.default_rng(n).choice(n, size=min(_SAMPLE, n), replace=False).tolist():
        got = conn.execute("SELECT id, embedding FROM memories JOIN vectors ON vectors.pk = "
                           "memories.pk WHERE namespace = ? AND memories.pk = ?",
                           (namespace, int(state["pk"][r]))).fetchone()
        if got is None or got[0] != state["ids"][r] \
                or got[1] != state["content"][r].tobytes():
            return False
    return True


def _map(path: Path, capacity: int, dim: int, held: int) -> np.memmap:
    """The file's ``capacity`` rows mapped, the pages of the first ``held`` (rows already
    written) mapped now, read from disk where the page cache lacks them: a query re-scores
    hundreds of rows scattered over the file, and each page touched the first time is a fault
    of its own (ADR 0070). Elsewhere than Linux: faults."""
    rows = np.memmap(path, dtype=np.float32, mode="r+", shape=(capacity, dim))
    mapping = getattr(rows, "_mmap", None)
    if sys.platform.startswith("linux") and mapping is not None and held:
        size = -(-held * dim * rows.itemsize // mmap.PAGESIZE) * mmap.PAGESIZE
        try:
            mapping.madvise(_POPULATE_READ, 0, min(size, len(mapping)))
        except OSError as exc:  # a kernel before 5.14: the pages come as queries touch them
            log.debug("rows not populated: %s", exc)
    return rows


def _atomic(path: Path, write: Any) -> None:
    """Through a temporary file and ``os.replace``: the whole file or the one before it."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        write(fh)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
