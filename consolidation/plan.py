"""Planning a consolidation run (SPEC §6.1-6.4): which old memories are candidates, their
clusters, the decision for each, the digests of what must leave, and the fate of every
candidate. Reads the store, writes nothing: the runner applies the plan."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from graphmem.consolidation import cluster as clustering
from graphmem.consolidation import policy
from graphmem.consolidation.summarise import ClusterMember, KeyPhrases, make_summariser
from graphmem.consolidation.summarise.sentences import small_talk
from graphmem.models import (
    EdgeSource,
    Kind,
    Memory,
    Relation,
    RelationType,
    Status,
    Tier,
    Transition,
    TransitionKind,
)
from graphmem.rules import dynamics
from graphmem.rules.text import content_hash, is_chit_chat, preview
from graphmem.rules.tiers import tier_for_importance
from graphmem.store.base import WriteBatch

if TYPE_CHECKING:
    from graphmem.config import TiersConfig
    from graphmem.engine.core import Core

#: why chit-chat ("Thanks!", "Bye!") leaves the active set with its session's digest
SMALL_TALK = "small talk (greetings and reactions, no sentence with 3 content words)"
#: a candidate no cluster took: why it stays as it is (the report counts and lists them)
UNCLUSTERED = "in no cluster: HDBSCAN found no topic for it and no coherent group of " \
              "{n}+ memories formed within {days:g} days; it stays active"


def no_progress(stage: str, done: int, total: int) -> None:
    """No progress bar: what ``progress`` is when none is given."""


@dataclass
class Candidate:
    """An old memory consolidation may cluster.

    Example:
        >>> import numpy as np
        >>> from datetime import datetime, UTC
        >>> t = datetime(2023, 5, 1, tzinfo=UTC)
        >>> c = Candidate("m1", "Caroline: I went to a support group", t, t, 0.5, Tier.SLOW,
        ...               np.zeros(384, "f4"))
        >>> c.due is None
        True
    """

    id: str
    content: str
    created_at: datetime
    stored_at: datetime
    importance: float
    tier: Tier
    vector: np.ndarray
    session_id: str | None = None
    source: str | None = None
    #: why it must leave the active set (past the glacial TTL, or its tier over capacity)
    due: str | None = None
    #: what eviction orders by (decayed importance, last access, success rate, event time)
    evict: dynamics.Candidate | None = None


@dataclass
class Plan:
    """What a run would do: its clusters (each with its decision, members' fates and
    summary), the summaries' vectors, and the candidates no cluster took.

    Example:
        >>> from datetime import datetime, UTC
        >>> Plan("run-1", datetime(2026, 1, 1, tzinfo=UTC)).clusters
        []
    """

    run_id: str
    now: datetime
    clusters: list[dict[str, Any]] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # summary id -> vector
    candidates: int = 0
    tiers_before: Counter[str] = field(default_factory=Counter)
    archived_tiers: Counter[str] = field(default_factory=Counter)
    #: candidates no cluster or digest took: (namespace, id, preview, why)
    unclustered: list[dict[str, Any]] = field(default_factory=list)


class Planner:
    """Plans one run, a namespace at a time, into ``plan``; ``progress`` is called with
    ("plan", done, total).

    Example:
        >>> import tempfile
        >>> from datetime import datetime, UTC
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> plan = Plan("run-1", datetime.now(UTC))
        >>> Planner(mem.core, plan).namespace("ops")
        >>> plan.candidates
        0
        >>> mem.close()
    """

    def __init__(self, core: Core, plan: Plan,
                 progress: Callable[[str, int, int], None] | None = None) -> None:
        self.core, self.plan, self.progress = core, plan, progress or no_progress
        self.run_id, self.now = plan.run_id, plan.now
        self.store = core.store
        self.config = core.config.consolidation
        self.summarise = make_summariser(self.config)

    def candidates(self, ns: str) -> list[Candidate]:
        cutoff = self.now - timedelta(days=self.config.age_days)
        wanted = set(self.config.tiers) if self.config.tiers else None
        tiers = self.core.config.tiers
        out: list[Candidate] = []
        for page in self.store.iter_memories(ns, page=1000, statuses=[Status.ACTIVE]):
            # age since stored here: an imported 2023 conversation is not old on import day
            old = [m for m in page if m.kind is Kind.MEMORY and not m.pinned
                   and m.stored_at <= cutoff and m.embedding is not None
                   and (wanted is None or m.tier in wanted)]
            summarised = {e.target_id for e in self.store.edges_of(
                ns, [m.id for m in old], [RelationType.SUMMARIZES])}
            out.extend(_candidate(m, self.now, tiers) for m in old if m.id not in summarised)
        return out

    def namespace(self, ns: str) -> None:
        cfg, plan = self.config, self.plan
        counts = self.store.counts(ns)
        active: Counter[Tier] = Counter()
        for (tier, status, _), n in counts.memories.items():
            if status is Status.ACTIVE:
                plan.tiers_before[tier.value] += n
                active[tier] += n
        cands = self.candidates(ns)
        plan.candidates += len(cands)
        if not cands:
            return
        self.core.vectors.check(ns)  # summaries are embedded beside the members' vectors
        vectors = np.stack([c.vector for c in cands])
        window = timedelta(days=cfg.window_days)
        groups = clustering.clusters(vectors, [c.created_at for c in cands],
                                     min_cluster_size=cfg.min_cluster_size,
                                     min_samples=cfg.min_samples, window=window,
                                     whole_coherence=cfg.coherence, coherent=cfg.coherence)
        phrases = KeyPhrases([c.content for c in cands])
        chat = small_talk([ClusterMember(c.content, c.vector, c.created_at, c.source,
                                         is_chit_chat(self.core.analyzer, c.content))
                           for c in cands], self.core.analyzer)
        decided = [(idx, policy.decide(self._members(cands, chat, idx), vectors[idx],
                                       clustering.coherence(vectors[idx]), cfg))
                   for idx in groups]
        # coherent clusters stand for their members; what must still leave becomes a digest
        held = {i for idx, d in decided if d.policy != "loose" for i in idx}
        archived = Counter(cands[i].tier for idx, d in decided for i in idx
                           if cands[i].id in d.archive)
        for i, c in enumerate(cands):  # small talk carries nothing a summary could lose
            if chat[i] and i not in held and c.due is None:
                c.due = SMALL_TALK
        grouped = {i for idx in self._digests(cands, held) for i in idx}
        for i, c in enumerate(cands):
            if c.due == SMALL_TALK:
                if i in grouped:
                    archived[c.tier] += 1
                else:
                    c.due = None  # alone in its session: it stays
        self._mark_over_capacity(cands, held, active, archived)
        digests = self._digests(cands, held)
        digested = {i for idx in digests for i in idx}
        done = 0
        for n, (idx, decision) in enumerate(decided):
            if decision.policy == "loose":  # a digest takes its members that must leave
                idx = [i for i in idx if i not in digested]
                if len(idx) < cfg.min_cluster_size:
                    continue
                decision = policy.decide(self._members(cands, chat, idx), vectors[idx],
                                         clustering.coherence(vectors[idx]), cfg)
            self._entry(ns, f"{ns}/{n}", cands, chat, idx, vectors, decision, phrases, plan)
            done += len(idx)
            self.progress("plan", done, len(cands))
        for n, idx in enumerate(digests, start=len(decided)):
            vecs = vectors[idx]
            decision = policy.digest(self._members(cands, chat, idx), vecs,
                                     clustering.coherence(vecs))
            self._entry(ns, f"{ns}/{n}", cands, chat, idx, vectors, decision, phrases, plan)
        taken = {m for c in plan.clusters if c["namespace"] == ns for m in c["members"]}
        why = UNCLUSTERED.format(n=cfg.min_cluster_size, days=cfg.window_days)
        plan.unclustered.extend({"namespace": ns, "id": c.id, "preview": preview(c.content, 80),
                                 "why": why} for c in cands if c.id not in taken)
        self.progress("plan", len(cands), len(cands))

    @staticmethod
    def _members(cands: list[Candidate], chat: list[bool], idx: list[int]
                 ) -> list[policy.Member]:
        return [policy.Member(cands[i].id, cands[i].importance, cands[i].created_at, chat[i],
                              cands[i].due) for i in idx]

    def _entry(self, ns: str, key: str, cands: list[Candidate], chat: list[bool],
               idx: list[int], vectors: np.ndarray, decision: policy.Decision,
               phrases: KeyPhrases, plan: Plan) -> None:
        """The plan's record of one cluster: members, decision, each member's fate and why,
        and the summary when it archives something."""
        members = [cands[i] for i in idx]
        flags = [chat[i] for i in idx]
        vecs = vectors[idx]
        entry: dict[str, Any] = {
            "key": key, "namespace": ns, "size": len(members),
            "coherence": round(decision.coherence, 4),
            "members": [m.id for m in members],
            "previews": [preview(m.content, 80) for m in members],
            "span": [min(m.created_at for m in members).isoformat(),
                     max(m.created_at for m in members).isoformat()],
            # age as the lifecycle counts it: since stored here (ADR 0006)
            "ages_days": [round((self.now - m.stored_at).total_seconds() / 86400, 2)
                          for m in members],
            "policy": decision.policy, "reason": decision.reason,
            "keep": decision.keep, "archive": decision.archive, "summary": None,
        }
        if decision.archive:
            text = self.summarise([ClusterMember(m.content, m.vector, m.created_at, m.source, c)
                                   for m, c in zip(members, flags, strict=True)], phrases)
            sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.run_id}/{key}"))
            svec = self.core.embedder.embed([text])[0]
            if decision.policy != "digest":  # the summary must stand for what it archives
                policy.keep_uncovered(decision, [m.id for m in members], vecs @ svec,
                                      self.config.summary_cover,
                                      {m.id for m, c in zip(members, flags, strict=True) if c})
                entry["keep"], entry["archive"] = decision.keep, decision.archive
            if decision.archive:
                top = max(m.importance for m in members)
                entry["summary"] = {"id": sid, "content": text, "importance": round(top, 6)}
                plan.archived_tiers.update(m.tier.value for m in members
                                           if m.id in decision.archive)
                plan.vectors[sid] = svec
        entry["detail"] = [
            {"id": m.id, "preview": preview(m.content, 120), "tier": m.tier.value,
             "importance": round(m.importance, 4), "created_at": m.created_at.isoformat(),
             "stored_at": m.stored_at.isoformat(), "centrality": decision.centrality[m.id],
             "chit_chat": c, "action": decision.why[m.id][0], "why": decision.why[m.id][1],
             "due": m.due}
            for m, c in zip(members, flags, strict=True)]
        plan.clusters.append(entry)

    def _mark_over_capacity(self, cands: list[Candidate], held: set[int],
                            active: Counter[Tier], archived: Counter[Tier]) -> None:
        """Eviction's victims (SPEC §4) among the candidates no coherent cluster holds: a tier
        still over capacity after this run's clusters loses its lowest decayed importance,
        oldest access, lowest success rate, oldest event first. Maintenance evicts only what
        a summary stands for (ADR 0006), so they become digests here (ADR 0059)."""
        tiers = self.core.config.tiers
        for tier in Tier:
            capacity = tiers.of(tier).capacity
            over = active[tier] - archived[tier] - capacity
            if over <= 0:
                continue
            movable = [c.evict for i, c in enumerate(cands) if c.tier is tier and
                       i not in held and c.due is None and c.evict is not None]
            victims = set(dynamics.evictions(movable, len(movable) - over))
            for c in cands:
                if c.id in victims:
                    c.due = (f"{tier.value} over capacity ({active[tier] - archived[tier]} > "
                             f"{capacity})")

    def _digests(self, cands: list[Candidate], held: set[int]) -> list[list[int]]:
        """Memories that must leave (past the glacial TTL, or their tier over capacity) and
        small talk, that no coherent cluster holds: grouped by their session (episode), split by the
        time window, so a digest summary can stand for them (nothing leaves retrieval
        without a trace). Groups of at least two."""
        by_session: dict[str, list[int]] = {}
        for i, c in enumerate(cands):
            if i not in held and c.due is not None:
                by_session.setdefault(c.session_id or "", []).append(i)
        window = timedelta(days=self.config.window_days)
        times = [c.created_at for c in cands]
        out: list[list[int]] = []
        for _, idx in sorted(by_session.items()):
            out.extend(p for p in clustering.split_by_window(idx, times, window) if len(p) >= 2)
        return out


def _candidate(m: Memory, now: datetime, tiers: TiersConfig) -> Candidate:
    assert m.embedding is not None
    return Candidate(m.id, m.content, m.created_at, m.stored_at, m.base_importance, m.tier,
                     np.asarray(m.embedding, dtype=np.float32), m.session_id, m.source,
                     dynamics.expiry(m, now, tiers), dynamics.candidate(m, now, tiers))


def cluster_batch(core: Core, run_id: str, c: dict[str, Any], vector: np.ndarray,
                  now: datetime, found: dict[str, Memory]) -> WriteBatch:
    """The one atomic write that applies a planned cluster: its summary, SUMMARIZES edges to
    the members still there, and the archiving of those still active and unpinned (the
    plan was made without the lock). A digest's members leave as evictions or expiries:
    recorded as transitions with their reason (SPEC §4)."""
    ns, s = c["namespace"], c["summary"]
    start = datetime.fromisoformat(c["span"][0])
    tiers = core.config.tiers
    summary = Memory(
        id=s["id"], namespace=ns, content=s["content"], kind=Kind.SUMMARY, type="summary",
        tier=tier_for_importance(s["importance"], tiers),
        base_importance=s["importance"], importance=s["importance"],
        created_at=start, updated_at=now, last_accessed_at=now, stored_at=now,
        reinforced_at=now,
        metadata={"run_id": run_id, "members": c["size"], "policy": c["policy"],
                  "span_end": c["span"][1]},
        content_hash=content_hash(s["content"]), embedding=vector,
        keywords=core.analyzer.index_text(s["content"], start))
    members = [m for m in c["members"] if m in found]
    archive = [m for m in c["archive"] if m in found and not found[m].pinned
               and found[m].status is Status.ACTIVE]
    due = {d["id"]: d.get("due") for d in c.get("detail", ())}
    batch = WriteBatch(ns, memories=[summary], edges=[
        Relation(s["id"], m, RelationType.SUMMARIZES, ns, None, now, EdgeSource.AUTO)
        for m in members], patches=[(m, {"status": Status.ARCHIVED}) for m in archive])
    if c["policy"] == "digest":
        for m in archive:
            tier = found[m].tier
            batch.transitions.append(Transition(
                m, TransitionKind.EVICTION, tier, tier,
                f"{due.get(m) or 'due to leave'}; the digest stands for it", now,
                Status.ACTIVE, Status.ARCHIVED))
    return batch
