"""Embedded default store: SQLite (WAL, FTS5) + in-memory vector matrix, and product codes
that choose vector candidates in namespaces past ``StoreConfig.ann_min`` (``ann_keeper``,
ADR 0019).

SQLite is the source of truth; the caches are rebuilt from it at ``open`` and updated only
after a transaction commits, so a failed write leaves both untouched. One process owns a data
folder (``FolderLock``). Inside it, reads run side by side, each thread on its own SQLite
connection (WAL); writes take turns on the store's connection and run beside the reads (WAL
readers keep their snapshot), and only the step that brings the in-memory index in step with
a committed write excludes reads (``RWLock``): a read sees the index before or after a write,
never half of it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.config import StoreConfig
from graphmem.errors import MissingStoreError, StoreError
from graphmem.models import (
    EdgeSource,
    Memory,
    Relation,
    RelationType,
    Status,
    Tier,
    Transition,
)
from graphmem.rules.bm25 import TermStats
from graphmem.store import codec, row_files, sqlite_keywords
from graphmem.store.ann_keeper import AnnKeeper, bump_epoch
from graphmem.store.base import (
    SORT_FIELDS,
    ActiveColumns,
    Counts,
    EdgeKey,
    ListSpec,
    VectorField,
    WriteBatch,
    active_columns,
    breadth_first,
)
from graphmem.store.lock import FolderLock
from graphmem.store.rwlock import RWLock
from graphmem.store.sqlite_schema import migrate
from graphmem.store.vectors import STATUS_CODE, TIER_CODE, Allocator, VectorIndex

log = logging.getLogger(__name__)

DB_FILE = "graphmem.db"
_COLS = ", ".join(codec.MEMORY_FIELDS)
_EMB_COLS = ", embedding, context_embedding"
# a memory upserted without an embedding keeps its stored vectors (metadata-only updates)
_UPSERT = (
    f"INSERT INTO memories ({_COLS}{_EMB_COLS}) "
    f"VALUES ({', '.join(['?'] * (len(codec.MEMORY_FIELDS) + 2))}) "
    "ON CONFLICT (namespace, id) DO UPDATE SET "
    + ", ".join(f"{c.strip()} = excluded.{c.strip()}" for c in _COLS.split(",")[2:])
    + ", embedding = coalesce(excluded.embedding, memories.embedding), "
    "context_embedding = CASE WHEN excluded.embedding IS NULL THEN memories.context_embedding "
    "ELSE excluded.context_embedding END"
)
_CHUNK = 500
#: full-text rows written (inserted, re-tagged, deleted) since the index was last merged into
#: one segment, past which the next write merges it: every write leaves FTS5 a segment, and
#: a query reads them all (300k memories in 300 batches: 0.56 ms per query, 0.13 merged;
#: the merge took 0.8 s): the greater of this and a quarter of the store's rows
_FTS_MERGE_MIN = 20_000
#: ... and a session that wrote at least this many closes with the index merged
_FTS_MERGE_AT_CLOSE = 1000
#: every match of a full-text expression (up to a limit) with its fields, unscored
_FTS_ALL = ("SELECT m.id, 0.0, m.keywords, m.context_keywords FROM (SELECT rowid FROM "
            "memory_fts WHERE memory_fts MATCH ? LIMIT ?) AS f JOIN memories m "
            "ON m.pk = f.rowid ORDER BY m.pk DESC")


_ts, _dt, _blob, _vec = codec.ts, codec.dt, codec.blob, codec.vector


def _row_params(m: Memory) -> tuple[Any, ...]:
    flat = codec.flatten(m)
    return (*(flat[name] for name in codec.MEMORY_FIELDS), _blob(m.embedding),
            _blob(m.context_embedding))


def _memory(row: Sequence[Any], embeddings: bool) -> Memory:
    if not embeddings:
        return codec.unflatten_row(row)
    n = len(codec.MEMORY_FIELDS)
    return codec.unflatten_row(row, embedding=_vec(row[n]), context_embedding=_vec(row[n + 1]))


_RELATION_TYPES = {t.value: t for t in RelationType}
_EDGE_SOURCES = {s.value: s for s in EdgeSource}
_fromtimestamp = datetime.fromtimestamp


def _edge(row: Sequence[Any]) -> Relation:
    """``codec.edge`` of an edges row, with the enums and the time decoded directly: opening
    a store decodes every edge (370k at 100k memories: 3.9 -> ~1 s)."""
    ns, source_id, target_id, type_, score, created_at, source = row
    return Relation(source_id, target_id, _RELATION_TYPES[type_], ns,
                    None if score is None else float(score), _fromtimestamp(created_at, UTC),
                    _EDGE_SOURCES[source or "explicit"])  # created_at is NOT NULL


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _match_expr(terms: Sequence[str]) -> str:
    return " OR ".join(_quote(t) for t in dict.fromkeys(terms) if t)


def _ns_tag(namespace: str) -> str:
    return "n" + hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()


def _tags(m: Memory) -> str:
    return f"{_ns_tag(m.namespace)} s{m.status.value} t{m.tier.value}"


def _marks(n: int) -> str:
    return ", ".join("?" * n)


class SQLiteStore:
    """The embedded store over one data folder (see module docstring).

    Example:
        >>> import tempfile
        >>> store = SQLiteStore(tempfile.mkdtemp(), dim=2)
        >>> store.open()
        >>> store.namespaces(), store.counts("ops").memories
        ([], {})
        >>> store.close()
    """

    def __init__(self, folder: str | Path, *, dim: int = 384,
                 config: StoreConfig | None = None, create: bool = True) -> None:
        self.folder = Path(folder)
        self.create = create
        self.dim = dim
        self.config = config or StoreConfig()
        self._lock = RWLock()  # the in-memory index: many readers, or one write's update
        self._write_mutex = threading.RLock()  # SQLite's one writer: writes take turns
        self._local = threading.local()  # each reading thread's connection
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._fts_written = 0  # full-text rows written since the last merge (this process)
        self._folder_lock = FolderLock(self.folder)
        self._conn: sqlite3.Connection | None = None
        self._vectors: dict[str, VectorIndex] = {}
        self._ann = AnnKeeper(self.folder, dim, self.config)
        self._rows = row_files.RowFiles(self.folder, dim)

    # lifecycle ------------------------------------------------------------------------------
    def open(self) -> None:
        if not self.create and not (self.folder / DB_FILE).is_file():
            raise MissingStoreError(f"no graphmem store in {self.folder} (nothing was created)")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create data folder {self.folder}: {exc}") from exc
        self._folder_lock.acquire()
        try:
            # memories are private: the database (and so its -wal / -shm) is created 0600
            os.close(os.open(self.folder / DB_FILE, os.O_RDWR | os.O_CREAT, 0o600))
            conn = sqlite3.connect(self.folder / DB_FILE, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self.config.sqlite_synchronous}")
            self._tune(conn)
            migrate(conn)
            self._conn = conn
            self._load_caches()
            self._ann.after_open(conn, self._lock, self._vectors)
        except sqlite3.Error as exc:
            self._folder_lock.release()
            raise StoreError(f"cannot open {self.folder / DB_FILE}: {exc}") from exc
        except BaseException:
            self._folder_lock.release()
            raise

    def _tune(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.config.busy_timeout_ms)}")
        conn.execute(f"PRAGMA cache_size = {-1024 * int(self.config.sqlite_cache_mb)}")
        conn.execute(f"PRAGMA mmap_size = {2**20 * int(self.config.sqlite_mmap_mb)}")

    def close(self) -> None:
        self._ann.stop()  # outside the lock: a finishing build takes it
        with self._guard(write=True), self._lock.write():
            if self._conn is not None:
                self._merge_fts(at_least=_FTS_MERGE_AT_CLOSE)  # a bulk load ends merged
                self._ann.save(self._conn, self._vectors)
                for ns, index in self._vectors.items():
                    if index.mapped:
                        self._rows.save(ns, row_files.read_epoch(self._conn, ns),
                                        index.arrays(),
                                        row_files.count_memories(self._conn, ns))
                self._conn.close()
                self._conn = None
            with self._readers_lock:
                for reader in self._readers:
                    reader.close()
                self._readers.clear()
                self._local = threading.local()
            self._folder_lock.release()
            self._vectors.clear()

    @property
    def conn(self) -> sqlite3.Connection:
        """The calling thread's connection: its own (read only) while it holds a read, the
        store's (for writes, and while opening) otherwise."""
        if self._conn is None:
            raise StoreError("store is not open")
        if not self._lock.reading_here() or getattr(self._local, "borrowed", 0):
            return self._conn
        reader: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if reader is None:
            reader = sqlite3.connect(self.folder / DB_FILE, isolation_level=None,
                                     check_same_thread=False)
            self._tune(reader)
            reader.execute("PRAGMA query_only = ON")
            with self._readers_lock:
                self._readers.append(reader)
            self._local.conn = reader
        return reader

    @contextmanager
    def _guard(self, *, write: bool = False, borrow: bool = False) -> Iterator[None]:
        """A read (side by side with other reads and with a write's transaction) or a write
        (one at a time, on the store's connection), and SQLite's own errors as
        ``StoreError``: none crosses the port (reads used to leak ``sqlite3.Error``).

        ``borrow``: a short read runs on the store's connection when no write holds it (the
        write mutex taken without waiting, and held for the read). Every commit empties the
        page cache of every *other* connection, so a reader connection after a write reads
        and decodes its B-tree pages afresh (240 candidate rows: 0.8 -> 2.3 ms); the
        writer's own cache stays warm (ADR 0023). Long scans do not borrow: they would hold
        writes off."""
        if write and self._lock.reading_here():
            raise StoreError("a write inside a read")  # a bug: it would see a stale snapshot
        if not write:
            with self._lock.read():
                borrowed = borrow and self._write_mutex.acquire(blocking=False)
                if borrowed:
                    self._local.borrowed = getattr(self._local, "borrowed", 0) + 1
                try:
                    yield
                except sqlite3.Error as exc:
                    raise StoreError(f"SQLite store failed: {exc}") from exc
                finally:
                    if borrowed:
                        self._local.borrowed -= 1
                        self._write_mutex.release()
            return
        with self._write_mutex:
            depth = getattr(self._local, "writing", 0)
            self._local.writing = depth + 1
            try:
                yield
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite store failed: {exc}") from exc
            finally:
                self._local.writing = depth

    def compact(self, min_stale: int = 1) -> int:
        """Nothing waits here: rows and their vectors are deleted in place. Maintenance's
        turn merges the full-text index when anything was written since its last merge
        (a server's single writes each leave a segment); returns 0 all the same."""
        with self._guard(write=True):
            self._merge_fts(at_least=1)
        return 0

    def _merge_fts(self, at_least: int | None = None) -> None:
        """Merge the full-text index into one segment once the rows written since the last
        merge pass ``at_least`` (default: ``_FTS_MERGE_MIN`` and a quarter of the store,
        amortised O(1) per row written). In a write's turn, beside the reads (WAL)."""
        rows = sum(len(index) for index in self._vectors.values())
        if self._fts_written < (max(_FTS_MERGE_MIN, rows // 4) if at_least is None
                                else at_least):
            return
        started = time.perf_counter()
        self.conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
        self._fts_written = 0
        log.info("merged the full-text index (%d rows) in %.2f s", rows,
                 time.perf_counter() - started)

    def ping(self) -> None:
        with self._guard():
            try:
                self.conn.execute("SELECT count(*) FROM meta").fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"store unavailable: {exc}") from exc

    def wait_for_ann(self, timeout: float | None = None) -> None:
        """Until the product codes being built are installed (benchmarks, tests)."""
        self._ann.wait(timeout)

    def ann_states(self) -> dict[str, str]:
        """namespace -> loaded | built | building | exact, for namespaces past ``ann_min``."""
        return dict(self._ann.state)

    def _namespaces(self) -> list[str]:
        """Every namespace with memories, one index seek each (a loose index scan)."""
        out: list[str] = []
        row = self.conn.execute("SELECT min(namespace) FROM memories").fetchone()
        while row is not None and row[0] is not None:
            out.append(row[0])
            row = self.conn.execute("SELECT min(namespace) FROM memories WHERE namespace > ?",
                                    (row[0],)).fetchone()
        return out

    def _mapped(self, namespace: str) -> Allocator:
        files = self._rows
        return lambda field, cap, old: files.matrix(namespace, field, cap, old)

    def _load_caches(self) -> None:
        """Vector rows: a large namespace maps the files its last close saved, when SQLite
        agrees with them (ADR 0020); the others, and any whose files do not serve, are read
        from SQLite (into files when past ``mapped_rows_min``)."""
        unread: list[str] = []
        for ns in self._namespaces():
            arrays = self._rows.load(ns, self.conn) if self.config.mapped_rows_min else None
            if arrays is not None:
                self._vectors[ns] = VectorIndex.from_arrays(self.dim, arrays, self._mapped(ns))
            else:
                unread.append(ns)
        from_files = len(self._vectors)
        if unread:
            big = self.config.mapped_rows_min
            if big:
                for ns, count in self.conn.execute(
                        "SELECT namespace, count(*) FROM memories GROUP BY namespace"):
                    if ns in unread and count >= big:
                        self._vectors[ns] = VectorIndex(self.dim, alloc=self._mapped(ns))
            # all at once in pk order when nothing was mapped, else namespace by namespace
            # (a scan in pk order would read the mapped namespaces' pages too)
            groups: list[str | None] = [None] if from_files == 0 else list(unread)
            for only in groups:
                cursor = self.conn.execute(
                    "SELECT namespace, id, tier, status, embedding, context_embedding, pk "
                    "FROM memories WHERE embedding IS NOT NULL "
                    + ("" if only is None else "AND namespace = ? ") + "ORDER BY pk",
                    () if only is None else (only,))
                while rows := cursor.fetchmany(20_000):  # in bulk: ~4x faster than by row
                    by_ns: dict[str, list[Any]] = {}
                    for row in rows:
                        by_ns.setdefault(row[0], []).append(row)
                    for name, part in by_ns.items():
                        self._load_vectors(name, part)
        log.info("opened %s: %d namespaces (%d from mapped rows)", self.folder,
                 len(self._vectors), from_files)

    def _load_vectors(self, ns: str, rows: list[Any]) -> None:
        if not rows:
            return
        content = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32)
        has = np.array([r[5] is not None for r in rows], dtype=bool)
        context = np.zeros((len(rows), self.dim), dtype=np.float32)
        if has.any():
            context[has] = np.frombuffer(b"".join(r[5] for r in rows if r[5] is not None),
                                         dtype=np.float32).reshape(-1, self.dim)
        self._index(ns).extend(
            [r[1] for r in rows], [r[6] for r in rows], content.reshape(-1, self.dim),
            context, has, np.array([TIER_CODE[Tier(r[2])] for r in rows], dtype=np.int8),
            np.array([STATUS_CODE[Status(r[3])] for r in rows], dtype=np.int8))

    def _index(self, namespace: str) -> VectorIndex:
        index = self._vectors.get(namespace)
        if index is None:
            index = self._vectors[namespace] = VectorIndex(self.dim)
        return index

    # writes ---------------------------------------------------------------------------------
    def _transaction(self, work: Any) -> None:
        if not getattr(self._local, "writing", 0):
            raise StoreError("a write outside the store's write lock")  # a bug, not input
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            work(conn)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback(conn)
            raise StoreError(f"write failed, nothing was written: {exc}") from exc
        except BaseException:
            self._rollback(conn)
            raise

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        # SQLite rolls back by itself on some errors (SQLITE_FULL, IOERR): a second ROLLBACK
        # would raise "cannot rollback - no transaction is active" over the real error
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    def apply(self, batch: WriteBatch) -> None:
        if not batch:
            return
        batch.check()
        ns = batch.namespace
        with self._guard(write=True):
            touched = list({*batch.delete_memories, *(m.id for m in batch.memories)})
            old_keywords: list[tuple[str, str]] = []
            new_pks: dict[str, int] = {}
            patched_states: list[tuple[str, Tier, Status]] = []
            for i in range(0, len(touched), _CHUNK):
                chunk = touched[i:i + _CHUNK]
                old_keywords += self.conn.execute(
                    f"SELECT keywords, context_keywords FROM memories WHERE namespace = ? AND "
                    f"id IN ({_marks(len(chunk))})", (ns, *chunk)).fetchall()

            def work(conn: sqlite3.Connection) -> None:
                conn.executemany(
                    "DELETE FROM edges WHERE namespace = ? AND source_id = ? AND target_id = ? "
                    "AND type = ?", [(ns, s, t, ty.value) for s, t, ty in batch.delete_edges])
                for i in range(0, len(batch.delete_memories), _CHUNK):
                    chunk = batch.delete_memories[i:i + _CHUNK]
                    marks = _marks(len(chunk))
                    conn.execute(
                        f"DELETE FROM memory_fts WHERE rowid IN (SELECT pk FROM memories "
                        f"WHERE namespace = ? AND id IN ({marks}))", (ns, *chunk))
                    conn.execute(f"DELETE FROM memories WHERE namespace = ? AND id IN ({marks})",
                                 (ns, *chunk))
                    conn.execute(f"UPDATE transitions SET detail = NULL WHERE namespace = ? AND "
                                 f"memory_id IN ({marks}) AND detail IS NOT NULL", (ns, *chunk))
                    conn.execute(f"DELETE FROM edges WHERE namespace = ? AND (source_id IN "
                                 f"({marks}) OR target_id IN ({marks}))", (ns, *chunk, *chunk))
                conn.executemany(_UPSERT, [_row_params(m) for m in batch.memories])
                deltas = sqlite_keywords.Deltas()
                for kw, ckw in old_keywords:
                    deltas.add(kw, ckw, -1)
                for m in batch.memories:
                    deltas.add(m.keywords, m.context_keywords, 1)
                sqlite_keywords.write(conn, ns, deltas)
                if batch.memories or batch.delete_memories:
                    bump_epoch(conn, ns)  # saved product codes are out of date from here
                if batch.memories or batch.delete_memories or any(
                        "tier" in f or "status" in f for _, f in batch.patches):
                    row_files.bump_epoch(conn, ns)  # and so are saved rows (ADR 0020)
                for i in range(0, len(batch.memories), _CHUNK):
                    chunk_m = batch.memories[i:i + _CHUNK]
                    pks = dict(conn.execute(
                        f"SELECT id, pk FROM memories WHERE namespace = ? AND id IN "
                        f"({_marks(len(chunk_m))})", (ns, *[m.id for m in chunk_m])).fetchall())
                    new_pks.update(pks)
                    conn.executemany("DELETE FROM memory_fts WHERE rowid = ?",
                                     [(pks[m.id],) for m in chunk_m])
                    conn.executemany(
                        "INSERT INTO memory_fts (rowid, keywords, context_keywords, tags) "
                        "VALUES (?, ?, ?, ?)",
                        [(pks[m.id], m.keywords, m.context_keywords, _tags(m))
                         for m in chunk_m])
                self._patch(conn, ns, batch.patches)
                conn.executemany(
                    "INSERT INTO transitions (namespace, memory_id, kind, from_tier, to_tier, "
                    "from_status, to_status, reason, at, detail) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(ns, t.memory_id, t.kind.value, t.from_tier.value, t.to_tier.value,
                      t.from_status.value, t.to_status.value, t.reason, t.at.timestamp(),
                      t.detail)
                     for t in batch.transitions])
                conn.executemany(
                    "INSERT INTO edges (namespace, source_id, target_id, type, score, created_at, "
                    "source) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
                    "score = excluded.score, source = excluded.source",
                    [(ns, e.source_id, e.target_id, e.type.value, e.score, _ts(e.created_at),
                      e.source.value) for e in batch.edges])

            def work_and_states(conn: sqlite3.Connection) -> None:
                work(conn)
                ids = [i for i, f in batch.patches if "tier" in f or "status" in f]
                for i in range(0, len(ids), _CHUNK):
                    chunk = ids[i:i + _CHUNK]
                    patched_states.extend(
                        (r[0], Tier(r[1]), Status(r[2])) for r in conn.execute(
                            f"SELECT id, tier, status FROM memories WHERE namespace = ? AND "
                            f"id IN ({_marks(len(chunk))})", (ns, *chunk)))

            self._transaction(work_and_states)
            self._fts_written += (len(batch.memories) + len(batch.delete_memories)
                                  + len(patched_states))
            self._merge_fts()
            if not (batch.memories or batch.delete_memories or patched_states):
                return  # nothing the in-memory index holds changed (access bookkeeping)
            # the transaction committed: bring the caches in step, reads held off meanwhile
            with self._lock.write():
                self._after_commit(ns, batch, new_pks, patched_states)

    def _after_commit(self, ns: str, batch: WriteBatch, new_pks: dict[str, int],
                      patched_states: list[tuple[str, Tier, Status]]) -> None:
        index = self._index(ns)
        for id_ in batch.delete_memories:
            index.remove(id_)
        for m in batch.memories:
            if m.embedding is None:
                index.set_state(m.id, m.tier, m.status)
            else:
                index.upsert(m.id, m.embedding, m.context_embedding, m.tier, m.status,
                             pk=new_pks.get(m.id))
        for id_, tier, status in patched_states:
            index.set_state(id_, tier, status)
        big = self.config.mapped_rows_min
        if big and not index.mapped and len(index) >= big:
            index.map_rows(self._mapped(ns))
        self._ann.after_write(ns, index, self._lock)

    @staticmethod
    def _patch(conn: sqlite3.Connection, ns: str,
               patches: list[tuple[str, dict[str, Any]]]) -> None:
        """Field-level updates (fields from PATCH_FIELDS), grouped by the fields they set;
        a tier or status change also re-tags the memory's FTS row."""
        groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
        for id_, fields in patches:
            names = tuple(sorted(fields))
            values = tuple(codec.scalar(fields[n]) for n in names)
            groups.setdefault(names, []).append((*values, ns, id_))
        for names, rows in groups.items():
            sets = ", ".join(f"{n} = ?" for n in names)  # names from PATCH_FIELDS only
            conn.executemany(f"UPDATE memories SET {sets} WHERE namespace = ? AND id = ?", rows)
            if "tier" in names or "status" in names:
                conn.executemany(
                    "UPDATE memory_fts SET tags = (SELECT ? || ' s' || status || ' t' || tier "
                    "FROM memories WHERE namespace = ? AND id = ?) WHERE rowid = (SELECT pk "
                    "FROM memories WHERE namespace = ? AND id = ?)",
                    [(_ns_tag(ns), ns, r[-1], ns, r[-1]) for r in rows])

    def touch(self, namespace: str, ids: Sequence[str], at: datetime) -> None:
        if not ids:
            return
        with self._guard(write=True):
            self._transaction(lambda conn: conn.executemany(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? "
                "WHERE namespace = ? AND id = ?", [(at.timestamp(), namespace, i) for i in ids]))

    # reads ----------------------------------------------------------------------------------
    def _select(self, sql: str, params: Sequence[Any], embeddings: bool,
                borrow: bool = False) -> list[Memory]:
        cols = _COLS + (_EMB_COLS if embeddings else ", NULL, NULL")
        with self._guard(borrow=borrow):
            try:
                rows = self.conn.execute(sql.format(cols=cols), params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"read failed: {exc}") from exc
        return [_memory(r, embeddings) for r in rows]

    def get_memories(self, namespace: str, ids: Sequence[str], *,
                     embeddings: bool = False) -> dict[str, Memory]:
        out: dict[str, Memory] = {}
        unique = list(dict.fromkeys(ids))
        for i in range(0, len(unique), _CHUNK):
            chunk = unique[i:i + _CHUNK]
            for m in self._select(
                f"SELECT {{cols}} FROM memories WHERE namespace = ? AND id IN "
                f"({_marks(len(chunk))})", (namespace, *chunk), embeddings, borrow=True):
                out[m.id] = m
        return out

    def similarities(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]:
        with self._guard():
            index = self._vectors.get(namespace)
            return {} if index is None else index.similarities(ids, vector)

    def get_scored(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                   ) -> tuple[dict[str, Memory], dict[str, tuple[float, float | None]]]:
        return self.get_memories(namespace, ids), self.similarities(namespace, ids, vector)

    def keyword_fields(self, namespace: str, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        unique = list(dict.fromkeys(ids))
        with self._guard(borrow=True):
            for i in range(0, len(unique), _CHUNK):
                chunk = unique[i:i + _CHUNK]
                for id_, kw, ctx in self.conn.execute(
                    f"SELECT id, keywords, context_keywords FROM memories WHERE namespace = ? "
                    f"AND id IN ({_marks(len(chunk))})", (namespace, *chunk)):
                    out[id_] = (kw or "", ctx or "")
        return out

    def find_by_hash(self, namespace: str, hashes: Collection[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        unique = list(set(hashes))
        with self._guard(borrow=True):
            for i in range(0, len(unique), _CHUNK):
                chunk = unique[i:i + _CHUNK]
                for h, id_ in self.conn.execute(
                    f"SELECT content_hash, id FROM memories WHERE namespace = ? AND status = "
                    f"'active' AND content_hash IN ({_marks(len(chunk))}) ORDER BY pk",
                    (namespace, *chunk)):
                    out.setdefault(h, id_)
        return out

    def session_members(self, namespace: str, session_id: str) -> list[tuple[str, datetime]]:
        with self._guard(borrow=True):
            rows = self.conn.execute(
                "SELECT id, created_at FROM memories WHERE namespace = ? AND session_id = ? "
                "ORDER BY created_at, pk", (namespace, session_id)).fetchall()
        return [(r[0], _dt(r[1])) for r in rows]  # type: ignore[misc]

    def time_window(self, namespace: str, anchor: Memory, *, before: int, after: int,
                    session_only: bool,
                    statuses: Collection[Status] = (Status.ACTIVE, Status.ARCHIVED),
                    ) -> tuple[list[Memory], list[Memory]]:
        with self._guard():
            row = self.conn.execute("SELECT pk, created_at FROM memories WHERE namespace = ? "
                                    "AND id = ?", (namespace, anchor.id)).fetchone()
        if row is None:
            return [], []
        pk, ts = row
        where = "namespace = ?"
        params: list[Any] = [namespace]
        if session_only and anchor.session_id is not None:
            where += " AND session_id = ?"
            params.append(anchor.session_id)
        st = [s.value for s in statuses]
        where += f" AND status IN ({_marks(len(st))})"
        params += st
        earlier = self._select(
            f"SELECT {{cols}} FROM memories WHERE {where} AND (created_at < ? OR "
            "(created_at = ? AND pk < ?)) ORDER BY created_at DESC, pk DESC LIMIT ?",
            (*params, ts, ts, pk, before), False) if before > 0 else []
        later = self._select(
            f"SELECT {{cols}} FROM memories WHERE {where} AND (created_at > ? OR "
            "(created_at = ? AND pk > ?)) ORDER BY created_at, pk LIMIT ?",
            (*params, ts, ts, pk, after), False) if after > 0 else []
        return earlier, later

    def iter_memories(self, namespace: str, *, page: int = 1000, embeddings: bool = True,
                      statuses: Collection[Status] | None = None) -> Iterator[list[Memory]]:
        last = 0
        cols = _COLS + (_EMB_COLS if embeddings else ", NULL, NULL")
        where = ""
        extra: list[Any] = []
        if statuses is not None:
            extra = [s.value for s in statuses]
            where = f" AND status IN ({_marks(len(extra))})"
        while True:
            with self._guard():
                rows = self.conn.execute(
                    f"SELECT pk, {cols} FROM memories WHERE namespace = ? AND pk > ?{where} "
                    "ORDER BY pk LIMIT ?", (namespace, last, *extra, page)).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [_memory(r[1:], embeddings) for r in rows]

    def active_columns(self, namespace: str) -> ActiveColumns:
        with self._guard():
            rows = self.conn.execute(
                "SELECT tier, base_importance, coalesce(reinforced_at, last_accessed_at), "
                "created_at, surprise_score FROM memories WHERE namespace = ? AND "
                "status = 'active'", (namespace,)).fetchall()
        return active_columns(rows)

    def list_page(self, namespace: str, spec: ListSpec) -> list[Memory]:
        if spec.sort not in SORT_FIELDS:
            raise StoreError(f"cannot sort by {spec.sort!r}")
        where: list[str] = ["namespace = ?"]
        params: list[Any] = [namespace]
        for column, values in (("status", spec.statuses), ("tier", spec.tiers),
                               ("type", spec.types)):
            if values is not None:
                where.append(f"{column} IN ({_marks(len(values))})")
                params += [getattr(x, "value", x) for x in values]
        for column in ("source", "session_id", "topic"):
            if getattr(spec, column) is not None:
                where.append(f"{column} = ?")
                params.append(getattr(spec, column))
        if spec.since is not None:
            where.append("created_at >= ?")
            params.append(spec.since.timestamp())
        if spec.until is not None:
            where.append("created_at < ?")
            params.append(spec.until.timestamp())
        key = spec.sort  # from SORT_FIELDS
        cmp, order = ("<", "DESC") if spec.descending else (">", "ASC")
        if spec.after is not None:
            where.append(f"({key} {cmp} ? OR ({key} = ? AND id {cmp} ?))")
            params += [spec.after[0], spec.after[0], spec.after[1]]
        sql = (f"SELECT {{cols}} FROM memories WHERE {' AND '.join(where)} "
               f"ORDER BY {key} {order}, id {order} LIMIT ?")
        return self._select(sql, [*params, max(0, int(spec.limit))], False)

    def transition_counts(self, namespace: str, since: datetime
                          ) -> list[tuple[str, Tier, Tier, int, int]]:
        with self._guard():
            rows = self.conn.execute(
                "SELECT kind, from_tier, to_tier, count(*), sum(at >= ?) FROM transitions "
                "WHERE namespace = ? GROUP BY kind, from_tier, to_tier",
                (since.timestamp(), namespace)).fetchall()
        return [(k, Tier(a), Tier(b), int(n), int(r or 0)) for k, a, b, n, r in rows]

    def transitions_of(self, namespace: str, memory_id: str) -> list[Transition]:
        with self._guard():
            rows = self.conn.execute(
                "SELECT memory_id, kind, from_tier, to_tier, reason, at, from_status, to_status, "
                "detail "
                "FROM transitions WHERE namespace = ? AND memory_id = ? ORDER BY at, id",
                (namespace, memory_id)).fetchall()
        return [codec.transition(dict(zip(("memory_id", "kind", "from_tier", "to_tier", "reason",
                                           "at", "from_status", "to_status", "detail"), r,
                                          strict=True)))
                for r in rows]

    def recent_transitions(self, namespace: str, limit: int,
                           since: datetime | None = None) -> list[Transition]:
        with self._guard():
            rows = self.conn.execute(
                "SELECT memory_id, kind, from_tier, to_tier, reason, at, from_status, to_status, "
                "detail "
                "FROM transitions WHERE namespace = ? AND at >= ? ORDER BY at DESC, id DESC "
                "LIMIT ?", (namespace, since.timestamp() if since else float("-inf"),
                            max(0, int(limit)))).fetchall()
        return [codec.transition(dict(zip(("memory_id", "kind", "from_tier", "to_tier", "reason",
                                           "at", "from_status", "to_status", "detail"), r,
                                          strict=True)))
                for r in rows]

    def iter_edges(self, namespace: str, *, page: int = 5000) -> Iterator[list[Relation]]:
        after: tuple[str, str, str] = ("", "", "")
        while True:
            with self._guard():
                rows = self.conn.execute(
                    "SELECT namespace, source_id, target_id, type, score, created_at, source "
                    "FROM edges WHERE namespace = ? AND (source_id, target_id, type) > (?, ?, ?) "
                    "ORDER BY source_id, target_id, type LIMIT ?",
                    (namespace, *after, page)).fetchall()
            if not rows:
                return
            after = (rows[-1][1], rows[-1][2], rows[-1][3])
            yield [_edge(r) for r in rows]

    def namespaces(self) -> list[str]:
        with self._guard():
            return [r[0] for r in self.conn.execute(
                "SELECT DISTINCT namespace FROM memories ORDER BY namespace")]

    def counts(self, namespace: str) -> Counts:
        with self._guard():
            mem = self.conn.execute(
                "SELECT tier, status, kind, count(*) FROM memories WHERE namespace = ? "
                "GROUP BY tier, status, kind", (namespace,)).fetchall()
            edges = self.conn.execute(
                "SELECT type, count(*) FROM edges WHERE namespace = ? GROUP BY type",
                (namespace,)).fetchall()
        return Counts(
            memories={(Tier(t), Status(s), k): n for t, s, k, n in mem},
            edges={RelationType(t): n for t, n in edges},
        )

    # graph ----------------------------------------------------------------------------------
    def edges_of(self, namespace: str, ids: Collection[str],
                 types: Collection[RelationType] | None = None) -> list[Relation]:
        """From the table (two indexed lookups per chunk; without ANALYZE the planner scanned
        the namespace's primary key for the targets), not a copy in memory: a million edges
        held as objects cost ~1 GB and several seconds to load at open (ADR 0018)."""
        out: dict[EdgeKey, Relation] = {}
        unique = list(dict.fromkeys(ids))
        wanted = None if types is None else {t.value for t in types}
        with self._guard(borrow=True):
            for i in range(0, len(unique), _CHUNK):
                chunk = unique[i:i + _CHUNK]
                marks = _marks(len(chunk))
                for row in self.conn.execute(
                        f"SELECT namespace, source_id, target_id, type, score, created_at, "
                        f"source FROM edges WHERE namespace = ? AND source_id IN ({marks}) "
                        f"UNION ALL SELECT namespace, source_id, target_id, type, score, "
                        f"created_at, source FROM edges INDEXED BY ix_edges_target "
                        f"WHERE namespace = ? AND target_id IN "
                        f"({marks})", (namespace, *chunk, namespace, *chunk)):
                    if wanted is None or row[3] in wanted:
                        e = _edge(row)
                        out[e.key] = e
        return list(out.values())

    def neighbourhood(self, namespace: str, seeds: Collection[str], depth: int, *,
                      types: Collection[RelationType] | None = None,
                      max_nodes: int = 1000) -> list[Relation]:
        with self._guard(borrow=True):
            return breadth_first(seeds, depth, max_nodes,
                                 lambda frontier: self.edges_of(namespace, frontier, types))

    # search ---------------------------------------------------------------------------------
    def vector_topk(self, namespace: str, vector: np.ndarray, k: int, *,
                    field: VectorField = "content", tiers: Collection[Tier] | None = None,
                    statuses: Collection[Status] = (Status.ACTIVE,)) -> list[tuple[str, float]]:
        with self._guard():
            index = self._vectors.get(namespace)
            if index is None:
                return []
            return index.topk(vector, k, field=field, tiers=tiers, statuses=statuses)

    def vector_topk_fields(self, namespace: str, vector: np.ndarray, k: int, *,
                           tiers: Collection[Tier] | None = None,
                           statuses: Collection[Status] = (Status.ACTIVE,),
                           ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        with self._guard():
            index = self._vectors.get(namespace)
            if index is None:
                return [], []
            # alone, a query searches the second field in another thread; among concurrent
            # queries the cores are busy already
            return index.topk_fields(vector, k, tiers=tiers, statuses=statuses,
                                     parallel=self._lock.readers <= 1)

    def vector_topk_many(self, namespace: str, vectors: np.ndarray, k: int, *,
                         statuses: Collection[Status] = (Status.ACTIVE,),
                         min_score: float | None = None,
                         ) -> list[list[tuple[str, float]]]:
        with self._guard():
            index = self._vectors.get(namespace)
            if index is None:
                return [[] for _ in range(len(vectors))]
            return index.topk_many(vectors, k, statuses=statuses, min_score=min_score)

    def keyword_topk(self, namespace: str, terms: Sequence[str], k: int, *,
                     tiers: Collection[Tier] | None = None,
                     statuses: Collection[Status] = (Status.ACTIVE,), newest: bool = False,
                     ) -> list[tuple[str, float]]:
        rows = self._keyword_rows(namespace, terms, k, tiers, statuses, newest)
        return [(r[0], float(r[1])) for r in rows]

    def keyword_candidates(self, namespace: str, terms: Sequence[str], k: int, *,
                           tiers: Collection[Tier] | None = None,
                           statuses: Collection[Status] = (Status.ACTIVE,),
                           newest: bool = False) -> list[tuple[str, str, str]]:
        rows = self._keyword_rows(namespace, terms, k, tiers, statuses, newest, ranked=False)
        return [(r[0], r[2] or "", r[3] or "") for r in rows]

    def _keyword_rows(self, namespace: str, terms: Sequence[str], k: int,
                      tiers: Collection[Tier] | None, statuses: Collection[Status],
                      newest: bool, ranked: bool = True) -> list[tuple[Any, ...]]:
        """(id, score, keywords, context_keywords) of the full-text search, best first; not
        ``ranked``: when all the matches fit in ``k``, all of them, unscored (ADR 0022)."""
        words = _match_expr(terms)
        if not words or k <= 0 or not statuses:
            return []
        expr = (f"tags : {_ns_tag(namespace)} AND tags : ("
                + " OR ".join(f"s{s.value}" for s in statuses) + ")")
        if tiers is not None:
            if not tiers:
                return []
            expr += " AND tags : (" + " OR ".join(f"t{t.value}" for t in tiers) + ")"
        expr += f" AND {{keywords context_keywords}} : ({words})"
        # context weighs half, as in FalkorDB's index: the order only chooses candidates
        # newest: the last-stored k matches in rowid order, which FTS5 walks without scoring
        # any posting (ADR 0011); their score is 0, retrieval ranks them with its own BM25
        if not (ranked or newest):
            # bm25() counts every row of every phrase for its IDF, the namespace and status
            # tags included (all of the namespace): 5 of 6 ms at 100k. Mostly the matches are
            # fewer than k (seed_postings), and then they are the answer in any order
            found = self._fts(_FTS_ALL, (expr, k + 1))
            if len(found) <= k:
                return found
        score = "0.0" if newest else "-bm25(memory_fts, 1.0, 0.5, 0.0)"
        sql = ("SELECT m.id, f.score, m.keywords, m.context_keywords FROM (SELECT rowid, "
               f"{score} AS score FROM memory_fts WHERE memory_fts MATCH ? "
               f"ORDER BY {'rowid' if newest else 'score'} DESC LIMIT ?) AS f "
               "JOIN memories m ON m.pk = f.rowid ORDER BY f.score DESC, m.pk DESC")
        return self._fts(sql, (expr, k))

    def _fts(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._guard(borrow=True):
            try:
                return list(self.conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise StoreError(f"keyword search failed: {exc}") from exc

    def keyword_stats(self, namespace: str, terms: Sequence[str]
                      ) -> tuple[TermStats, TermStats]:
        with self._guard(borrow=True):
            return sqlite_keywords.read(self.conn, namespace, terms)

    # jobs -----------------------------------------------------------------------------------
    def save_run(self, run: dict[str, Any]) -> None:
        with self._guard(write=True):
            self._transaction(lambda conn: conn.execute(
                "INSERT INTO consolidation_runs (id, namespace, status, created_at, data) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, "
                "data = excluded.data",
                (run["id"], run.get("namespace"), run["status"], run["created_at"],
                 json.dumps(run))))

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        with self._guard():
            row = self.conn.execute("SELECT data FROM consolidation_runs WHERE id = ?",
                                    (run_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def list_runs(self) -> list[dict[str, Any]]:
        with self._guard():
            rows = self.conn.execute("SELECT data FROM consolidation_runs ORDER BY created_at "
                                     "DESC, id").fetchall()
        return [json.loads(r[0]) for r in rows]

    def run_counts(self) -> dict[str, int]:
        with self._guard():
            return dict(self.conn.execute(
                "SELECT status, count(*) FROM consolidation_runs GROUP BY status").fetchall())

    def acquire_lease(self, name: str, owner: str, until: datetime, now: datetime) -> bool:
        with self._guard(write=True):
            self._transaction(lambda conn: conn.execute(
                "INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, "
                "expires_at = excluded.expires_at "
                "WHERE leases.owner = excluded.owner OR leases.expires_at <= ?",
                (name, owner, until.timestamp(), now.timestamp())))
            row = self.conn.execute("SELECT owner FROM leases WHERE name = ?",
                                    (name,)).fetchone()
        return bool(row and row[0] == owner)

    def lease_holder(self, name: str) -> tuple[str, datetime] | None:
        with self._guard():
            row = self.conn.execute("SELECT owner, expires_at FROM leases WHERE name = ?",
                                    (name,)).fetchone()
        return None if row is None else (str(row[0]), datetime.fromtimestamp(row[1], UTC))

    def release_lease(self, name: str, owner: str) -> None:
        with self._guard(write=True):
            self._transaction(lambda conn: conn.execute(
                "DELETE FROM leases WHERE name = ? AND owner = ?", (name, owner)))
