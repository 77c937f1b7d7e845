"""The write path: validate, deduplicate, embed, link (FOLLOWS, SIMILAR_TO, explicit) and build
one ``WriteBatch`` that the store applies atomically. Nothing is written when any item fails.
"""

from __future__ import annotations

import itertools
import logging
import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from graphmem.engine.core import Core
from graphmem.engine.query_batcher import QueryBatcher
from graphmem.engine.threads import single_threaded_blas
from graphmem.errors import (
    ConflictError,
    DuplicateError,
    InvalidRelationError,
    LimitExceededError,
    NotFoundError,
)
from graphmem.models import (
    EdgeSource,
    Memory,
    MemoryInput,
    Relation,
    RelationSpec,
    RelationType,
    Status,
)
from graphmem.rules import ttl as ttl_rule
from graphmem.rules import validation as v
from graphmem.rules.text import content_hash
from graphmem.rules.tiers import tier_for_importance
from graphmem.rules.time_expr import mentioned_times
from graphmem.store.base import EdgeKey, WriteBatch

Clock = Callable[[], datetime]
log = logging.getLogger(__name__)
#: what a write takes per memory: a ``MemoryInput``, its fields, or the content alone
Input = MemoryInput | dict[str, Any] | str
#: a batch is planned at most this many times when it loses races to other writers (each
#: round lets at least one of them through)
WRITE_RETRIES = 10


@dataclass(slots=True)
class _Item:
    spec: MemoryInput
    relations: list[RelationSpec]
    hash: str
    memory: Memory = field(init=False)  # the record this item ends up as (new or reinforced)


@dataclass(slots=True)
class SessionPlan:
    """FOLLOWS edges to add/remove and memories whose predecessor changed.

    Example:
        >>> plan = plan_session(["a", "b", "c"], [("a", "c")])
        >>> plan.add, plan.remove, plan.predecessor
        ([('a', 'b'), ('b', 'c')], [('a', 'c')], {'b': 'a', 'c': 'b'})
    """

    add: list[tuple[str, str]] = field(default_factory=list)
    remove: list[tuple[str, str]] = field(default_factory=list)
    predecessor: dict[str, str | None] = field(default_factory=dict)


def plan_session(order: Sequence[str], existing_follows: Sequence[tuple[str, str]]) -> SessionPlan:
    """Diff the FOLLOWS chain ``order`` implies against the edges that exist (pure)."""
    want = set(itertools.pairwise(order))
    have = set(existing_follows)
    before, after = {t: s for s, t in have}, {t: s for s, t in want}
    return SessionPlan(add=sorted(want - have, key=lambda p: order.index(p[0])),
                       remove=sorted(have - want),
                       predecessor={n: after.get(n) for n in order
                                    if before.get(n) != after.get(n)})


def _merge_into(memory: Memory, spec: MemoryInput) -> None:
    importance = float(spec.importance or 0.0)
    memory.base_importance = max(memory.base_importance, importance)
    memory.importance = max(memory.importance, importance)
    memory.metadata = {**memory.metadata, **(spec.metadata or {})}
    memory.pinned = memory.pinned or spec.pinned


def context_text(predecessor: str, content: str) -> str:
    return f"{predecessor}\n{content}"


#: the predecessor's weight in a "mean" context vector (LoCoMo R@10 0.768 / 0.764 / 0.775 /
#: 0.775 / 0.772 at 1 / 0.6 / 1.5 / 2 / 3, against 0.776 for the embedded text; ADR 0015)
PREDECESSOR_WEIGHT = 2.0


