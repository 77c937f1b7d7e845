"""Embedded default store: SQLite (WAL, FTS5) + each namespace's vectors in memory
(``graphmem.store.ann``: exact numpy top-k, faiss indexes past ``TuningConfig.ann_min``).

The SQL lives beside it in ``store/sqlite/`` (imported here as ``sqlite_<module>``):
``rows`` (reads and row decoding), ``writes`` (a write batch's statements), ``keywords``
(BM25 statistics), ``jobs`` (consolidation runs and leases), ``counters`` (event windows),
``context`` (the session context), ``schema`` (migrations); this class owns the
connections, the locks and the in-memory vectors.

SQLite is the source of truth; a namespace's vectors are loaded on its first use (opening
reads none: a namespace costs what it holds, ADR 0068) and updated only after a transaction
commits, so a failed write leaves both untouched. One process owns a data
folder (``FolderLock``). Inside it, reads run side by side, each thread on its own SQLite
connection (WAL); writes take turns on the store's connection and run beside the reads (WAL
readers keep their snapshot), and only the step that brings the in-memory index in step with
a committed write excludes reads (``RWLock``): a read sees the index before or after a write,
never half of it.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from graphmem.config import StoreConfig, TuningConfig
from graphmem.errors import MissingStoreError, StoreError
from graphmem.models import (
    Candidate,
    Memory,
    Relation,
    RelationType,
    Status,
    TermStats,
    Tier,
    Transition,
)
from graphmem.store.ann import load as ann_load
from graphmem.store.ann.builder import Builder
from graphmem.store.ann.files import RowFiles, count_memories, read_epoch
from graphmem.store.ann.index import VectorIndex
from graphmem.store.base import (
    ActiveColumns,
    Beside,
    Counts,
    ListSpec,
    VectorField,
    WriteBatch,
    active_columns,
    breadth_first,
)
from graphmem.store.sqlite import counters as sqlite_counters
from graphmem.store.sqlite import jobs as sqlite_jobs
from graphmem.store.sqlite import keywords as sqlite_keywords
from graphmem.store.sqlite import rows as sqlite_rows
from graphmem.store.sqlite import writes as sqlite_writes
from graphmem.store.sqlite.checkpoint import BACKSTOP_PAGES, Checkpointer
from graphmem.store.sqlite.context import SQLiteContext
from graphmem.store.sqlite.lock import FolderLock
from graphmem.store.sqlite.rwlock import RWLock
from graphmem.store.sqlite.schema import migrate

log = logging.getLogger(__name__)
T = TypeVar("T")

DB_FILE = "graphmem.db"
#: full-text rows written (inserted, re-tagged, deleted) since the index was last merged into
#: one segment, past which the next write merges it: every write leaves FTS5 a segment, and
#: a query reads them all (ADR 0021): the greater of this and a quarter of the store's rows
_FTS_MERGE_MIN = 20_000
#: ... and a session that wrote at least this many closes with the index merged
_FTS_MERGE_AT_CLOSE = 1000
#: ``_share`` counts the store's memories again after this many asks (a hint may be stale)
_TOTAL_EVERY = 256


class SQLiteStore(SQLiteContext):  # the session context: context.py
    """The embedded store over one data folder (see module docstring).

    Example:
        >>> import tempfile
        >>> store = SQLiteStore(tempfile.mkdtemp(), dim=2)
        >>> store.open()
        >>> store.namespaces(), store.counts("ops").memories
        ([], {})
        >>> store.close()
    """

    #: FTS5 ranks by BM25 with graphmem's field weights: 300 candidates hold graphmem's
    #: keyword seeds (LoCoMo answers as with 1000, and faster: ADR 0038)
    keyword_pool = 300
    #: every read is SQLite and numpy in this process (ADR 0051)
    cpu_bound = True

    def __init__(self, folder: str | Path, *, dim: int = 384, config: StoreConfig | None = None,
                 tuning: TuningConfig | None = None, create: bool = True) -> None:
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
        self._total = (0, 0)  # (asks, the store's memories when last counted): ``_share``
        self._folder_lock = FolderLock(self.folder)
        self._conn: sqlite3.Connection | None = None
        self._vectors: dict[str, VectorIndex] = {}  # the namespaces used since open
        self._loading = threading.Lock()  # one thread loads a namespace's vectors
        tuning = tuning or TuningConfig()
        self._ann = Builder(tuning.ann_min, tuning.ann_build_in_background)
        self._rows = RowFiles(self.folder, dim)
        self._checkpoints = Checkpointer(self.folder / DB_FILE,
                                         busy_timeout_ms=self.config.busy_timeout_ms)

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
            # the checkpoints run beside the commits (ADR 0044)
            conn.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
            # a write whose rows fire triggers (the kept counts, ADR 0034) opens a statement
            # journal per statement: in memory, not a temporary file per statement
            conn.execute("PRAGMA temp_store = MEMORY")
            self._tune(conn)
            migrate(conn)
            self._conn = conn
        except BaseException as exc:
            self._folder_lock.release()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot open {self.folder / DB_FILE}: {exc}") from exc
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
                for ns, index in self._vectors.items():
                    if index.mapped:
                        self._rows.save(ns, read_epoch(self._conn, ns),
                                        count_memories(self._conn, ns), index.state(),
                                        index.ann)
                # the last writes are in; closing the last connection checkpoints what is left
                self._checkpoints.stop()
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
        if not self._lock.reading_here() or getattr(self._local, "borrowed", 0) > 0:
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
        and decodes its B-tree pages afresh; the
        writer's own cache stays warm (ADR 0023). Long scans do not borrow: they would hold
        writes off."""
        if write and self._lock.reading_here():
            raise StoreError("a write inside a read")  # a bug: it would see a stale snapshot
        with self._write_mutex if write else self._lock.read():
            borrowed = not write and borrow and self._write_mutex.acquire(blocking=False)
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
        """Until the faiss indexes being built are installed (benchmarks, tests)."""
        self._ann.wait(timeout)

    def ann_states(self) -> dict[str, str]:
        """namespace -> building | built, for the namespaces with faiss indexes."""
        return dict(self._ann.state)

    def _index(self, namespace: str) -> VectorIndex:
        """The namespace's vectors, loaded on first use (a read or the write lock held): the
        whole index is published at once, never half of it."""
        index = self._vectors.get(namespace)
        if index is None:
            with self._loading:
                index = self._vectors.get(namespace)
                if index is None:
                    index = ann_load.load(self.conn, namespace, self.dim, self._rows,
                                          self._ann.ann_min)
                    if index.ann is not None:
                        self._ann.state[namespace] = "loaded"
                    self._ann.consider(namespace, index, self._lock)
                    self._vectors[namespace] = index
        return index

    # writes ---------------------------------------------------------------------------------
    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work`` in one transaction on the store's connection (writes take turns); what
        it returns."""
        with self._guard(write=True):
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException as exc:
                # SQLite rolls back by itself on some errors (SQLITE_FULL, IOERR): a second
                # ROLLBACK would raise "cannot rollback - no transaction is active" over it
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"write failed, nothing was written: {exc}") from exc
                raise
            self._checkpoints.committed()
            return result

    def apply(self, batch: WriteBatch) -> None:
        if not batch:
            return
        batch.check()
        ns = batch.namespace
        with self._guard(write=True):  # the next write waits until the index is in step
            new_pks, patched_states = self._write(lambda conn: sqlite_writes.write(conn, batch))
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
        index = self._vectors.get(ns)
        if index is None:
            return  # not loaded: its first use reads it, this write included
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
        if self._ann.ann_min and not index.mapped and len(index) >= self._ann.ann_min:
            index.map_rows(ann_load.mapped(self._rows, ns))
        self._ann.consider(ns, index, self._lock)

    # reads (SQL in sqlite_rows; short ones borrow the store's connection, ADR 0023) ---------
    def get_memories(self, namespace: str, ids: Sequence[str], *,
                     embeddings: bool = False) -> dict[str, Memory]:
        with self._guard(borrow=True):
            return sqlite_rows.memories_by_id(self.conn, namespace, ids, embeddings)

    def similarities(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]:
        with self._guard():
            return self._index(namespace).similarities(ids, vector)

    def get_scored(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                   ) -> tuple[dict[str, Candidate], dict[str, tuple[float, float | None]]]:
        with self._guard(borrow=True):
            index = self._index(namespace)
            unique = list(dict.fromkeys(ids))
            found = sqlite_rows.candidates(self.conn, namespace, unique, index.pks_of(unique))
            return found, index.similarities(unique, vector)

    def keyword_fields(self, namespace: str, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        with self._guard(borrow=True):
            return sqlite_rows.keyword_fields(self.conn, namespace, ids)

    def find_by_hash(self, namespace: str, hashes: Collection[str]) -> dict[str, str]:
        with self._guard(borrow=True):
            return sqlite_rows.find_by_hash(self.conn, namespace, hashes)

    def session_members(self, namespace: str, session_id: str) -> list[tuple[str, datetime]]:
        with self._guard(borrow=True):
            return sqlite_rows.session_members(self.conn, namespace, session_id)

    def session_version(self, namespace: str, session_id: str) -> int:
        return 0  # one process writes a data folder: its lock orders the session's writers

    def time_window(self, namespace: str, anchor: Memory, *, before: int, after: int,
                    session_only: bool,
                    statuses: Collection[Status] = (Status.ACTIVE, Status.ARCHIVED),
                    now: datetime | None = None,
                    ) -> tuple[list[Memory], list[Memory]]:
        with self._guard():
            return sqlite_rows.time_window(self.conn, namespace, anchor, before=before,
                                           after=after, session_only=session_only,
                                           statuses=statuses, now=now)

    def iter_memories(self, namespace: str, *, page: int = 1000, embeddings: bool = True,
                      statuses: Collection[Status] | None = None) -> Iterator[list[Memory]]:
        last = 0
        while True:
            with self._guard():
                last, memories = sqlite_rows.memory_page(self.conn, namespace, last, page,
                                                         embeddings, statuses)
            if not memories:
                return
            yield memories

    def active_columns(self, namespace: str) -> ActiveColumns:
        with self._guard():
            rows = self.conn.execute(
                "SELECT tier, base_importance, coalesce(reinforced_at, last_accessed_at), "
                "created_at, surprise_score, coalesce(stored_at, last_accessed_at) "
                "FROM memories WHERE namespace = ? AND "
                "status = 'active'", (namespace,)).fetchall()
        return active_columns(rows)

    def list_page(self, namespace: str, spec: ListSpec) -> list[Memory]:
        with self._guard():
            return sqlite_rows.list_page(self.conn, namespace, spec)

    def transition_counts(self, namespace: str, since: datetime
                          ) -> list[tuple[str, Tier, Tier, int, int]]:
        with self._guard():
            return sqlite_rows.transition_counts(self.conn, namespace, since)

    def transitions_of(self, namespace: str, memory_id: str) -> list[Transition]:
        with self._guard():
            return sqlite_rows.transitions_of(self.conn, namespace, memory_id)

    def recent_transitions(self, namespace: str, limit: int,
                           since: datetime | None = None) -> list[Transition]:
        with self._guard():
            return sqlite_rows.recent_transitions(self.conn, namespace, limit, since)

    def iter_edges(self, namespace: str, *, page: int = 5000) -> Iterator[list[Relation]]:
        after: tuple[str, str, str] = ("", "", "")
        while True:
            with self._guard():
                edges = sqlite_rows.edge_page(self.conn, namespace, after, page)
            if not edges:
                return
            last = edges[-1]
            after = (last.source_id, last.target_id, last.type.value)
            yield edges

    def namespaces(self) -> list[str]:
        with self._guard():
            return [r[0] for r in self.conn.execute(  # the kept counts (ADR 0034)
                "SELECT DISTINCT namespace FROM memory_counts WHERE n > 0 ORDER BY namespace")]

    def counts(self, namespace: str) -> Counts:
        with self._guard():
            return sqlite_rows.counts(self.conn, namespace)

    # graph ----------------------------------------------------------------------------------
    def edges_of(self, namespace: str, ids: Collection[str],
                 types: Collection[RelationType] | None = None) -> list[Relation]:
        with self._guard(borrow=True):
            return sqlite_rows.edges_of(self.conn, namespace, ids, types)

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
            return self._index(namespace).topk(vector, k, field=field, tiers=tiers,
                                               statuses=statuses)

    def vector_topk_fields(self, namespace: str, vector: np.ndarray, k: int, *,
                           tiers: Collection[Tier] | None = None,
                           statuses: Collection[Status] = (Status.ACTIVE,),
                           beside: Beside | None = None,
                           ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        with self._guard():  # held until ``beside``'s search is back too
            return self._index(namespace).topk_fields(vector, k, tiers=tiers,
                                                      statuses=statuses, beside=beside)

    def vector_topk_many(self, namespace: str, vectors: np.ndarray, k: int, *,
                         statuses: Collection[Status] = (Status.ACTIVE,),
                         min_score: float | None = None,
                         ) -> list[list[tuple[str, float]]]:
        with self._guard():  # the hits under ``min_score`` are the caller's to drop
            return self._index(namespace).topk_many(vectors, k, statuses=statuses)

    def keyword_topk(self, namespace: str, terms: Sequence[str], k: int, *,
                     tiers: Collection[Tier] | None = None,
                     statuses: Collection[Status] = (Status.ACTIVE,), newest: bool = False,
                     ) -> list[tuple[str, float]]:
        with self._guard(borrow=True):
            rows = sqlite_rows.keyword_rows(self.conn, namespace, terms, k, tiers, statuses,
                                            newest, share=0.0 if newest else self._share(
                                                namespace, tiers, statuses))
        return [(r[0], float(r[1])) for r in rows]

    def keyword_candidates(self, namespace: str, terms: Sequence[str], k: int, *,
                           tiers: Collection[Tier] | None = None,
                           statuses: Collection[Status] = (Status.ACTIVE,),
                           newest: bool = False) -> list[tuple[str, str, str]]:
        with self._guard(borrow=True):
            ranked = newest or self._many_match(namespace, terms, k)
            rows = sqlite_rows.keyword_rows(
                self.conn, namespace, terms, k, tiers, statuses, newest, ranked=ranked,
                share=self._share(namespace, tiers, statuses) if ranked and not newest
                else 0.0)
        return [(r[0], r[2] or "", r[3] or "") for r in rows]

    def _share(self, namespace: str, tiers: Collection[Tier] | None,
               statuses: Collection[Status]) -> float:
        """``sqlite_rows.share``, the store's total counted again every ``_TOTAL_EVERY``
        asks (ADR 0041)."""
        asked, total = self._total
        if asked % _TOTAL_EVERY == 0:
            total = sqlite_rows.total_memories(self.conn)
        self._total = (asked + 1, total)
        return sqlite_rows.share(self.conn, namespace, tiers, statuses, total)

    def _many_match(self, namespace: str, terms: Sequence[str], k: int) -> bool:
        """One term alone is in more than ``k`` of the namespace's fields: more than ``k``
        memories match, so the unscored first try (ADR 0022) would be read and thrown away
        (at 10k, 6 of a search's 14 ms; ADR 0035). Only a hint: the ranked statement is the
        answer either way. Not asked for the newest matches, which are never scored."""
        stats = sqlite_keywords.read(self.conn, namespace, terms)
        return any(field.df.get(t, 0) > k for field in stats for t in terms)

    def keyword_stats(self, namespace: str, terms: Sequence[str]
                      ) -> tuple[TermStats, TermStats]:
        with self._guard(borrow=True):
            return sqlite_keywords.read(self.conn, namespace, terms)

    # jobs (the statements in ``sqlite_jobs``) -----------------------------------------------
    def save_run(self, run: dict[str, Any]) -> None:
        self._write(lambda conn: sqlite_jobs.save_run(conn, run))

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        with self._guard():
            return sqlite_jobs.get_run(self.conn, run_id)

    def list_runs(self) -> list[dict[str, Any]]:
        with self._guard():
            return sqlite_jobs.list_runs(self.conn)

    def run_counts(self) -> dict[str, int]:
        with self._guard():
            return sqlite_jobs.run_counts(self.conn)

    def acquire_lease(self, name: str, owner: str, until: datetime, now: datetime) -> bool:
        return self._write(lambda conn: sqlite_jobs.take_lease(conn, name, owner, until, now))

    def lease_holder(self, name: str) -> tuple[str, datetime] | None:
        with self._guard():
            return sqlite_jobs.lease_holder(self.conn, name)

    def release_lease(self, name: str, owner: str) -> None:
        self._write(lambda conn: sqlite_jobs.release_lease(conn, name, owner))

    # limits (the statement in ``sqlite_counters``) --------------------------------------------
    def count_event(self, namespace: str, key: str, limit: int, window_seconds: float,
                    now: datetime) -> bool:
        return self._write(lambda conn: sqlite_counters.count_event(
            conn, namespace, key, limit, window_seconds, now))
