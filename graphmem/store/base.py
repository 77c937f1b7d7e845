"""The store port: the one narrow protocol through which the core reaches storage.

Every method is scoped to one namespace. Adapters (``sqlite.py``, the Cypher adapter) implement
it; the contract suite in ``tests/integration/test_store_contract.py`` runs against each. An
adapter raises only ``graphmem.errors`` types (``StoreError`` and its branches) and wraps its
driver's exceptions at this boundary.

Conventions: embeddings are float32 rows, L2-normalised; scores are "higher is better"
(cosine similarity for vectors, positive BM25 for keywords); a ``WriteBatch`` is applied in
one transaction — all of it or none of it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from graphmem.errors import StoreError
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

EdgeKey = tuple[str, str, RelationType]
VectorField = Literal["content", "context"]
#: runs a function on a spare thread when one is free and returns what waits for its result
#: (without a spare thread, the waiting runs it): ``Retriever.beside`` (ADR 0070)
Beside = Callable[[Callable[[], Any]], Callable[[], Any]]


@dataclass(slots=True)
class WriteBatch:
    """Everything one logical write changes in a namespace, applied atomically.

    ``memories`` are upserted whole (new or replacing the stored record) - except that a
    memory given without ``embedding`` keeps both stored vectors; ``edges`` are
    upserted by key (source, target, type). Deleting a memory also deletes its edges.
    Order inside the transaction: delete edges, delete memories, upsert memories, patch
    memories, upsert edges, record transitions.

    Example:
        >>> from graphmem.models import Memory
        >>> batch = WriteBatch("ops", memories=[Memory(id="m1", namespace="ops", content="x")])
        >>> bool(batch), bool(WriteBatch("ops"))
        (True, False)
    """

    namespace: str
    memories: list[Memory] = field(default_factory=list)
    edges: list[Relation] = field(default_factory=list)
    delete_edges: list[EdgeKey] = field(default_factory=list)
    delete_memories: list[str] = field(default_factory=list)
    #: field-level updates (id, {field: value}) of existing memories, fields from PATCH_FIELDS:
    #: bookkeeping and tier dynamics never rewrite content a concurrent update may change
    patches: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    transitions: list[Transition] = field(default_factory=list)
    #: ids among ``memories`` that must not exist yet: the database refuses to create one
    #: that does, and the whole batch with it (``DuplicateError``). On a graph engine an
    #: active new memory also holds its content hash under a uniqueness constraint, so two
    #: processes writing the same content at once cannot both create it (issue 45)
    new_ids: set[str] = field(default_factory=set)
    #: session id -> its ``session_version`` when the batch planned the session's FOLLOWS
    #: chain: a graph engine refuses the batch (``DuplicateError``) when another writer
    #: changed that chain meanwhile, and counts this one (issue 45)
    sessions: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.memories or self.edges or self.delete_edges or self.delete_memories
                    or self.patches or self.transitions)

    def check(self) -> None:
        """Every record must belong to the batch's namespace; patches touch allowed fields."""
        ns = self.namespace
        if any(m.namespace != ns for m in self.memories) or any(
                e.namespace != ns for e in self.edges):
            raise StoreError("a write batch spans one namespace")
        for _, fields_ in self.patches:
            bad = set(fields_) - PATCH_FIELDS
            if bad:
                raise StoreError(f"fields {sorted(bad)} cannot be patched")


#: the fields a patch may set (scalars of the dynamics and the bookkeeping)
PATCH_FIELDS = frozenset({
    "tier", "status", "importance", "base_importance", "pinned", "last_accessed_at",
    "access_count", "surprise_score", "success_count", "failure_count", "last_promoted_at",
    "window_start", "window_count", "last_predicted", "updated_at", "reinforced_at",
    "valid_until", "superseded_by", "used_by", "expires_at",
})

#: what a listing may be sorted by (numbers as stored: times in seconds)
SORT_FIELDS = ("created_at", "stored_at", "updated_at", "last_accessed_at", "importance")


