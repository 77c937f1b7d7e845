"""``GraphMemory``: the facade, the only entry point for callers (CLI, REST, Python)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from graphmem.config import GraphMemConfig
from graphmem.engine import reads
from graphmem.engine import records as _records
from graphmem.engine.access import AccessLog
from graphmem.engine.agents import Agents
from graphmem.engine.core import Clock, Core
from graphmem.engine.edits import Editor
from graphmem.engine.embedding import Embedder, make_embedder
from graphmem.engine.events import Subscription
from graphmem.engine.maintenance import Maintainer, MaintenanceReport
from graphmem.engine.retrieval import Retriever, When
from graphmem.engine.session_context import ContextEntry, SessionContext
from graphmem.engine.writes import Writer
from graphmem.models import (
    ConsensusRecord,
    HistoryEntry,
    IndexEntry,
    Memory,
    MemoryInput,
    MemoryPage,
    Relation,
    RelationSpec,
    RelationType,
    RetrievalResult,
    Status,
    StreamSummary,
    Tier,
    Transition,
    utcnow,
)
from graphmem.rules import validation as v
from graphmem.rules.text import Analyzer
from graphmem.rules.ttl import seen, seen_all
from graphmem.store.base import Counts, KeyRecords, MemoryStore

if TYPE_CHECKING:
    from graphmem.consolidation import ConsolidationRun, Consolidator


class GraphMemory:
    """Long-term memory for agents over one store: the facade every face (Python, REST,
    MCP, CLI) calls. It validates, takes the in-process write lock where a call writes, and
    delegates to the core's parts (``writes``, ``edits``, ``access``, ``retrieval``,
    ``maintenance``, ``consolidation``, ``reads``, ``records``; ``agents`` for listing,
    history, validity, consensus, streams and tool capture; ``session_context`` for the
    short-term context). Thread-safe.

    Example:
        >>> import tempfile
        >>> with GraphMemory.open(tempfile.mkdtemp()) as mem:
        ...     m = mem.store("the deploy failed: the migration locked a table",
        ...                   namespace="ops", importance=0.8)
        ...     hits = mem.retrieve("why did the deploy fail?", namespace="ops")
        ...     hits[0].memory.id == m.id
        True
    """

    def __init__(self, store: MemoryStore, *, embedder: Embedder | None = None,
                 config: GraphMemConfig | None = None, clock: Clock | None = None) -> None:
        config = config or GraphMemConfig()
        self.core = Core(store, embedder or make_embedder(config.embedding, config.tuning),
                         Analyzer(config.write.language), config, clock or utcnow)
        self._write_lock = threading.RLock()
        self._writer = Writer(self.core)
        self._editor = Editor(self.core, self._writer)
        self._access = AccessLog(self.core, self._write_lock)
        self._retriever = Retriever(self.core, self._access)
        self._maintainer = Maintainer(self.core, self._write_lock)
        self._agents = Agents(self.core, self._retriever, self._write_lock)
        self._sessions = SessionContext(self.core)
        self.backend, self.config, self.clock = store, config, self.core.clock
        self.embedder: Embedder = self.core.embedder

    @classmethod
    def open(cls, target: str | Path, *, config: GraphMemConfig | None = None,
             clock: Clock | None = None, embedder: Embedder | None = None,
             create: bool = True) -> GraphMemory:
        """Open the store at ``target``: a data folder (the embedded default, created if
        needed unless ``create=False``: then ``MissingStoreError``), or ``neo4j://...`` /
        ``bolt://...`` / ``falkordb://...`` (see StoreConfig)."""
        from graphmem.store import make_store

        config = config or GraphMemConfig()
        store = make_store(target, config, create=create)
        store.open()
        return cls(store, embedder=embedder, config=config, clock=clock)

    def close(self) -> None:
        self.core.events.close()  # listeners end: nothing more will happen here
        self._access.close()  # deferred access bookkeeping is recorded first
        self._retriever.close()
        self.backend.close()

    def __enter__(self) -> GraphMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------
    def store(self, content: str, *, namespace: str, importance: float | None = None,
              tier: Tier | str | None = None,
              relations: Sequence[RelationSpec | Mapping[str, Any] | tuple[str, str]] = (),
              metadata: Mapping[str, Any] | None = None, **fields: Any) -> Memory:
        """Store one memory (or reinforce its exact twin) and return it. ``fields``: any of
        ``MemoryInput``'s (session_id, created_at - the event time -, source, topic, pinned,
        id, type, valid_from, valid_until, ttl - seconds it lives: then reads leave it out
        and maintenance marks it expired). Importance and tier default by type."""
        item = MemoryInput.coerce(dict(  # an unknown field is a ValidationError, not a TypeError
            fields, content=content, importance=importance, tier=tier,
            relations=list(relations), metadata=dict(metadata or {}) or None))
        return self.store_many([item], namespace=namespace)[0]

    def store_many(self, items: Sequence[MemoryInput | Mapping[str, Any] | str], *,
                   namespace: str) -> list[Memory]:
        """Store a batch atomically: all of it or, on any invalid item, nothing."""
        batch = [dict(x) if isinstance(x, Mapping) else x for x in items]
        vectors = self._writer.embed_ahead(namespace, batch)  # the model outside the lock
        with self._write_lock:
            return self._writer.store_many(namespace, batch, vectors=vectors)

    def relate(self, source_id: str, target_id: str, type: RelationType | str, *,
               namespace: str, score: float | None = None) -> Relation:
        """An explicit typed edge (CAUSES, REFERENCES, SIMILAR_TO, CONTRADICTS)."""
        ns = v.namespace(namespace)
        with self._write_lock:
            return self._editor.relate(ns, source_id, target_id, type, score)

    def unrelate(self, source_id: str, target_id: str, type: RelationType | str, *,
                 namespace: str) -> None:
        ns = v.namespace(namespace)
        with self._write_lock:
            self._editor.unrelate(ns, source_id, target_id, type)

    def relations(self, id: str, *, namespace: str, depth: int = 1, max_nodes: int = 100,
                  types: Collection[RelationType | str] | None = None) -> list[Relation]:
        """Edges of a memory, or (``depth=2``) its neighbourhood of at most ``max_nodes``."""
        return self._editor.relations(v.namespace(namespace), id, types, depth, max_nodes)

    def update(self, id: str, *, namespace: str, content: str | None = None,
               importance: float | None = None, tier: Tier | str | None = None,
               metadata: Mapping[str, Any] | None = None, source: str | None = None,
               topic: str | None = None, **fields: Any) -> Memory:
        """Change a memory (``fields``: type, valid_from, valid_until too; ``ttl``: it
        expires that many seconds from now, the TTL refreshed); new content is re-embedded
        and re-indexed, its links refreshed; ``history`` keeps the prior one."""
        ns = v.namespace(namespace)
        vectors = self._editor.embed_ahead(ns, id, content)  # the model outside the lock
        with self._write_lock:
            return seen(self._editor.update(ns, id, content=content, importance=importance,
                                            tier=tier, metadata=metadata, source=source,
                                            topic=topic, vectors=vectors, **fields),
                        self.clock())

    def delete(self, id: str, *, namespace: str) -> None:
        """Hard-delete a memory and its edges (explicit; the session chain is re-linked)."""
        ns = v.namespace(namespace)
        with self._write_lock:
            self._editor.delete(ns, id)

    # -- tier dynamics --------------------------------------------------------------------
    def feedback(self, id: str, *, namespace: str, useful: bool | None = None,
                 outcome: str | None = None, predicted_relevance: float | None = None,
                 agent: str | None = None) -> Memory:
        """Tell graphmem how a retrieved memory served: ``useful`` and/or ``outcome``
        ("success" | "failure"). Updates the surprise score (EMA of max(0, actual -
        predicted); predicted defaults to the relevance the memory had when retrieved),
        success / failure counts, and may promote it. Success reinforces (decay restarts).
        ``agent``: who gave it (N distinct agents within a window promote a shared memory)."""
        ns = v.namespace(namespace)
        with self._write_lock:
            return self._editor.feedback(ns, id, useful=useful, outcome=outcome,
                                         predicted_relevance=predicted_relevance, agent=agent)

    def pin(self, id: str, *, namespace: str, pinned: bool = True) -> Memory:
        """A pinned memory is never demoted, expired or evicted (``pinned=False``: unpin)."""
        with self._write_lock:
            return self._editor.set_pinned(v.namespace(namespace), id, pinned)

    def unpin(self, id: str, *, namespace: str) -> Memory:
        return self.pin(id, namespace=namespace, pinned=False)

    def restore(self, id: str, *, namespace: str, ttl: float | None = None) -> Memory:
        """Bring an expired or archived memory back to active (its decay age restarts).
        One whose own TTL ran out comes back without an expiry, or with ``ttl`` seconds."""
        ns = v.namespace(namespace)
        with self._write_lock:
            return self._editor.restore(ns, id, ttl)

    def maintain(self, namespace: str | None = None, *,
                 dry_run: bool = False) -> MaintenanceReport:
        """Decay, promotions, demotions, expiry and eviction (``engine.maintenance``)."""
        namespace = None if namespace is None else v.namespace(namespace)
        return self._maintainer.run(namespace, dry_run=dry_run)  # locks one page at a time

    def list_memories(self, *, namespace: str, status: Status | str = Status.ACTIVE,
                      tier: Tier | str | None = None, limit: int = 100) -> list[Memory]:
        """Memories of one status (e.g. the expired and archived ones, to restore)."""
        return reads.list_memories(self.core, v.namespace(namespace), status, tier, limit)

    def transitions(self, id: str | None = None, *, namespace: str, limit: int = 100,
                    since: datetime | None = None) -> list[Transition]:
        """A memory's recorded promotions, demotions, expiries, evictions and restores, oldest
        first; without ``id``, the namespace's latest ``limit`` (since ``since``), newest first."""
        return reads.transitions(self.core, v.namespace(namespace), id, limit, since)

    # -- consolidation ----------------------------------------------------------------------
    def consolidate(self, namespace: str | None = None, *, dry_run: bool = False,
                    progress: Callable[[str, int, int], None] | None = None) -> ConsolidationRun:
        """Cluster old memories into summaries (``graphmem.consolidation``); returns the run
        (``.id``, ``.status``, ``.report``). A crashed run is resumed first. ``progress`` is
        called with (stage, done, total) for progress bars. A dry run is saved: its report
        opens with ``report(run_id)``; it changes nothing else."""
        namespace = None if namespace is None else v.namespace(namespace)
        # planning runs without the write lock; applying takes it one cluster at a time
        return self._consolidator(progress).run(namespace, dry_run=dry_run)

    def approve(self, run_id: str) -> ConsolidationRun:
        """Apply a run held for approval (its retrieval check lost too much)."""
        return self._consolidator().approve(run_id)

    def rollback(self, run_id: str) -> ConsolidationRun:
        """Undo a run: its summaries removed, every member it archived active again."""
        return self._consolidator().rollback(run_id)

    def runs(self) -> list[dict[str, Any]]:
        """Consolidation runs, newest first (id, status, namespace, times, report summary)."""
        return reads.run_summaries(self.core)

    def run(self, run_id: str) -> dict[str, Any]:
        """One consolidation run's full record (NotFoundError if there is none)."""
        return reads.run_record(self.core, run_id)

    def run_counts(self) -> dict[str, int]:
        """Consolidation runs by status."""
        return self.backend.run_counts()

    # -- live events ------------------------------------------------------------------------
    def events(self, namespace: str, *, after: str | None = None,
               queue: int | None = None) -> Subscription:
        """Listen to what happens to the memories of ``namespace`` in this process (stored,
        updated, reinforced, deleted, related, promoted, archived, ..., consolidation run
        states): a ``Subscription`` to iterate (blocking) or ``take`` from; close it.
        ``after``: an event id to resume after (the retained ones first; a ``missed`` event
        when some are no longer kept). ``queue``: events held unread before the rest are
        counted as dropped (an ``overflow`` event, then a resume from the retained window).

        Example:
            >>> import tempfile
            >>> from graphmem.testing import RandomEmbedder
            >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
            ...     with mem.events("ops") as feed:
            ...         m = mem.store("the deploy failed", namespace="ops")
            ...         [(e.type, e.memory_id == m.id) for e in feed.take()]
            [('stored', True)]
        """
        return self.core.events.subscribe(v.namespace(namespace), after=after, queue=queue)

    def counts(self, *, namespace: str) -> Counts:
        """Memories by (tier, status, kind) and edges by type: cheap, for metrics."""
        return self.backend.counts(v.namespace(namespace))

    def transition_counts(self, *, namespace: str, since: datetime | None = None
                          ) -> list[tuple[str, Tier, Tier, int, int]]:
        """Tier transitions by (kind, from, to): all time, and at or after ``since`` (by
        default the last hour)."""
        since = since or self.clock() - timedelta(hours=1)
        return self.backend.transition_counts(v.namespace(namespace), since)

    def key_records(self) -> KeyRecords | None:
        """Where this store keeps API keys itself (a graph database), else None."""
        return self.backend if isinstance(self.backend, KeyRecords) else None

    def ping(self) -> None:
        """Raise StoreError unless the store answers a query."""
        self.backend.ping()

    def report(self, run_id: str, format: str = "json") -> str:
        """A run's report as ``json``, ``md`` or a self-contained ``html`` page with plots."""
        return reads.run_report(self.core, run_id, format)

    # -- reads ----------------------------------------------------------------------------
    def get(self, id: str, *, namespace: str) -> Memory:
        """One memory, whatever its status (one whose TTL ran out shows ``expired``)."""
        return seen(self.core.require(v.namespace(namespace), [id])[id], self.clock())

    def entries(self, ids: Sequence[str], *, namespace: str, touch: bool = True,
                agent: str | None = None) -> list[Memory]:
        """Full records of ``ids``, in that order (progressive disclosure, last step).
        Reading the full record is an access (``touch``), as a retrieval is; ``agent``: who
        read them (N distinct agents within a window promote a shared memory)."""
        return seen_all(self._access.read(v.namespace(namespace), ids, touch=touch,
                                          agent=v.optional_text(agent, "agent") or None),
                        self.clock())

    def retrieve(self, query: str, *, namespace: str, limit: int = 10,
                 tiers: Collection[Tier | str] | None = None,
                 min_similarity: float | None = None, strategy: str | None = None,
                 depth: int | None = None,
                 filters: Mapping[str, Any] | None = None,
                 include_archived: bool | None = None, record_access: bool = True,
                 since: When = None, until: When = None, as_of: When = None, now: When = None
                 ) -> list[RetrievalResult]:
        """The full pipeline: seeds, walk, rerank (see ``graphmem.engine.retrieval``).

        ``filters``: source, session_id, topic, kind, type (one or a list), metadata
        (equality), since / until (event time, as the keywords). ``as_of``: only what was
        known and valid then; without it, memories no longer valid rank lower. A time the
        query names ("in July 2023", "last week") lifts the memories of that time (term
        ``time``); ``now`` is the reference of relative ones (default: the store's clock).
        ``include_archived`` (default: only with ``strategy="comprehensive"``) also reaches
        archived memories through the summaries that stand for them. ``record_access``
        counts the results as accessed (agents); operators' reads pass False."""
        q = self._retriever.query(query, namespace, limit=limit, tiers=tiers,
                                  min_similarity=min_similarity, strategy=strategy,
                                  depth=depth, filters=filters,
                                  include_archived=include_archived, since=since,
                                  until=until, as_of=as_of, now=now)
        return self._retriever.retrieve(q, touch=record_access)

    def search_index(self, query: str, *, namespace: str, limit: int = 10,
                     **options: Any) -> list[IndexEntry]:
        """Compact previews (id, ~80 characters, tier, score, token estimate); no bookkeeping
        (the full read, ``entries``, is the access)."""
        options.pop("record_access", None)
        q = self._retriever.query(query, namespace, limit=limit, **options)
        return reads.index_entries(self.core, self._retriever.retrieve(q, touch=False))

    def timeline(self, anchor_id: str, *, namespace: str, before: int = 3, after: int = 3,
                 session_only: bool = True) -> list[Memory]:
        """The memories around ``anchor_id`` in time (its session when it has one), oldest
        first, the anchor included."""
        return reads.timeline(self.core, v.namespace(namespace), anchor_id, before, after,
                              session_only)

    def stats(self, *, namespace: str) -> dict[str, Any]:
        """Tier counts, statuses, kinds, edges; transitions in the last hour and in total;
        hit rate (this process), average surprise, importance and age histograms per tier."""
        from graphmem.engine.stats import namespace_stats

        ns = v.namespace(namespace)
        return namespace_stats(self.backend, ns, self.clock(), self.config,
                               queries=self._retriever.queries[ns],
                               hits=self._retriever.hits[ns]) | self.activity(namespace=ns)

    def namespaces(self) -> list[str]:
        return self.backend.namespaces()

    # -- what agents remember (ADR 0013) --------------------------------------------------
    def activity(self, *, namespace: str) -> dict[str, Any]:
        """This process's hot-cache hits / misses and tool events captured / skipped /
        dropped in the namespace (cheap: for ``/metrics``; ``stats`` includes it)."""
        return self._agents.activity(v.namespace(namespace))

    def list_page(self, *, namespace: str, type: str | Sequence[str] | None = None,
                  source: str | None = None, session_id: str | None = None,
                  topic: str | None = None, tier: str | None = None,
                  status: str | None = "active", since: When = None, until: When = None,
                  sort: str = "created_at", order: str = "desc", limit: int = 50,
                  cursor: str | None = None) -> MemoryPage:
        """Memories matching every filter given, sorted (``created_at`` - the event time -,
        ``stored_at``, ``updated_at``, ``last_accessed_at`` or ``importance``; ``asc`` or
        ``desc``), a page at a time: pass the page's ``next_cursor`` for the next one.
        ``since`` / ``until``: event time, at or after / before. ``status=None``: all."""
        return self._agents.list_page(v.namespace(namespace), type, source, session_id, topic,
                                      tier, status, since, until, sort, order, limit, cursor)

    def history(self, id: str, *, namespace: str) -> list[HistoryEntry]:
        """Every version of the memory's content and every change of its fields, tier or
        status, oldest first, each with its time and reason (from the recorded transitions:
        an update keeps the content it replaced)."""
        return self._agents.history(v.namespace(namespace), id)

    def delete_all(self, *, namespace: str, confirm: str) -> int:
        """Hard-delete every memory of the namespace (and its edges and prior contents);
        ``confirm`` must repeat the namespace. Returns how many were deleted. Batches of
        1000: an interrupted call deletes the rest when run again."""
        return self._agents.delete_all(v.namespace(namespace), confirm)  # locks per batch

    def supersede(self, old_id: str, new_id: str, *, namespace: str,
                  reason: str | None = None) -> Memory:
        """``new_id`` replaces ``old_id``: the old memory's validity ends where the new one's
        begins (now, if that is not later than the old one's start), it records
        ``superseded_by`` and a ``supersede`` transition, the new one REFERENCES it, and a
        CONTRADICTS edge between the two (a dispute now resolved) is removed."""
        ns = v.namespace(namespace)
        with self._write_lock:
            return self._agents.supersede(ns, old_id, new_id, reason)

    def record_consensus(self, topic: str, conclusion: str, *, namespace: str,
                         participants: Iterable[str] = (), confidence: float = 0.8,
                         evidence_ids: Iterable[str] = (),
                         session_id: str | None = None) -> Memory:
        """A debate's outcome as a ``consensus`` memory (slow tier by default) that
        REFERENCES its evidence; participants and confidence in its metadata."""
        item = self._agents.consensus(topic, conclusion, participants, confidence,
                                      evidence_ids, session_id)
        return self.store_many([item], namespace=namespace)[0]

    def record_dissent(self, topic: str, agent: str, position: str, *, namespace: str,
                       against: str | None = None) -> Memory:
        """An agent's dissenting position as a ``dissent`` memory (source: the agent) that
        CONTRADICTS the consensus it stands against."""
        item = self._agents.dissent(topic, agent, position, against)
        return self.store_many([item], namespace=namespace)[0]

    def find_similar(self, topic: str, *, namespace: str, limit: int = 5
                     ) -> list[ConsensusRecord]:
        """Past consensus records on topics like this one (matched by meaning, not only by
        the same words), best first, each with the dissent recorded against it."""
        return self._agents.find_similar(topic, namespace, limit)

    def dissent_for_topic(self, topic: str, *, namespace: str, limit: int = 10
                          ) -> list[Memory]:
        """Dissent on topics like this one: against its similar consensus records, and
        recorded on its own; best match first."""
        return self._agents.dissent_for_topic(topic, namespace, limit)

    def stream(self, agent: str, *, namespace: str, since: When = None, until: When = None,
               limit: int = 50, cursor: str | None = None,
               status: str | None = "active") -> MemoryPage:
        """An agent's memories (``source``) in event-time order, oldest first, a page at a
        time (``next_cursor``); ``since`` / ``until`` bound the event time."""
        return self.list_page(namespace=namespace, source=agent, since=since, until=until,
                              sort="created_at", order="asc", limit=limit, cursor=cursor,
                              status=status)

    def summarize(self, *, namespace: str, agent: str | None = None,
                  session_id: str | None = None, since: When = None, until: When = None,
                  limit: int = 500) -> StreamSummary:
        """An extractive summary (consolidation's summariser: key phrases and the most
        representative memories) of an agent's or a session's memories in a time range,
        with the ids of the (at most ``limit``, earliest first) memories it stands for."""
        return self._agents.summarize(namespace, agent, session_id, since, until, limit)

    def capture_tool(self, *, agent: str, tool: str, input: str, output: str, ok: bool,
                     namespace: str, session_id: str | None = None) -> Memory | None:
        """A tool call as a ``tool_usage`` memory of the agent (fast tier by default). None
        when the capture lists skip the tool or the agent is over ``max_per_minute`` for it
        (counted in the store, across processes and replicas): both are counted (``stats``,
        ``/metrics``), never silent."""
        ns = v.namespace(namespace)
        item = self._agents.tool_call(ns, agent, tool, input, output, ok, session_id)
        return None if item is None else self.store_many([item], namespace=ns)[0]

    # -- session context (ADR 0063) -------------------------------------------------------
    def context_set(self, session_id: str, key: str, value: Any, *, namespace: str,
                    ttl: float | timedelta | None = None) -> ContextEntry:
        """Set (or replace) one key of the session's context; it expires ``ttl`` seconds
        from now (None: ``sessions.ttl_seconds``, one hour). ``value``: any JSON value."""
        return self._sessions.context_set(namespace, session_id, key, value, ttl)

    def context_entry(self, session_id: str, key: str, *, namespace: str
                      ) -> ContextEntry | None:
        """The key's entry (value and expiry); None when missing or expired."""
        return self._sessions.context_entry(namespace, session_id, key)

    def context_get(self, session_id: str, key: str, *, namespace: str) -> Any | None:
        """The key's value; None when missing or expired."""
        entry = self.context_entry(session_id, key, namespace=namespace)
        return None if entry is None else entry.value

    def context_entries(self, session_id: str, *, namespace: str) -> list[ContextEntry]:
        """Every unexpired entry of the session, by key."""
        return self._sessions.context_entries(namespace, session_id)

    def context_list(self, session_id: str, *, namespace: str) -> dict[str, Any]:
        """The session's unexpired context as {key: value}."""
        return {e.key: e.value for e in self.context_entries(session_id, namespace=namespace)}

    def context_delete(self, session_id: str, key: str | None = None, *,
                       namespace: str) -> int:
        """Delete one key (None: the session's whole context); the entries deleted."""
        return self._sessions.context_delete(namespace, session_id, key)

    def message_add(self, session_id: str, message: Any, *, namespace: str,
                    ttl: float | timedelta | None = None) -> datetime:
        """Append a message (any JSON value) to the session's recent messages; the session
        keeps its newest ``sessions.max_messages`` (50), older ones drop in the same write.
        Returns when this message expires."""
        return self._sessions.message_add(namespace, session_id, message, ttl)

    def messages(self, session_id: str, *, namespace: str,
                 limit: int | None = None) -> list[Any]:
        """The session's unexpired messages, oldest first (``limit``: only the newest; never
        more than the session keeps)."""
        return self._sessions.messages(namespace, session_id, limit)

    def messages_clear(self, session_id: str, *, namespace: str) -> int:
        """Delete every message of the session; the messages deleted."""
        return self._sessions.messages_clear(namespace, session_id)

    # -- export / import ------------------------------------------------------------------
    def export_records(self, *, namespace: str, vectors: bool = True) -> Iterator[dict[str, Any]]:
        """Memories (vectors unless ``vectors=False``: for another model) then edges."""
        return _records.export_records(self.core, v.namespace(namespace), vectors=vectors)

    def export_jsonl(self, out: IO[str], *, namespace: str, vectors: bool = True) -> int:
        """Export as JSON lines; returns the records written."""
        return _records.write_jsonl(out, self.export_records(namespace=namespace,
                                                             vectors=vectors))

    def import_records(self, records: Iterable[Mapping[str, Any]], *, namespace: str,
                       batch_size: int = 1000,
                       progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """Write exported records as they are (ids, times, embeddings, edges), batch by batch;
        records without vectors are embedded as writes are. Returns (memories, edges)."""
        return _records.import_records(self.core, self._write_lock, records,
                                       v.namespace(namespace), batch_size=batch_size,
                                       progress=progress, refresh=self._writer.refresh_context)

    def _consolidator(self, progress: Callable[[str, int, int], None] | None = None
                      ) -> Consolidator:
        from graphmem.consolidation import Consolidator  # scikit-learn: loaded when used

        return Consolidator(self.core, progress, self._write_lock)
