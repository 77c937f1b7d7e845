"""``GraphMemory``: the facade, the only entry point for callers (CLI, REST, Python)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO, Any

from graphmem import dynamics
from graphmem import validation as v
from graphmem.config import GraphMemConfig
from graphmem.embedding import Embedder, SentenceTransformerEmbedder
from graphmem.errors import ConflictError, InvalidRelationError, NotFoundError, ValidationError
from graphmem.maintenance import Maintainer, MaintenanceReport
from graphmem.models import (
    EdgeSource,
    IndexEntry,
    Memory,
    MemoryInput,
    Relation,
    RelationSpec,
    RelationType,
    RetrievalResult,
    Status,
    Tier,
    Transition,
    TransitionKind,
    utcnow,
)
from graphmem.retrieval import Retriever
from graphmem.store.base import Counts, MemoryStore, WriteBatch
from graphmem.text import Analyzer, content_hash, preview, token_estimate
from graphmem.writes import Writer

log = logging.getLogger(__name__)
Clock = Callable[[], datetime]


class GraphMemory:
    """Long-term memory over a store. Thread-safe; writes are serialised in-process."""

    def __init__(self, store: MemoryStore, *, embedder: Embedder | None = None,
                 config: GraphMemConfig | None = None, clock: Clock | None = None) -> None:
        self.config = config or GraphMemConfig()
        self.backend = store
        self.embedder = embedder or SentenceTransformerEmbedder(self.config.embedding)
        self.clock: Clock = clock or utcnow
        self.analyzer = Analyzer(self.config.write.language)
        self._writer = Writer(store, self.embedder, self.analyzer, self.config, self.clock)
        self._retriever = Retriever(store, self.embedder, self.analyzer, self.config, self.clock)
        self._write_lock = threading.RLock()
        self._maintainer = Maintainer(store, self.config, self.clock, self._write_lock)

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
        self.backend.close()

    def __enter__(self) -> GraphMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------
    def store(self, content: str, *, namespace: str, importance: float = 0.5,
              tier: Tier | str | None = None,
              relations: Sequence[RelationSpec | Mapping[str, Any] | tuple[str, str]] = (),
              metadata: Mapping[str, Any] | None = None, session_id: str | None = None,
              created_at: datetime | None = None, source: str | None = None,
              topic: str | None = None, pinned: bool = False, id: str | None = None) -> Memory:
        """Store one memory (or reinforce its exact twin) and return it."""
        item = MemoryInput(content=content, importance=importance, tier=tier,
                           relations=list(relations), metadata=dict(metadata or {}) or None,
                           session_id=session_id, created_at=created_at, source=source,
                           topic=topic, pinned=pinned, id=id)
        return self.store_many([item], namespace=namespace)[0]

    def store_many(self, items: Sequence[MemoryInput | Mapping[str, Any] | str], *,
                   namespace: str) -> list[Memory]:
        """Store a batch atomically: all of it or, on any invalid item, nothing."""
        with self._write_lock:
            return self._writer.store_many(namespace, [dict(x) if isinstance(x, Mapping) else x
                                                       for x in items])

    def relate(self, source_id: str, target_id: str, type: RelationType | str, *,
               namespace: str, score: float | None = None) -> Relation:
        ns = v.namespace(namespace)
        rtype = v.relation_type(type)
        if score is not None:
            score = v.score(score)
        with self._write_lock:
            self._require(ns, [source_id, target_id])  # unknown ids: 404 before anything else
            if source_id == target_id:
                raise InvalidRelationError("a memory cannot relate to itself")
            rel = Relation(source_id, target_id, rtype, ns, score, self.clock(),
                           EdgeSource.EXPLICIT)
            self.backend.apply(WriteBatch(ns, edges=[rel]))
        return rel

    def unrelate(self, source_id: str, target_id: str, type: RelationType | str, *,
                 namespace: str) -> None:
        ns = v.namespace(namespace)
        rtype = v.relation_type(type, caller=False)
        with self._write_lock:
            edges = self.backend.edges_of(ns, [source_id], [rtype])
            if not any(e.source_id == source_id and e.target_id == target_id for e in edges):
                raise NotFoundError(f"no {rtype.value} relation from {source_id!r} to "
                                    f"{target_id!r} in namespace {ns!r}")
            self.backend.apply(WriteBatch(ns, delete_edges=[(source_id, target_id, rtype)]))

    def relations(self, id: str, *, namespace: str,
                  types: Collection[RelationType | str] | None = None) -> list[Relation]:
        ns = v.namespace(namespace)
        self._require(ns, [id])
        wanted = None if types is None else [v.relation_type(t, caller=False) for t in types]
        return sorted(self.backend.edges_of(ns, [id], wanted),
                      key=lambda e: (e.type.value, e.source_id, e.target_id))

    def update(self, id: str, *, namespace: str, content: str | None = None,
               importance: float | None = None, tier: Tier | str | None = None,
               metadata: Mapping[str, Any] | None = None, source: str | None = None,
               topic: str | None = None) -> Memory:
        """Change a memory; new content is re-embedded and re-indexed, its links refreshed."""
        ns = v.namespace(namespace)
        wc = self.config.write
        with self._write_lock:
            m = self._require(ns, [id], embeddings=True)[id]
            now = self.clock()
            batch = WriteBatch(ns)
            if importance is not None:
                m.base_importance = m.importance = v.importance(importance)
            if tier is not None:
                m.tier = v.tier(tier)  # type: ignore[assignment]
            if metadata is not None:
                m.metadata = v.metadata(dict(metadata), wc)
            if source is not None:
                m.source = v.optional_text(source, "source")
            if topic is not None:
                m.topic = v.optional_text(topic, "topic")
            records = {m.id: m}
            if content is not None and content != m.content:
                m.content = v.content(content, wc)
                m.content_hash = content_hash(m.content)
                m.embedding = self.embedder.embed([m.content])[0]
                m.keywords = self.analyzer.index_text(
                    m.content, m.created_at if wc.date_in_keywords else None)
                self._relink_after_change(ns, m, records, batch)
            m.updated_at = now
            batch.memories.extend(records.values())
            self.backend.apply(batch)
            m.embedding = m.context_embedding = None
            return m

    def delete(self, id: str, *, namespace: str) -> None:
        """Hard-delete a memory and its edges (explicit; the session chain is re-linked)."""
        ns = v.namespace(namespace)
        with self._write_lock:
            m = self._require(ns, [id])[id]
            batch = WriteBatch(ns, delete_memories=[id])
            if m.session_id is not None and self.config.write.follows:
                plan = self._writer.session_plan(ns, m.session_id, removed=frozenset({id}))
                now = self.clock()
                batch.edges.extend(Relation(s, t, RelationType.FOLLOWS, ns, None, now,
                                            EdgeSource.AUTO) for s, t in plan.add)
                changed = {k: p for k, p in plan.predecessor.items() if k != id}
                records = self.backend.get_memories(ns, list(changed), embeddings=True)
                self._writer.refresh_context(ns, records, changed)
                batch.memories.extend(records.values())
            self.backend.apply(batch)

    # -- tier dynamics --------------------------------------------------------------------
    def feedback(self, id: str, *, namespace: str, useful: bool | None = None,
                 outcome: str | None = None,
                 predicted_relevance: float | None = None) -> Memory:
        """Tell graphmem how a retrieved memory served: ``useful`` and/or ``outcome``
        ("success" | "failure"). Updates the surprise score (EMA of max(0, actual -
        predicted); predicted defaults to the relevance the memory had when retrieved),
        success / failure counts, and may promote it. Success reinforces (decay restarts)."""
        ns = v.namespace(namespace)
        if useful is None and outcome is None:
            raise ValidationError("feedback needs useful and/or outcome")
        if useful is not None and not isinstance(useful, bool):
            raise ValidationError("useful must be true or false")
        if outcome not in (None, "success", "failure"):
            raise ValidationError("outcome must be 'success' or 'failure'")
        if predicted_relevance is not None:
            predicted_relevance = v.importance(predicted_relevance)
        with self._write_lock:
            m = self._require(ns, [id])[id]
            now = self.clock()
            signals = [float(x) for x in (useful, None if outcome is None
                                          else outcome == "success") if x is not None]
            actual = sum(signals) / len(signals)
            predicted = (predicted_relevance if predicted_relevance is not None
                         else m.last_predicted if m.last_predicted is not None else 0.5)
            dyn = self.config.dynamics
            m.surprise_score = dynamics.surprise(m.surprise_score, actual, predicted,
                                                 dyn.surprise_alpha)
            fields: dict[str, Any] = {"surprise_score": m.surprise_score, "updated_at": now}
            if outcome == "success" or useful is True:  # used: the decay age restarts
                m.last_accessed_at = m.reinforced_at = now
                fields.update(last_accessed_at=now, reinforced_at=now)
            if outcome == "success":
                m.success_count += 1
                fields["success_count"] = m.success_count
            elif outcome == "failure":
                m.failure_count += 1
                fields["failure_count"] = m.failure_count
            batch = WriteBatch(ns)
            promoted = dynamics.apply_promotion(m, now, dyn, self.config.tiers)
            if promoted is not None:
                fields.update(promoted[0])
                batch.transitions.append(promoted[1])
            batch.patches.append((m.id, fields))
            self.backend.apply(batch)
            return m

    def pin(self, id: str, *, namespace: str) -> Memory:
        """A pinned memory is never demoted, expired or evicted."""
        return self._set_pinned(id, namespace, True)

    def unpin(self, id: str, *, namespace: str) -> Memory:
        return self._set_pinned(id, namespace, False)

    def _set_pinned(self, id: str, namespace: str, pinned: bool) -> Memory:
        ns = v.namespace(namespace)
        with self._write_lock:
            m = self._require(ns, [id])[id]
            m.pinned = pinned
            self.backend.apply(WriteBatch(ns, patches=[(id, {"pinned": pinned,
                                                             "updated_at": self.clock()})]))
            return m

    def restore(self, id: str, *, namespace: str) -> Memory:
        """Bring an expired or archived memory back to active (its decay age restarts)."""
        ns = v.namespace(namespace)
        with self._write_lock:
            m = self._require(ns, [id])[id]
            if m.status is Status.ACTIVE:
                raise ConflictError(f"memory {id!r} is already active")
            now = self.clock()
            t = Transition(id, TransitionKind.RESTORE, m.tier, m.tier,
                           f"restored from {m.status.value}", now, m.status, Status.ACTIVE)
            m.status, m.last_accessed_at, m.reinforced_at = Status.ACTIVE, now, now
            self.backend.apply(WriteBatch(ns, patches=[(id, {
                "status": Status.ACTIVE, "last_accessed_at": now, "reinforced_at": now,
                "updated_at": now})],
                transitions=[t]))
            return m

    def maintain(self, namespace: str | None = None, *,
                 dry_run: bool = False) -> MaintenanceReport:
        """Decay, promotions, demotions, expiry and eviction (see ``graphmem.maintenance``)."""
        if namespace is not None:
            namespace = v.namespace(namespace)
        return self._maintainer.run(namespace, dry_run=dry_run)  # locks one page at a time

    def list_memories(self, *, namespace: str, status: Status | str = Status.ACTIVE,
                      tier: Tier | str | None = None, limit: int = 100) -> list[Memory]:
        """Memories of one status (e.g. the expired and archived ones, to restore)."""
        ns = v.namespace(namespace)
        try:
            wanted = Status(status)
        except ValueError:
            raise ValidationError(f"unknown status {status!r}") from None
        tier_ = v.tier(tier)
        limit = v.bounded(limit, "limit", 1, 10_000)
        out: list[Memory] = []
        for page in self.backend.iter_memories(ns, embeddings=False, statuses=[wanted]):
            out.extend(m for m in page if tier_ is None or m.tier is tier_)
            if len(out) >= limit:
                break
        return out[:limit]

    def transitions(self, id: str, *, namespace: str) -> list[Transition]:
        """A memory's recorded promotions, demotions, expiry, eviction and restores."""
        ns = v.namespace(namespace)
        self._require(ns, [id])
        return self.backend.transitions_of(ns, id)

    # -- consolidation ----------------------------------------------------------------------
    def consolidate(self, namespace: str | None = None, *, dry_run: bool = False,
                    progress: Callable[[str, int, int], None] | None = None) -> Any:
        """Cluster old memories into summaries (``graphmem.consolidation``); returns the run
        (``.id``, ``.status``, ``.report``). A crashed run is resumed first. ``progress`` is
        called with (stage, done, total) for progress bars. A dry run is saved: its report
        opens with ``report(run_id)``; it changes nothing else."""
        from graphmem.consolidation import Consolidator

        if namespace is not None:
            namespace = v.namespace(namespace)
        # planning runs without the write lock; applying takes it one cluster at a time
        return Consolidator(self, progress, self._write_lock).run(namespace, dry_run=dry_run)

    def approve(self, run_id: str) -> Any:
        """Apply a run held for approval (its retrieval check lost too much)."""
        from graphmem.consolidation import Consolidator

        return Consolidator(self, lock=self._write_lock).approve(run_id)

    def rollback(self, run_id: str) -> Any:
        """Undo a run: its summaries removed, every member it archived active again."""
        from graphmem.consolidation import Consolidator

        return Consolidator(self, lock=self._write_lock).rollback(run_id)

    def runs(self) -> list[dict[str, Any]]:
        """Consolidation runs, newest first (id, status, namespace, times, report summary)."""
        return [{k: r.get(k) for k in ("id", "namespace", "status", "created_at",
                                        "finished_at", "candidates")}
                | {"summaries": r.get("report", {}).get("summaries"),
                   "archived": r.get("report", {}).get("archived")}
                for r in self.backend.list_runs()]

    def run(self, run_id: str) -> dict[str, Any]:
        """One consolidation run's full record (NotFoundError if there is none)."""
        data = self.backend.get_run(run_id)
        if data is None:
            raise NotFoundError(f"no consolidation run {run_id!r}")
        return data

    def run_counts(self) -> dict[str, int]:
        """Consolidation runs by status."""
        return self.backend.run_counts()

    def counts(self, *, namespace: str) -> Counts:
        """Memories by (tier, status, kind) and edges by type: cheap, for metrics."""
        return self.backend.counts(v.namespace(namespace))

    def transition_counts(self, *, namespace: str, since: datetime | None = None
                          ) -> list[tuple[str, Tier, Tier, int, int]]:
        """Tier transitions by (kind, from, to): all time, and at or after ``since`` (by
        default the last hour)."""
        since = since or self.clock() - timedelta(hours=1)
        return self.backend.transition_counts(v.namespace(namespace), since)

    def ping(self) -> None:
        """Raise StoreError unless the store answers a query."""
        self.backend.ping()

    def report(self, run_id: str, format: str = "json") -> str:
        """A run's report as ``json``, ``md`` or a self-contained ``html`` page with plots."""
        from graphmem.consolidation.report import render

        data = self.run(run_id)
        if format not in ("json", "md", "html"):
            raise ValidationError(f"unknown report format {format!r}: json, md or html")
        return render(data["report"], format)

    # -- reads ----------------------------------------------------------------------------
    def get(self, id: str, *, namespace: str) -> Memory:
        return self._require(v.namespace(namespace), [id])[id]

    def entries(self, ids: Sequence[str], *, namespace: str, touch: bool = True) -> list[Memory]:
        """Full records of ``ids``, in that order (progressive disclosure, last step)."""
        ns = v.namespace(namespace)
        if len(ids) > self.config.retrieval.max_limit:
            raise ValidationError(f"at most {self.config.retrieval.max_limit} ids at once")
        found = self._require(ns, ids)
        if touch:  # reading the full record is an access, as a retrieval is
            now, batch = self.clock(), WriteBatch(ns)
            for m in found.values():
                fields, transition = dynamics.record_access(
                    m, now, self.config.dynamics, self.config.tiers, reinforce=True)
                batch.patches.append((m.id, fields))
                if transition is not None:
                    batch.transitions.append(transition)
            self.backend.apply(batch)
        return [found[i] for i in dict.fromkeys(ids)]

    def retrieve(self, query: str, *, namespace: str, limit: int = 10,
                 tiers: Collection[Tier | str] | None = None,
                 min_similarity: float | None = None, strategy: str | None = None,
                 depth: int | None = None,
                 filters: Mapping[str, Any] | None = None,
                 include_archived: bool | None = None,
                 record_access: bool = True) -> list[RetrievalResult]:
        """The full pipeline: seeds, walk, rerank (see ``graphmem.retrieval``).

        ``include_archived`` (default: only with ``strategy="comprehensive"``) also reaches
        archived memories through the summaries that stand for them (path ``summary
        -[SUMMARIZES]-> member``). ``record_access`` counts the results as accessed (agents);
        operators' reads pass False and change nothing."""
        q = self._retriever.query(query, namespace, limit=limit, tiers=tiers,
                                  min_similarity=min_similarity, strategy=strategy,
                                  depth=depth, filters=filters,
                                  include_archived=include_archived)
        return self._retriever.retrieve(q, touch=record_access)

    def search_index(self, query: str, *, namespace: str, limit: int = 10,
                     **options: Any) -> list[IndexEntry]:
        """Compact previews (id, ~80 characters, tier, score, token estimate); no bookkeeping
        (the full read, ``entries``, is the access)."""
        options.pop("record_access", None)
        q = self._retriever.query(query, namespace, limit=limit, **options)
        chars = self.config.retrieval.preview_chars
        return [IndexEntry(r.memory.id, preview(r.memory.content, chars), r.memory.tier,
                           r.score, token_estimate(r.memory.content), r.memory.created_at,
                           r.memory.session_id, r.disputed)
                for r in self._retriever.retrieve(q, touch=False)]

    def timeline(self, anchor_id: str, *, namespace: str, before: int = 3, after: int = 3,
                 session_only: bool = True) -> list[Memory]:
        """The memories around ``anchor_id`` in time (its session when it has one), oldest
        first, the anchor included."""
        ns = v.namespace(namespace)
        cap = self.config.retrieval.max_limit
        before = v.bounded(before, "before", 0, cap)
        after = v.bounded(after, "after", 0, cap)
        anchor = self._require(ns, [anchor_id])[anchor_id]
        earlier, later = self.backend.time_window(ns, anchor, before=before, after=after,
                                                session_only=session_only)
        return [*reversed(earlier), anchor, *later]

    def stats(self, *, namespace: str) -> dict[str, Any]:
        """Tier counts, statuses, kinds, edges; transitions in the last hour and in total;
        hit rate (this process), average surprise, importance and age histograms per tier."""
        from graphmem.stats import namespace_stats

        ns = v.namespace(namespace)
        return namespace_stats(self.backend, ns, self.clock(), self.config,
                               queries=self._retriever.queries[ns],
                               hits=self._retriever.hits[ns])

    def namespaces(self) -> list[str]:
        return self.backend.namespaces()

    # -- export / import ------------------------------------------------------------------
    def export_records(self, *, namespace: str) -> Iterator[dict[str, Any]]:
        """Every memory (with embeddings and index fields) then every edge, as dicts."""
        ns = v.namespace(namespace)
        for page in self.backend.iter_memories(ns):
            for m in page:
                yield {"record": "memory", **m.to_dict(embeddings=True)}
        for edges in self.backend.iter_edges(ns):
            for e in edges:
                yield {"record": "edge", **e.to_dict()}

    def export_jsonl(self, out: IO[str], *, namespace: str) -> int:
        n = 0
        for rec in self.export_records(namespace=namespace):
            out.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
            n += 1
        return n

    def import_records(self, records: Iterable[Mapping[str, Any]], *, namespace: str,
                       batch_size: int = 1000,
                       progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """Write exported records as they are (ids, times, embeddings, edges), batch by batch.

        Records without an embedding are embedded. Returns (memories, edges) written.
        """
        from graphmem.records import edge_from_record, memory_from_record

        ns = v.namespace(namespace)
        counts = [0, 0]
        pending = WriteBatch(ns)

        def flush() -> None:
            todo = [m for m in pending.memories if m.embedding is None]
            if todo:
                for m, vec in zip(todo, self.embedder.embed([m.content for m in todo]),
                                  strict=True):
                    m.embedding = vec
            with self._write_lock:
                ids = {m.id for m in pending.memories}
                for e in pending.edges:
                    for end in (e.source_id, e.target_id):
                        if end not in ids:
                            ids.add(end)
                            self._require(ns, [end])
                self.backend.apply(pending)
            counts[0] += len(pending.memories)
            counts[1] += len(pending.edges)
            if progress:
                progress(len(pending.memories) + len(pending.edges))
            pending.memories, pending.edges = [], []

        for n, rec in enumerate(records, start=1):
            kind = rec.get("record")
            try:
                if kind == "memory":
                    pending.memories.append(memory_from_record(rec, ns, self.config,
                                                               self.analyzer, self.clock()))
                elif kind == "edge":
                    pending.edges.append(edge_from_record(rec, ns))
                else:
                    raise ValidationError("'record' must be 'memory' or 'edge'")
            except ValidationError as exc:
                raise type(exc)(f"record {n}: {exc}") from None
            if len(pending.memories) + len(pending.edges) >= batch_size:
                flush()
        if pending:
            flush()
        return counts[0], counts[1]

    # -- helpers --------------------------------------------------------------------------
    def _require(self, ns: str, ids: Sequence[str], *,
                 embeddings: bool = False) -> dict[str, Memory]:
        for i in ids:
            v.memory_id(i)
        found = self.backend.get_memories(ns, list(ids), embeddings=embeddings)
        for i in ids:
            if i not in found:
                raise NotFoundError(f"memory {i!r} not found in namespace {ns!r}")
        return found

    def _relink_after_change(self, ns: str, m: Memory, records: dict[str, Memory],
                             batch: WriteBatch) -> None:
        """After a content change: refresh successor context, own auto SIMILAR_TO edges."""
        edges = self.backend.edges_of(ns, [m.id])
        for e in edges:
            if e.type is RelationType.SIMILAR_TO and e.source is EdgeSource.AUTO \
                    and e.source_id == m.id:
                batch.delete_edges.append(e.key)
        batch.edges.extend(self._writer.similar_edges(ns, [m], self.clock()))
        changed: dict[str, str | None] = {}
        for e in edges:
            if e.type is RelationType.FOLLOWS:
                if e.source_id == m.id:
                    changed[e.target_id] = m.id
                else:
                    changed[m.id] = e.source_id
        more = self.backend.get_memories(ns, [k for k in changed if k not in records],
                                       embeddings=True)
        records.update(more)
        self._writer.refresh_context(ns, records, changed)