@dataclass(slots=True, frozen=True)
class ListSpec:
    """One page of a filtered, sorted listing (``list_page``): every filter optional, the
    order by ``sort`` (from ``SORT_FIELDS``) then id, ``after``: the (sort value, id) of the
    last memory of the page before (keyset pagination: a page never repeats or skips a
    memory written meanwhile elsewhere in the order). ``since`` / ``until``: event time
    (``created_at``), at or after / before.

    Example:
        >>> ListSpec(types=("decision",), sort="importance").descending
        True
    """

    statuses: tuple[Status, ...] | None = (Status.ACTIVE,)
    tiers: tuple[Tier, ...] | None = None
    types: tuple[str, ...] | None = None
    source: str | None = None
    session_id: str | None = None
    topic: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    sort: str = "created_at"
    descending: bool = True
    after: tuple[float, str] | None = None
    limit: int = 50
    #: statuses as of this time (issue 48): an active memory whose own TTL ran out by then
    #: counts as ``expired`` (None: as stored)
    now: datetime | None = None


def breadth_first(seeds: Collection[str], depth: int, max_nodes: int,
                  hop: Callable[[list[str]], Iterable[Relation]]) -> list[Relation]:
    """Edges met walking ``depth`` hops out from the seeds, both directions, reaching at most
    ``max_nodes`` nodes; ``hop(frontier)`` gives the edges touching the frontier. The one
    walk order every adapter shares."""
    seen = set(seeds)
    frontier = list(seen)
    out: dict[EdgeKey, Relation] = {}
    for _ in range(depth):
        if not frontier:
            break
        frontier_set = set(frontier)
        nxt: list[str] = []
        for e in hop(frontier):
            for node, other in ((e.source_id, e.target_id), (e.target_id, e.source_id)):
                if node not in frontier_set:
                    continue
                if other not in seen:
                    if len(seen) >= max_nodes:
                        continue
                    seen.add(other)
                    nxt.append(other)
                out[e.key] = e
        frontier = nxt
    return list(out.values())


@dataclass(slots=True, frozen=True)
class Counts:
    """What ``stats`` needs from a store: counts by (tier, status, kind) and by edge type.

    Example:
        >>> from graphmem.models import Status, Tier
        >>> c = Counts({(Tier.FAST, Status.ACTIVE, "memory"): 3}, {})
        >>> sum(c.memories.values())
        3
    """

    memories: dict[tuple[Tier, Status, str], int]
    edges: dict[RelationType, int]


@dataclass(slots=True)
class ActiveColumns:
    """The numbers operators' statistics aggregate, one entry per *active* memory of a
    namespace, as arrays: counted with numpy instead of a loop over memory objects (ADR 0018).

    Example:
        >>> import numpy as np
        >>> c = ActiveColumns(np.array(["fast"]), np.array([0.5]), np.array([0.0]),
        ...                   np.array([0.0]), np.array([0.1]), np.array([0.0]))
        >>> len(c)
        1
    """

    tier: np.ndarray  # Tier values (str)
    base_importance: np.ndarray
    reinforced_at: np.ndarray  # POSIX seconds
    created_at: np.ndarray  # POSIX seconds
    surprise: np.ndarray
    stored_at: np.ndarray  # POSIX seconds: when it was stored here (ages count from it)

    def __len__(self) -> int:
        return len(self.tier)


def active_columns(rows: Sequence[Sequence[Any]]) -> ActiveColumns:
    """``ActiveColumns`` of (tier, base_importance, reinforced_at, created_at, surprise,
    stored_at) rows (the adapters' shared last step)."""
    if not rows:
        empty = np.zeros(0)
        return ActiveColumns(np.array([], dtype=object), empty, empty, empty, empty, empty)
    tier, base, reinforced, created, surprise, stored = zip(*rows, strict=True)
    return ActiveColumns(np.array(tier, dtype=object),
                         *(_floats(col) for col in (base, reinforced, created, surprise,
                                                    stored)))


def _floats(values: Sequence[Any]) -> np.ndarray:
    """Numbers as float64, a missing one (None) as 0: numpy converts a whole column at once
    (None becomes NaN), much faster than a comprehension calling ``float`` (ADR 0018).

    Example:
        >>> _floats([0.5, None, 2]).tolist()
        [0.5, 0.0, 2.0]
    """
    out = np.array(values, dtype=np.float64)
    out[np.isnan(out)] = 0.0
    return out


