"""Edits of stored memories: relate / unrelate, update, delete, feedback, pin, restore.

Each method validates its own fields, reads what it changes and writes one atomic
``WriteBatch``; the facade holds the write lock around the call."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from graphmem.engine.core import Core
from graphmem.engine.writes import Writer
from graphmem.errors import ConflictError, InvalidRelationError, NotFoundError, ValidationError
from graphmem.models import (
    EdgeSource,
    Memory,
    Relation,
    RelationType,
    Status,
    Tier,
    Transition,
    TransitionKind,
)
from graphmem.rules import dynamics
from graphmem.rules import ttl as ttl_rule
from graphmem.rules import validation as v
from graphmem.rules.text import content_hash
from graphmem.rules.time_expr import mentioned_times
from graphmem.store.base import WriteBatch

#: the fields an update records in the memory's history when they change
_TRACKED = ("content", "importance", "tier", "metadata", "source", "topic", "type",
            "valid_from", "valid_until")


class Editor:
    """Changes to memories that already exist (``Writer`` adds new ones).

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> m = mem.store("a note", namespace="ops")
        >>> Editor(mem.core, Writer(mem.core)).set_pinned("ops", m.id, True).pinned
        True
        >>> mem.close()
    """

    def __init__(self, core: Core, writer: Writer) -> None:
        self.core = core
        self.writer = writer

    def relate(self, ns: str, source_id: str, target_id: str, type: RelationType | str,
               score: float | None) -> Relation:
        rtype = v.relation_type(type)
        if score is not None:
            score = v.score(score)
        self.core.require(ns, [source_id, target_id])  # unknown ids: 404 before anything else
        if source_id == target_id:
            raise InvalidRelationError("a memory cannot relate to itself")
        rel = Relation(source_id, target_id, rtype, ns, score, self.core.clock(),
                       EdgeSource.EXPLICIT)
        self.core.apply(WriteBatch(ns, edges=[rel]))
        return rel

    def unrelate(self, ns: str, source_id: str, target_id: str,
                 type: RelationType | str) -> None:
        rtype = v.relation_type(type, caller=False)
        edges = self.core.store.edges_of(ns, [source_id], [rtype])
        if not any(e.source_id == source_id and e.target_id == target_id for e in edges):
            raise NotFoundError(f"no {rtype.value} relation from {source_id!r} to "
                                f"{target_id!r} in namespace {ns!r}")
        self.core.apply(WriteBatch(ns, delete_edges=[(source_id, target_id, rtype)]))

    def relations(self, ns: str, id: str, types: Collection[RelationType | str] | None,
                  depth: int = 1, max_nodes: int = 100) -> list[Relation]:
        """Edges of ``id`` (``depth`` 1), or every edge met within ``depth`` hops of it,
        reaching at most ``max_nodes`` memories (the viewer's neighbourhood graph)."""
        self.core.require(ns, [id])
        wanted = None if types is None else [v.relation_type(t, caller=False) for t in types]
        if depth not in (1, 2):
            raise ValidationError("depth must be 1 or 2")
        store = self.core.store
        edges = (store.edges_of(ns, [id], wanted) if depth == 1 else
                 store.neighbourhood(ns, [id], depth, types=wanted, max_nodes=max_nodes))
        return sorted(edges, key=lambda e: (e.type.value, e.source_id, e.target_id))

    def embed_ahead(self, ns: str, id: str, content: str | None) -> dict[str, np.ndarray]:
        """The vector of an update's new content, embedded before the caller takes the write
        lock, as a write's are (ADR 0045): the model runs while other writes do their
        database work. Nothing when the content is absent, invalid, unchanged or the memory
        is not there: ``update`` then raises or finds nothing to embed, and embeds under the
        lock whatever changed since."""
        if content is None:
            return {}
        try:
            text = v.content(content, self.core.config.write)
            v.memory_id(id)
        except ValidationError:
            return {}  # ``update`` raises it, in its own order of checks
        found = self.core.store.get_memories(ns, [id])
        if id not in found or found[id].content == text:
            return {}
        self.core.vectors.check(ns)  # one model per namespace: refused before embedding
        return {text: self.writer.batcher.embed_one(text)}

    def update(self, ns: str, id: str, *, content: str | None, importance: float | None,
               tier: Tier | str | None, metadata: Mapping[str, Any] | None,
               source: str | None, topic: str | None,
               vectors: Mapping[str, np.ndarray] | None = None, **more: Any) -> Memory:
        """New content is re-embedded (``vectors``: from ``embed_ahead``) and re-indexed, its
        links refreshed; ``more`` may set ``type``, ``valid_from``, ``valid_until`` and
        ``ttl`` (seconds from now: the memory's expiry starts again, issue 48). The
        change is recorded (an ``update`` transition listing the fields, with the prior
        content when it changed: ``history``); a TTL alone is bookkeeping, one patch and no
        transition (LangGraph refreshes it on every read). The caller holds the write lock."""
        core, wc = self.core, self.core.config.write
        if unknown := set(more) - {"type", "valid_from", "valid_until", "ttl"}:
            raise ValidationError(f"unknown field(s): {', '.join(sorted(unknown))}")
        ttl = None if more.get("ttl") is None else ttl_rule.ttl_seconds(more["ttl"])
        if ttl is not None and all(x is None for x in (
                content, importance, tier, metadata, source, topic, more.get("type"),
                more.get("valid_from"), more.get("valid_until"))):
            return self._refresh_ttl(ns, id, ttl)
        m = core.require(ns, [id], embeddings=True)[id]
        before = m.copy()
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
        if more.get("type") is not None:
            m.type = v.memory_type(more["type"])
        for name in ("valid_from", "valid_until"):
            if more.get(name) is not None:
                setattr(m, name, v.timestamp(more[name]))
        v.validity(m.valid_from or m.created_at, m.valid_until)
        records = {m.id: m}
        if content is not None and content != m.content:
            m.content = v.content(content, wc)
            m.content_hash = content_hash(m.content)
            core.vectors.check(ns)
            ahead = (vectors or {}).get(m.content)
            m.embedding = ahead if ahead is not None else core.embedder.embed([m.content])[0]
            m.keywords = core.analyzer.index_text(
                m.content, m.created_at if wc.date_in_keywords else None)
            m.mentioned = mentioned_times(m.content, m.created_at)
            self._relink_after_change(ns, m, records, batch)
        m.updated_at = core.clock()
        if ttl is not None:
            m.expires_at = ttl_rule.expiry(m.updated_at, ttl)
        changed = [f for f in _TRACKED if getattr(m, f) != getattr(before, f)]
        if changed:
            batch.transitions.append(Transition(
                id, TransitionKind.UPDATE, before.tier, m.tier, "changed " + ", ".join(changed),
                m.updated_at, m.status, m.status,
                before.content if m.content != before.content else None))
        batch.memories.extend(records.values())
        core.apply(batch)
        m.embedding = m.context_embedding = None
        return m

    def _refresh_ttl(self, ns: str, id: str, ttl: float) -> Memory:
        """``update(id, ttl=...)`` alone: the expiry starts again from now, in one patch."""
        m = self.core.require(ns, [id])[id]
        now = self.core.clock()
        m.expires_at, m.updated_at = ttl_rule.expiry(now, ttl), now
        self.core.apply(WriteBatch(ns, patches=[(id, {"expires_at": m.expires_at,
                                                            "updated_at": now})]))
        return m

    def delete(self, ns: str, id: str) -> None:
        """Hard delete with its edges (explicit); the session chain is re-linked."""
        core = self.core
        m = core.require(ns, [id])[id]
        batch = WriteBatch(ns, delete_memories=[id])
        if m.session_id is not None and core.config.write.follows:
            plan = self.writer.session_plan(ns, m.session_id, removed=frozenset({id}))
            now = core.clock()
            batch.edges.extend(Relation(s, t, RelationType.FOLLOWS, ns, None, now,
                                        EdgeSource.AUTO) for s, t in plan.add)
            changed = {k: p for k, p in plan.predecessor.items() if k != id}
            records = core.store.get_memories(ns, list(changed), embeddings=True)
            self.writer.refresh_context(ns, records, changed)
            batch.memories.extend(records.values())
        core.apply(batch)

    def feedback(self, ns: str, id: str, *, useful: bool | None, outcome: str | None,
                 predicted_relevance: float | None, agent: str | None = None) -> Memory:
        """Surprise (EMA of max(0, actual - predicted)), success / failure counts, a
        promotion when due; success (or useful) reinforces: the decay age restarts. ``agent``
        (who gave it) counts towards the shared-use promotion."""
        if useful is None and outcome is None:
            raise ValidationError("feedback needs useful and/or outcome")
        if useful is not None and not isinstance(useful, bool):
            raise ValidationError("useful must be true or false")
        if outcome not in (None, "success", "failure"):
            raise ValidationError("outcome must be 'success' or 'failure'")
        if predicted_relevance is not None:
            predicted_relevance = v.importance(predicted_relevance)
        agent = v.optional_text(agent, "agent") or None
        core = self.core
        m = core.require(ns, [id])[id]
        now = core.clock()
        signals = [float(x) for x in (useful, None if outcome is None
                                      else outcome == "success") if x is not None]
        actual = sum(signals) / len(signals)
        predicted = (predicted_relevance if predicted_relevance is not None
                     else m.last_predicted if m.last_predicted is not None else 0.5)
        dyn = core.config.dynamics
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
        if agent is not None:
            fields["used_by"] = dynamics.note_use(m, agent, now, dyn)
        batch = WriteBatch(ns)
        promoted = dynamics.apply_promotion(m, now, dyn, core.config.tiers)
        if promoted is not None:
            fields.update(promoted[0])
            batch.transitions.append(promoted[1])
        batch.patches.append((m.id, fields))
        core.apply(batch)
        return m

    def set_pinned(self, ns: str, id: str, pinned: bool) -> Memory:
        m = self.core.require(ns, [id])[id]
        m.pinned = pinned
        self.core.apply(WriteBatch(ns, patches=[(id, {"pinned": pinned,
                                                            "updated_at": self.core.clock()})]))
        return m

    def restore(self, ns: str, id: str, ttl: Any = None) -> Memory:
        """An expired or archived memory active again (its decay age restarts). One whose
        own TTL ran out (marked by maintenance or not yet) comes back without an expiry,
        unless ``ttl`` gives it a new one (seconds from now; ADR 0067)."""
        seconds = None if ttl is None else ttl_rule.ttl_seconds(ttl)  # bad: nothing written
        m = self.core.require(ns, [id])[id]
        now = self.core.clock()
        expires = ttl_rule.expiry(now, seconds)
        ran_out = m.expired_at(now)
        if m.status is Status.ACTIVE and not ran_out:
            raise ConflictError(f"memory {id!r} is already active")
        was = Status.EXPIRED if ran_out else m.status
        reason = f"restored from {was.value}" + (" (ttl)" if ran_out else "")
        t = Transition(id, TransitionKind.RESTORE, m.tier, m.tier, reason, now, was,
                       Status.ACTIVE)
        if expires is not None or ran_out:
            m.expires_at = expires
        m.status, m.last_accessed_at, m.reinforced_at, m.updated_at = (Status.ACTIVE, now,
                                                                       now, now)
        self.core.apply(WriteBatch(ns, patches=[(id, {
            "status": Status.ACTIVE, "last_accessed_at": now, "reinforced_at": now,
            "updated_at": now, "expires_at": m.expires_at})], transitions=[t]))
        return m

    def _relink_after_change(self, ns: str, m: Memory, records: dict[str, Memory],
                             batch: WriteBatch) -> None:
        """After a content change: refresh successor context, own auto SIMILAR_TO edges."""
        store = self.core.store
        changed: dict[str, str | None] = {}  # whose context follows m's: memory -> predecessor
        for e in store.edges_of(ns, [m.id]):
            if e.type is RelationType.SIMILAR_TO and e.source is EdgeSource.AUTO \
                    and e.source_id == m.id:
                batch.delete_edges.append(e.key)
            elif e.type is RelationType.FOLLOWS:  # m's successor, or m itself
                changed[e.target_id] = e.source_id
        batch.edges.extend(self.writer.similar_edges(ns, [m], self.core.clock()))
        records.update(store.get_memories(ns, [k for k in changed if k not in records],
                                          embeddings=True))
        self.writer.refresh_context(ns, records, changed)