def mean_vector(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The context vector of ``write.context_embedding = "mean"``: the predecessor's vector
    ``a`` (weighted ``PREDECESSOR_WEIGHT``) plus the memory's ``b``, unit length.

    Example:
        >>> [round(float(x), 3) for x in mean_vector(np.array([1.0, 0.0]), np.array([0.0, 2.0]))]
        [0.707, 0.707]
    """
    v = PREDECESSOR_WEIGHT * np.asarray(a, dtype=np.float32) + np.asarray(b, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


class Writer:
    """Adds memories: validates a batch, embeds it, deduplicates exact twins, links sessions
    (FOLLOWS) and near neighbours (SIMILAR_TO), and writes it as one atomic ``WriteBatch``.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> [m.tier.value for m in Writer(mem.core).store_many("ops", ["a", "b"])]
        ['medium', 'medium']
        >>> mem.close()
    """

    def __init__(self, core: Core) -> None:
        self.core = core
        self.store = core.store
        self.config = core.config
        #: concurrent single writes' contents share model calls (``embed_ahead``)
        self.batcher = QueryBatcher(core.embedder)

    # -- public ---------------------------------------------------------------------------
    def embed_ahead(self, namespace: str, inputs: Sequence[Input]
                    ) -> dict[str, np.ndarray]:
        """The vectors of the contents ``store_many`` will store new, embedded before the
        caller takes the write lock (ADR 0045): the model runs while other writes do their
        database work, and concurrent single writes share one model call. A content whose
        twin is stored already is left out (looked up now; ``store_many`` decides again
        under the lock and embeds whatever this missed). Invalid input raises here, as
        ``store_many`` would."""
        wc = self.config.write
        ns = v.namespace(namespace)
        if not inputs or len(inputs) > wc.max_batch:
            return {}  # store_many says why
        items = [self._validate(MemoryInput.coerce(x)) for x in inputs]
        twins = self.store.find_by_hash(ns, [it.hash for it in items]) if wc.dedupe else {}
        texts = list(dict.fromkeys(it.spec.content for it in items if it.hash not in twins))
        if not texts:
            return {}
        self.core.vectors.check(ns)  # one model per namespace: refused before embedding
        if len(texts) == 1:
            return {texts[0]: self.batcher.embed_one(texts[0])}
        return dict(zip(texts, self.core.embedder.embed(texts), strict=True))

    def store_many(self, namespace: str, inputs: Sequence[Input], *,
                   vectors: Mapping[str, np.ndarray] | None = None) -> list[Memory]:
        """Validate, deduplicate, embed (``vectors``: contents embedded already, from
        ``embed_ahead``), link and write ``inputs`` as one batch; the caller holds the
        write lock. When the database refuses a create because another process wrote the
        same id or content meanwhile, the batch is planned again on what is there now: a
        taken id is a ``ConflictError``, a twin a reinforcement (issue 45)."""
        for attempt in range(1, WRITE_RETRIES):
            try:
                return self._store_many(namespace, inputs, vectors)
            except DuplicateError as exc:
                log.info("a write lost a race to another writer (%s): planning it again",
                         exc)
                time.sleep(random.uniform(0, 0.01 * attempt))  # let the winner finish
        return self._store_many(namespace, inputs, vectors)  # the last try: its error is raised

    def _store_many(self, namespace: str, inputs: Sequence[Input],
                    vectors: Mapping[str, np.ndarray] | None) -> list[Memory]:
        wc = self.config.write
        ns = v.namespace(namespace)
        if not inputs:
            return []
        if len(inputs) > wc.max_batch:
            raise LimitExceededError(f"batch of {len(inputs)} memories, the limit is "
                                     f"{wc.max_batch}")
        items = [self._validate(MemoryInput.coerce(x)) for x in inputs]
        now = self.core.clock()
        batch = WriteBatch(namespace=ns)

        # explicit ids: unique in the batch and not taken in the namespace
        given = [it.spec.id for it in items if it.spec.id is not None]
        if len(given) != len(set(given)):
            raise ConflictError("the batch gives the same id twice")
        if given and (taken := self.store.get_memories(ns, given)):
            raise ConflictError(f"memory id {next(iter(taken))!r} is already taken")

        # exact duplicates: reinforce the first memory with that content instead of a twin
        existing_ids = self.store.find_by_hash(ns, [it.hash for it in items]) if wc.dedupe else {}
        existing = self.store.get_memories(ns, list(existing_ids.values()), embeddings=True)
        if len(existing) < len(set(existing_ids.values())):  # one another writer is making
            raise DuplicateError("a twin is being written by another process")
        by_hash: dict[str, Memory] = {}
        fresh: list[_Item] = []
        for it in items:
            m = by_hash.get(it.hash) if wc.dedupe else None
            if m is not None:  # a twin earlier in this batch: one record for both
                _merge_into(m, it.spec)
            elif it.hash in existing_ids:
                m = self._reinforce(existing[existing_ids[it.hash]], it.spec, now)
            else:
                m = self._new_memory(ns, it, now)
                fresh.append(it)
            by_hash[it.hash] = it.memory = m

        # relation targets must exist in this namespace (or in this batch)
        in_batch = {it.memory.id for it in items}
        targets = {r.target_id for it in items for r in it.relations} - in_batch
        found = self.store.get_memories(ns, list(targets))
        missing = targets - set(found)
        if missing:
            raise NotFoundError(f"relation target {sorted(missing)[0]!r} not found in "
                                f"namespace {ns!r}")

        if fresh:
            self.core.vectors.check(ns)  # one model per namespace: before anything is written
            known = dict(vectors or {})
            todo = list(dict.fromkeys(it.spec.content for it in fresh
                                      if it.spec.content not in known))
            if todo:
                known.update(zip(todo, self.core.embedder.embed(todo), strict=True))
            for it in fresh:
                it.memory.embedding = known[it.spec.content]
        records = {it.memory.id: it.memory for it in items}
        if wc.follows:
            self._link_sessions(ns, fresh, records, batch)
        batch.edges.extend(self.similar_edges(ns, [it.memory for it in fresh], now))
        for it in items:
            for r in it.relations:
                if r.target_id == it.memory.id:
                    raise InvalidRelationError("a memory cannot relate to itself")
                src, dst = ((it.memory.id, r.target_id) if r.direction == "out"
                            else (r.target_id, it.memory.id))
                batch.edges.append(Relation(src, dst, RelationType(r.type), ns, r.score, now,
                                            EdgeSource.EXPLICIT))
        batch.memories.extend(records.values())
        batch.new_ids = {it.memory.id for it in fresh}
        self.core.apply(batch)
        return [it.memory for it in items]

    def refresh_context(self, ns: str, records: dict[str, Memory],
                        predecessor: dict[str, str | None]) -> None:
        """Recompute the context fields of memories whose session predecessor changed."""
        if not self.config.write.context_fields or not predecessor:
            return
        mean = self.config.write.context_embedding == "mean"
        need = [p for p in predecessor.values() if p is not None and p not in records]
        known = {**records, **self.store.get_memories(ns, need, embeddings=mean)}
        texts: list[str] = []
        targets: list[Memory] = []
        for node, pred in predecessor.items():
            m = records[node]
            if pred is None:
                m.context_keywords, m.context_embedding = "", None
                continue
            text = context_text(known[pred].content, m.content)
            m.context_keywords = self.core.analyzer.index_text(text, m.created_at)
            before = known[pred].embedding
            if mean and before is not None and m.embedding is not None:
                m.context_embedding = mean_vector(before, m.embedding)
                continue
            texts.append(text)
            targets.append(m)
        if texts:
            for m, vec in zip(targets, self.core.embedder.embed(texts), strict=True):
                m.context_embedding = vec

    def session_plan(self, ns: str, session_id: str, new: Sequence[Memory] = (),
                     removed: frozenset[str] = frozenset()) -> SessionPlan:
        members = self.store.session_members(ns, session_id)
        ids = [m for m, _ in members]
        follows = [(e.source_id, e.target_id) for e in
                   self.store.edges_of(ns, ids, [RelationType.FOLLOWS])]
        keyed = [((ts, 0, i), mid) for i, (mid, ts) in enumerate(members) if mid not in removed]
        keyed += [((m.created_at, 1, i), m.id) for i, m in enumerate(new)]
        order = [mid for _, mid in sorted(keyed, key=lambda kv: kv[0])]
        return plan_session(order, follows)

    # -- helpers --------------------------------------------------------------------------
    def _validate(self, spec: MemoryInput) -> _Item:
        wc = self.config.write
        spec.content = v.content(spec.content, wc)
        spec.type = v.memory_type("observation" if spec.type is None else spec.type)
        default = self.config.types.defaults.get(spec.type)
        if spec.importance is None:
            spec.importance = (default.importance if default and default.importance is not None
                               else 0.5)
        spec.importance = v.importance(spec.importance)
        spec.tier = v.tier(spec.tier) or (default.tier if default else None)
        spec.valid_from = v.timestamp(spec.valid_from)
        spec.valid_until = v.timestamp(spec.valid_until)
        v.validity(spec.valid_from or spec.created_at, spec.valid_until)
        spec.metadata = v.metadata(spec.metadata, wc)
        spec.created_at = v.timestamp(spec.created_at)
        spec.session_id = v.optional_text(spec.session_id, "session_id")
        spec.source = v.optional_text(spec.source, "source")
        spec.topic = v.optional_text(spec.topic, "topic")
        if spec.id is not None:
            spec.id = v.memory_id(spec.id)
        if not isinstance(spec.pinned, bool):
            raise v.ValidationError("pinned must be true or false")
        if spec.ttl is not None:
            spec.ttl = ttl_rule.ttl_seconds(spec.ttl)
        relations = [v.relation_spec(r) for r in spec.relations or ()]
        return _Item(spec, relations, content_hash(spec.content))

    def _new_memory(self, ns: str, it: _Item, now: datetime) -> Memory:
        s = it.spec
        created = s.created_at or now
        importance = float(s.importance)  # type: ignore[arg-type]  # validated
        tier = s.tier or tier_for_importance(importance, self.config.tiers)
        return Memory(
            id=s.id or str(uuid.uuid4()), namespace=ns, content=s.content, tier=tier,  # type: ignore[arg-type]
            base_importance=importance, importance=importance, pinned=s.pinned,
            created_at=created, updated_at=now, last_accessed_at=now, stored_at=now,
            reinforced_at=now, source=s.source,
            topic=s.topic, session_id=s.session_id, metadata=s.metadata or {},
            status=Status.ACTIVE, content_hash=it.hash, type=s.type or "observation",
            valid_from=s.valid_from, valid_until=s.valid_until,
            keywords=self.core.analyzer.index_text(
                s.content, created if self.config.write.date_in_keywords else None),
            mentioned=mentioned_times(s.content, created),
            expires_at=ttl_rule.expiry(now, s.ttl),
        )

    def _reinforce(self, twin: Memory, spec: MemoryInput, now: datetime) -> Memory:
        """The stored twin, reinforced: decay age reset, importance and metadata merged;
        its TTL is the one this write gives (none: it no longer expires), as a new one's."""
        out = twin.copy(last_accessed_at=max(now, twin.last_accessed_at),
                        reinforced_at=max(now, twin.reinforced_at), updated_at=now,
                        expires_at=ttl_rule.expiry(now, spec.ttl))
        _merge_into(out, spec)
        return out

    def _link_sessions(self, ns: str, fresh: list[_Item], records: dict[str, Memory],
                       batch: WriteBatch) -> None:
        sessions: dict[str, list[Memory]] = {}
        for it in fresh:
            if it.memory.session_id is not None:
                sessions.setdefault(it.memory.session_id, []).append(it.memory)
        now = self.core.clock()
        changed: dict[str, str | None] = {}
        for sid, new in sessions.items():
            # the version first: a writer that changes the chain after this read makes
            # the database refuse our batch, and it is planned again (issue 45)
            batch.sessions[sid] = self.store.session_version(ns, sid)
            plan = self.session_plan(ns, sid, new)
            batch.delete_edges.extend((s, t, RelationType.FOLLOWS) for s, t in plan.remove)
            batch.edges.extend(Relation(s, t, RelationType.FOLLOWS, ns, None, now,
                                        EdgeSource.AUTO) for s, t in plan.add)
            changed.update(plan.predecessor)
        outside = [n for n in changed if n not in records]
        records.update(self.store.get_memories(ns, outside, embeddings=True))
        if any(n not in records for n in outside):  # deleted (or still being written) since
            raise DuplicateError("a session changed while its chain was planned")
        self.refresh_context(ns, records, changed)

    def similar_edges(self, ns: str, memories: Sequence[Memory], now: datetime
                      ) -> list[Relation]:
        """Automatic SIMILAR_TO edges from each memory to its k nearest active neighbours at
        or above the threshold: stored ones, and earlier ones of the same list. A memory
        already stored (an update) never links to itself."""
        wc = self.config.write
        todo = [m for m in memories if m.embedding is not None]
        if not todo or wc.similar_k <= 0:
            return []
        vecs = np.stack([m.embedding for m in todo])  # type: ignore[misc]
        with single_threaded_blas():
            hits = self.store.vector_topk_many(ns, vecs, wc.similar_k + 1,
                                               min_score=wc.similar_threshold)
            inner = vecs @ vecs.T
        out: dict[EdgeKey, Relation] = {}
        for i, m in enumerate(todo):
            pairs = [(o, s) for o, s in hits[i] if o != m.id]
            pairs += [(todo[j].id, float(inner[i, j])) for j in range(i)]
            pairs.sort(key=lambda p: -p[1])
            for other, sim in pairs[: wc.similar_k]:
                if sim >= wc.similar_threshold:
                    rel = Relation(m.id, other, RelationType.SIMILAR_TO, ns, round(sim, 6),
                                   now, EdgeSource.AUTO)
                    out[rel.key] = rel
        return list(out.values())