@runtime_checkable
class MemoryStore(Protocol):
    """The port: everything the core asks of a storage backend (SQLite, Neo4j, FalkorDB).

    Example:
        >>> import tempfile
        >>> from graphmem.store.sqlite.store import SQLiteStore
        >>> store = SQLiteStore(tempfile.mkdtemp())
        >>> isinstance(store, MemoryStore)
        True
    """

    #: full-text candidates retrieval asks for when ``tuning.keyword_pool`` is not set: as
    #: many as the engine's own scorer needs for graphmem's BM25 to find its best among them
    #: (ADR 0007: RediSearch's TF-IDF needs ~1000; SQLite's FTS5 BM25 300, ADR 0038)
    keyword_pool: int
    #: a retrieval's store work is CPU in this process (the embedded store: True), not
    #: waits on a server's round trips; concurrent retrievals are then held to the cores
    #: (``retrieval.concurrency``, ADR 0051)
    cpu_bound: bool

    # lifecycle --------------------------------------------------------------------------
    def open(self) -> None:
        """Connect, create/migrate the schema, warm caches. Constructors do no I/O."""

    def close(self) -> None: ...

    def ping(self) -> None:
        """Really query the backend; raise ``StoreError`` when it cannot."""

    def compact(self, min_stale: int = 1) -> int:
        """Reclaim what replaced or deleted records left behind, when at least ``min_stale``
        such leftovers wait (maintenance calls this). Returns the leftovers removed."""

    # writes -----------------------------------------------------------------------------
    def apply(self, batch: WriteBatch) -> None:
        """Apply the whole batch in one transaction, or nothing of it."""

    # reads ------------------------------------------------------------------------------
    def get_memories(
        self, namespace: str, ids: Sequence[str], *, embeddings: bool = False
    ) -> dict[str, Memory]:
        """The memories of ``ids`` that exist in the namespace (any status)."""

    def similarities(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]:
        """id -> (cosine of ``vector`` to the memory's content vector, to its context vector or
        None without one), for the memories of ``ids`` that have a content vector: retrieval's
        semantic terms, computed where the vectors are (none cross the port)."""

    def get_scored(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                   ) -> tuple[dict[str, Candidate], dict[str, tuple[float, float | None]]]:
        """The ``Candidate`` of each of ``ids`` in the namespace (any status) and the
        ``similarities`` of the same ids, in one read: retrieval's candidates and their
        semantic terms, one round trip on a server (ADR 0017). A candidate holds the
        fields retrieval ranks by (ADR 0041); an adapter that read the whole record hands
        it along in ``Candidate.memory``."""

    def keyword_fields(self, namespace: str, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """id -> (keywords, context_keywords) of the memories of ``ids`` in the namespace: the
        light read with which retrieval ranks full-text candidates itself (ADR 0007)."""

    def find_by_hash(self, namespace: str, hashes: Collection[str]) -> dict[str, str]:
        """content_hash -> id of an *active* memory with that hash."""

    def session_members(self, namespace: str, session_id: str) -> list[tuple[str, datetime]]:
        """(id, created_at) of the session's memories, in session order (time, then insertion)."""

    def session_version(self, namespace: str, session_id: str) -> int:
        """How many batches have changed the session's chain (0 for none): read before its
        members, and given back in ``WriteBatch.sessions`` (issue 45)."""

    def time_window(
        self, namespace: str, anchor: Memory, *, before: int, after: int,
        session_only: bool, statuses: Collection[Status] = (Status.ACTIVE, Status.ARCHIVED),
        now: datetime | None = None,
    ) -> tuple[list[Memory], list[Memory]]:
        """Up to ``before`` memories just before the anchor (nearest first) and ``after`` just
        after it (nearest first), in the anchor's session or the whole namespace; ``now``:
        without those whose own TTL ran out by then (issue 48)."""

    def list_page(self, namespace: str, spec: ListSpec) -> list[Memory]:
        """Up to ``spec.limit`` memories matching the spec's filters, in its order, after
        ``spec.after`` (without vectors)."""

    def iter_memories(self, namespace: str, *, page: int = 1000, embeddings: bool = True,
                      statuses: Collection[Status] | None = None) -> Iterator[list[Memory]]:
        """Every memory (of these statuses), in insertion order, a page at a time."""

    def active_columns(self, namespace: str) -> ActiveColumns:
        """Tier, base importance, reinforced_at, created_at, surprise and stored_at of every
        active memory, as arrays (operators' statistics, no memory objects)."""

    def transition_counts(self, namespace: str, since: datetime
                          ) -> list[tuple[str, Tier, Tier, int, int]]:
        """(kind, from tier, to tier, total, at or after ``since``) of recorded transitions."""

    def transitions_of(self, namespace: str, memory_id: str) -> list[Transition]:
        """A memory's recorded transitions, oldest first."""

    def recent_transitions(self, namespace: str, limit: int,
                           since: datetime | None = None) -> list[Transition]:
        """The namespace's latest ``limit`` transitions (at or after ``since``), newest first."""

    def iter_edges(self, namespace: str, *, page: int = 5000) -> Iterator[list[Relation]]: ...

    def namespaces(self) -> list[str]: ...

    def counts(self, namespace: str) -> Counts: ...

    # graph ------------------------------------------------------------------------------
    def edges_of(
        self, namespace: str, ids: Collection[str],
        types: Collection[RelationType] | None = None,
    ) -> list[Relation]:
        """Edges with either end in ``ids`` (each edge once)."""

    def neighbourhood(
        self, namespace: str, seeds: Collection[str], depth: int, *,
        types: Collection[RelationType] | None = None, max_nodes: int = 1000,
    ) -> list[Relation]:
        """Edges met by a breadth-first walk of ``depth`` hops (both directions) from the
        seeds, reaching at most ``max_nodes`` nodes."""

    # search -----------------------------------------------------------------------------
    def vector_topk(
        self, namespace: str, vector: np.ndarray, k: int, *, field: VectorField = "content",
        tiers: Collection[Tier] | None = None,
        statuses: Collection[Status] = (Status.ACTIVE,),
    ) -> list[tuple[str, float]]:
        """Top-k (id, cosine similarity), best first."""

    def vector_topk_fields(
        self, namespace: str, vector: np.ndarray, k: int, *,
        tiers: Collection[Tier] | None = None,
        statuses: Collection[Status] = (Status.ACTIVE,), beside: Beside | None = None,
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """``vector_topk`` of the content and the context field, in one call. An adapter may
        search one field on ``beside`` meanwhile: the embedded store does for large
        namespaces (ADR 0070)."""

    def vector_topk_many(
        self, namespace: str, vectors: np.ndarray, k: int, *,
        statuses: Collection[Status] = (Status.ACTIVE,), min_score: float | None = None,
    ) -> list[list[tuple[str, float]]]:
        """``vector_topk`` on the content field for each row of ``vectors`` (batched writes).
        ``min_score``: the caller keeps only hits at or above it, so an adapter may leave out
        the ones below (every hit it returns is exact, and none at or above is missing)."""

    def keyword_topk(
        self, namespace: str, terms: Sequence[str], k: int, *,
        tiers: Collection[Tier] | None = None,
        statuses: Collection[Status] = (Status.ACTIVE,), newest: bool = False,
    ) -> list[tuple[str, float]]:
        """Up to k (id, engine score) holding any of ``terms`` in keywords or
        context_keywords, best first by the engine's own full-text score (FTS5 BM25,
        RediSearch TF-IDF, Lucene BM25). ``terms`` are already analysed
        (``graphmem.rules.text.Analyzer``). The score only chooses the candidates: retrieval ranks
        them with its own BM25 and ``bm25_field_weights`` on every engine (ADR 0007).
        ``newest``: the caller knows the terms' postings exceed its budget; a store whose
        engine must score every posting to rank may return the k matches it stored last
        instead, newest first with score 0 (SQLite: FTS5 walks rowids without scoring,
        ADR 0011). Filters hold either way."""

    def keyword_candidates(
        self, namespace: str, terms: Sequence[str], k: int, *,
        tiers: Collection[Tier] | None = None,
        statuses: Collection[Status] = (Status.ACTIVE,), newest: bool = False,
    ) -> list[tuple[str, str, str]]:
        """``keyword_topk``'s candidates, each as (id, keywords, context_keywords): the
        search and the light read with which retrieval ranks them itself (ADR 0007) in one
        round trip (ADR 0017). When more than ``k`` match, ``keyword_topk``'s first ``k``
        in its order; when all of them fit, all of them in any order (an adapter may skip
        its own scoring then: ADR 0022)."""

    def keyword_stats(self, namespace: str, terms: Sequence[str]
                      ) -> tuple[TermStats, TermStats]:
        """Collection statistics of the namespace's two keyword fields (keywords,
        context_keywords) for these terms, for BM25 in the core (``graphmem.rules.bm25``)."""

    # jobs -------------------------------------------------------------------------------
    def save_run(self, run: dict[str, Any]) -> None:
        """Insert or replace a consolidation run record (JSON-ready dict with ``id``,
        ``namespace`` (or null for all), ``status``, ``created_at`` (ISO))."""

    def get_run(self, run_id: str) -> dict[str, Any] | None: ...

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run, newest first."""

    def run_counts(self) -> dict[str, int]:
        """Runs by status, without reading their plans."""

    def acquire_lease(self, name: str, owner: str, until: datetime, now: datetime) -> bool:
        """Take or renew the named lease unless another owner holds it past ``now``."""

    def release_lease(self, name: str, owner: str) -> None: ...

    def lease_holder(self, name: str) -> tuple[str, datetime] | None:
        """(owner, expires_at) of the named lease, expired or not; None if never taken."""

    # limits -----------------------------------------------------------------------------
    def count_event(self, namespace: str, key: str, limit: int, window_seconds: float,
                    now: datetime) -> bool:
        """Count one event against ``key``'s window in the namespace, in one atomic step of
        the database, so every process and replica sharing the store counts together
        (the tool-capture cap, issue 45). True when the event is admitted and counted:
        the window holds fewer than ``limit`` events. False when it is full (the event is
        not counted). A window opens with the first event after the last one ended
        (``window_seconds`` after it opened; a new key opens one)."""

    # session context (issue 48): short-term, shared by every replica, expiring ----------
    def context_put(self, namespace: str, session: str, key: str, value_json: str,
                    expires_at: datetime) -> None:
        """Set (or replace) one key of a session's context, in one atomic step."""

    def context_get(self, namespace: str, session: str, key: str, now: datetime
                    ) -> tuple[str, datetime] | None:
        """(value_json, expires_at) of the key, None when missing or expired at ``now``."""

    def context_list(self, namespace: str, session: str, now: datetime
                     ) -> list[tuple[str, str, datetime]]:
        """(key, value_json, expires_at) of the session's unexpired keys, by key."""

    def context_delete(self, namespace: str, session: str, key: str | None) -> int:
        """Delete one key (None: every key of the session); the entries deleted."""

    def message_append(self, namespace: str, session: str, message_json: str, cap: int,
                       added_at: datetime, expires_at: datetime) -> None:
        """Append a message to the session's list and drop all but its newest ``cap``, in
        the same transaction (two appenders never leave more than ``cap``)."""

    def messages(self, namespace: str, session: str, now: datetime, limit: int
                 ) -> list[tuple[str, datetime, datetime]]:
        """(message_json, added_at, expires_at) of the session's newest ``limit`` unexpired
        messages, oldest first."""

    def messages_clear(self, namespace: str, session: str) -> int:
        """Delete every message of the session; the messages deleted."""

    def context_purge(self, namespace: str | None, now: datetime) -> int:
        """Delete the context entries and messages expired at ``now`` (of one namespace or
        all); the rows deleted. Reads never return them before this runs either."""


@runtime_checkable
class KeyRecords(Protocol):
    """Where API key records live (hashes only): a graph database, so every API replica of
    it shares them (``CypherStore``), or the embedded default's ``keys.db`` file beside its
    data (``graphmem.store.sqlite.keyfile.KeyFile``: a second process may write keys while
    the server runs, which the data folder's one-process lock would not allow).

    Example:
        >>> import tempfile, pathlib
        >>> from graphmem.store.sqlite.keyfile import KeyFile
        >>> isinstance(KeyFile(pathlib.Path(tempfile.mkdtemp()) / "keys.db"), KeyRecords)
        True
    """

    def save_key(self, record: dict[str, Any]) -> None:
        """Store a new record: id, hash, namespaces, role, label, created_at (seconds)."""

    def key_by_hash(self, key_hash: str) -> dict[str, Any] | None:
        """The active (not revoked) record of a hash: id, namespaces, role."""

    def list_keys(self) -> list[dict[str, Any]]:
        """Every record, oldest first, without hashes (revoked_at None while active)."""

    def revoke_key(self, key_id: str, at: float) -> bool:
        """Revoke an active key; False when there is no active key of that id."""
