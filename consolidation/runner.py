"""Consolidation runs (SPEC §6): select old memories, cluster, decide per cluster, check
retrieval, apply cluster by cluster, resume after a crash, roll back.

A run is a record in the store (its plan, progress and report). Applying one cluster is one
atomic write; a cluster's summary id is derived from the run and the cluster, so re-applying
after a crash changes nothing. One run at a time across processes: a lease in the store.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from graphmem.consolidation import cluster as clustering
from graphmem.consolidation import policy
from graphmem.consolidation.summarise import KeyPhrases, summarise
from graphmem.errors import ConflictError, NotFoundError
from graphmem.models import EdgeSource, Kind, Memory, Relation, RelationType, Status, Tier
from graphmem.rules import dynamics
from graphmem.rules.text import content_hash, is_chit_chat, preview
from graphmem.rules.tiers import tier_for_importance
from graphmem.store.base import WriteBatch

if TYPE_CHECKING:
    from graphmem.engine.core import Core

log = logging.getLogger(__name__)
LEASE = "graphmem-consolidation"


@dataclass
class ConsolidationRun:
    """What ``GraphMemory.consolidate`` returns: the run record and its report.

    Example:
        >>> run = ConsolidationRun({"id": "r1", "status": "applied", "report": {}})
        >>> run.id, run.status
        ('r1', 'applied')
    """

    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def status(self) -> str:
        return str(self.data["status"])

    @property
    def report(self) -> dict[str, Any]:
        return dict(self.data.get("report", {}))


@dataclass
class _Candidate:
    id: str
    content: str
    created_at: datetime
    importance: float
    tier: Tier
    vector: np.ndarray
    session_id: str | None = None
    #: why maintenance wants it gone (past the glacial TTL), when it does
    due: str | None = None


@dataclass
class _Plan:
    clusters: list[dict[str, Any]] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # summary id -> vector
    candidates: int = 0
    tiers_before: Counter[str] = field(default_factory=Counter)
    archived_tiers: Counter[str] = field(default_factory=Counter)


class Consolidator:
    """One consolidation run at a time (a lease in the store): plan clusters without the
    write lock, check retrieval, apply cluster by cluster; resumable, reversible.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.bench.scale import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> run = Consolidator(mem.core).run("ops", dry_run=True)
        >>> run.status, run.report["candidates"]
        ('dry_run', 0)
        >>> mem.close()
    """

    def __init__(self, core: Core,
                 progress: Callable[[str, int, int], None] | None = None,
                 lock: AbstractContextManager[Any] | None = None) -> None:
        self.core = core
        #: the facade's write lock, held for one step at a time (a cluster, a record save),
        #: never for a whole run: planning reads without it
        self.lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        self.store = core.store
        self.config = core.config.consolidation
        self.lease: Consolidator._Lease | None = None
        #: progress bars: called with (stage, done, total): "plan" counts candidates of a
        #: namespace as their clusters are decided, "apply" counts clusters written
        self.progress = progress

    # -- entry points ------------------------------------------------------------------------
    def run(self, namespace: str | None = None, *, dry_run: bool = False) -> ConsolidationRun:
        self.core.settle()  # deferred accesses count (importance, last access) before we read
        now = self.core.clock()
        run_id = f"run-{now.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        if dry_run:  # saved, so the report can be opened later; it changes nothing else
            data = self._new_run(run_id, namespace, now, dry_run=True)[0]
            with self.lock:
                self.store.save_run(data)
            return ConsolidationRun(data)
        with self._lease(run_id, now):
            unfinished = [r for r in self.store.list_runs()
                          if r["status"] == "running" and r.get("namespace") == namespace]
            if unfinished:  # a crashed run: finish it first
                data = unfinished[0]
                log.info("resuming consolidation run %s", data["id"])
                self._apply(data)
                return ConsolidationRun(data)
            data, _ = self._new_run(run_id, namespace, now, dry_run=False)
            with self.lock:
                self.store.save_run(data)
            if data["status"] == "running":
                self._apply(data)
            return ConsolidationRun(data)

    def approve(self, run_id: str) -> ConsolidationRun:
        data = self._get(run_id)
        if data["status"] != "pending_approval":
            raise ConflictError(f"run {run_id} is {data['status']}, not pending_approval")
        with self._lease(run_id, self.core.clock()):
            data["status"] = data["report"]["status"] = "running"
            data["approved_at"] = self.core.clock().isoformat()
            with self.lock:
                self.store.save_run(data)
            self._apply(data)
        return ConsolidationRun(data)

    def rollback(self, run_id: str) -> ConsolidationRun:
        data = self._get(run_id)
        if data["status"] not in ("applied", "running"):
            raise ConflictError(f"run {run_id} is {data['status']}: nothing to roll back")
        with self._lease(run_id, self.core.clock()):
            for c in data["clusters"]:
                # applied = its summary exists (progress is saved every few seconds only)
                if not c.get("summary") or not self.store.get_memories(
                        c["namespace"], [c["summary"]["id"]]):
                    continue
                batch = WriteBatch(c["namespace"], patches=[
                    (m, {"status": Status.ACTIVE}) for m in c["archive"]])
                if c.get("summary"):
                    batch.delete_memories.append(c["summary"]["id"])
                with self.lock:
                    self.core.apply(batch)
            data["status"] = data["report"]["status"] = "rolled_back"
            data["rolled_back_at"] = self.core.clock().isoformat()
            with self.lock:
                self.store.save_run(data)
        return ConsolidationRun(data)

    # -- planning ----------------------------------------------------------------------------
    def _new_run(self, run_id: str, namespace: str | None, now: datetime, *,
                 dry_run: bool) -> tuple[dict[str, Any], _Plan]:
        from graphmem.consolidation.report import build_report

        plan = _Plan()
        for ns in [namespace] if namespace else self.store.namespaces():
            self._plan_namespace(run_id, ns, now, plan)
        check = self._retrieval_check(plan)
        status = ("dry_run" if dry_run else
                  "pending_approval" if check["held_on"] > self.config.max_recall_loss else
                  "running")
        data: dict[str, Any] = {
            "id": run_id, "namespace": namespace, "status": status, "dry_run": dry_run,
            "created_at": now.isoformat(), "candidates": plan.candidates,
            "clusters": plan.clusters, "done": [], "retrieval_check": check,
        }
        data["report"] = build_report(data, plan.tiers_before, plan.archived_tiers, now)
        return data, plan

    def _candidates(self, ns: str, now: datetime) -> list[_Candidate]:
        cutoff = now - timedelta(days=self.config.age_days)
        wanted = set(self.config.tiers) if self.config.tiers else None
        out: list[_Candidate] = []
        for page in self.store.iter_memories(ns, page=1000, statuses=[Status.ACTIVE]):
            # age since stored here: an imported 2023 conversation is not old on import day
            old = [m for m in page if m.kind is Kind.MEMORY and not m.pinned
                   and m.stored_at <= cutoff and m.embedding is not None
                   and (wanted is None or m.tier in wanted)]
            summarised = {e.target_id for e in self.store.edges_of(
                ns, [m.id for m in old], [RelationType.SUMMARIZES])}
            tiers = self.core.config.tiers
            out.extend(_Candidate(m.id, m.content, m.created_at, m.base_importance, m.tier,
                                  np.asarray(m.embedding, dtype=np.float32), m.session_id,
                                  dynamics.expiry(m, now, tiers))
                       for m in old if m.id not in summarised)
        return out

    def _plan_namespace(self, run_id: str, ns: str, now: datetime, plan: _Plan) -> None:
        cfg = self.config
        counts = self.store.counts(ns)
        for (tier, status, _), n in counts.memories.items():
            if status is Status.ACTIVE:
                plan.tiers_before[tier.value] += n
        cands = self._candidates(ns, now)
        plan.candidates += len(cands)
        if not cands:
            return
        self.core.vectors.check(ns)  # summaries are embedded beside the members' vectors
        vectors = np.stack([c.vector for c in cands])
        groups = clustering.clusters(vectors, [c.created_at for c in cands],
                                     min_cluster_size=cfg.min_cluster_size,
                                     min_samples=cfg.min_samples,
                                     window=timedelta(days=cfg.window_days),
                                     whole_coherence=cfg.coherence)
        phrases = KeyPhrases([c.content for c in cands])
        analyzer = self.core.analyzer
        done = 0
        topical = len(groups)
        groups += self._digests(cands, {i for g in groups for i in g})
        for n, idx in enumerate(groups):
            members = [cands[i] for i in idx]
            vecs = vectors[idx]
            chat = [is_chit_chat(analyzer, m.content) for m in members]
            pm = [policy.Member(m.id, m.importance, m.created_at, c, m.due)
                  for m, c in zip(members, chat, strict=True)]
            decision = (policy.decide(pm, vecs, clustering.coherence(vecs), cfg)
                        if n < topical else policy.digest(pm, vecs, clustering.coherence(vecs)))
            key = f"{ns}/{n}"
            entry: dict[str, Any] = {
                "key": key, "namespace": ns, "size": len(members),
                "coherence": round(decision.coherence, 4),
                "members": [m.id for m in members],
                "previews": [preview(m.content, 80) for m in members],
                "span": [min(m.created_at for m in members).isoformat(),
                         max(m.created_at for m in members).isoformat()],
                "ages_days": [round((now - m.created_at).total_seconds() / 86400, 2)
                              for m in members],
                "policy": decision.policy, "reason": decision.reason,
                "keep": decision.keep, "archive": decision.archive, "summary": None,
                "detail": [{"id": m.id, "preview": preview(m.content, 120),
                            "tier": m.tier.value, "importance": round(m.importance, 4),
                            "created_at": m.created_at.isoformat(),
                            "centrality": decision.centrality[m.id],
                            "chit_chat": c, "action": decision.why[m.id][0],
                            "why": decision.why[m.id][1]}
                           for m, c in zip(members, chat, strict=True)],
            }
            if decision.archive:
                text = summarise([m.content for m in members], vecs, phrases, cfg, chat)
                sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{run_id}/{key}"))
                svec = self.core.embedder.embed([text])[0]
                if decision.policy != "digest":  # the summary must stand for what it archives
                    policy.keep_uncovered(decision, [m.id for m in members], vecs @ svec,
                                          cfg.summary_cover)
                    entry["keep"], entry["archive"] = decision.keep, decision.archive
                    for d in entry["detail"]:
                        d["action"], d["why"] = decision.why[d["id"]]
            if decision.archive:
                top = max(m.importance for m in members)
                entry["summary"] = {"id": sid, "content": text, "importance": round(top, 6)}
                for m in members:
                    if m.id in decision.archive:
                        plan.archived_tiers[m.tier.value] += 1
                plan.vectors[sid] = svec
            plan.clusters.append(entry)
            if self.progress is not None:
                done += len(members)
                self.progress("plan", done, len(cands))
        if self.progress is not None:
            self.progress("plan", len(cands), len(cands))

    def _digests(self, cands: list[_Candidate], clustered: set[int]) -> list[list[int]]:
        """Memories due to leave (past the glacial TTL) that no topical cluster took: grouped
        by their session (episode), split by the time window, so a digest summary can stand
        for them (nothing leaves retrieval without a trace). Groups of at least two."""
        by_session: dict[str, list[int]] = {}
        for i, c in enumerate(cands):
            if i not in clustered and c.due is not None:
                by_session.setdefault(c.session_id or "", []).append(i)
        window = timedelta(days=self.config.window_days)
        times = [c.created_at for c in cands]
        out: list[list[int]] = []
        for _, idx in sorted(by_session.items()):
            out.extend(p for p in clustering.split_by_window(idx, times, window) if len(p) >= 2)
        return out

    def _retrieval_check(self, plan: _Plan) -> dict[str, Any]:
        """Queries built from soon-archived members (12 words of each, a sample), vector
        search only. ``recall_before``: the member in the top 10 today. After the plan:
        ``recall_after`` (the lineage view, what ``include_archived`` retrieval gives: the
        member itself, reached through its summary, or its summary, in the top 10 among
        active memories, the new summaries and covered archived members) and
        ``recall_after_default`` (the default view: only the summary can stand in). The
        ``check_view`` in config decides which loss holds a run for approval (ADR 0006)."""
        cfg = self.config
        # digests are left out: their members leave for their retention, not for the
        # summary (which is what keeps them reachable at all, ADR 0006)
        sample = [(c, m) for c in plan.clusters if c["summary"] and c["policy"] != "digest"
                  for m in c["archive"]]
        sample = sample[:: max(1, len(sample) // max(1, cfg.check_queries))][
            : cfg.check_queries]
        before = after = after_default = 0
        archived = {m for c in plan.clusters for m in c["archive"]}
        for c, member_id in sample:
            ns = c["namespace"]
            text = self.store.get_memories(ns, [member_id])[member_id].content
            query = " ".join(text.split()[:12])
            q = self.core.embedder.embed([query])[0]
            hits = self.store.vector_topk(ns, q, 10 + len(archived))
            before += member_id in [i for i, _ in hits[:10]]
            summaries = [(c2["summary"]["id"], float(plan.vectors[c2["summary"]["id"]] @ q))
                         for c2 in plan.clusters if c2["summary"] and c2["namespace"] == ns]
            active = [(i, s) for i, s in hits if i not in archived] + summaries
            top = {i for i, _ in sorted(active, key=lambda p: -p[1])[:10]}
            after_default += c["summary"]["id"] in top
            lineage = {i for i, _ in sorted(hits + summaries, key=lambda p: -p[1])[:10]}
            after += member_id in lineage or c["summary"]["id"] in lineage
        n = len(sample)
        recall_before = before / n if n else 1.0
        recall_after = after / n if n else 1.0
        recall_default = after_default / n if n else 1.0
        loss = max(0.0, recall_before - recall_after)
        default_loss = max(0.0, recall_before - recall_default)
        return {"queries": n, "recall_before": round(recall_before, 4),
                "recall_after": round(recall_after, 4),
                "recall_after_default": round(recall_default, 4),
                "loss": round(loss, 4), "default_loss": round(default_loss, 4),
                "view": cfg.check_view,
                "held_on": round(loss if cfg.check_view == "lineage" else default_loss, 4),
                "max_loss": cfg.max_recall_loss}

    # -- applying ----------------------------------------------------------------------------
    def _apply(self, data: dict[str, Any]) -> None:
        now = self.core.clock()
        tiers = self.core.config.tiers
        saved = time.monotonic()
        done = set(data["done"])
        for c in data["clusters"]:
            if c["key"] in done or not c["archive"]:
                if c["key"] not in done:
                    data["done"].append(c["key"])
                    done.add(c["key"])
                continue
            ns, s = c["namespace"], c["summary"]
            start = datetime.fromisoformat(c["span"][0])
            vec = self.core.embedder.embed([s["content"]])[0]
            summary = Memory(
                id=s["id"], namespace=ns, content=s["content"], kind=Kind.SUMMARY, type="summary",
                tier=tier_for_importance(s["importance"], tiers),
                base_importance=s["importance"], importance=s["importance"],
                created_at=start, updated_at=now, last_accessed_at=now, stored_at=now,
                reinforced_at=now,
                metadata={"run_id": data["id"], "members": c["size"], "policy": c["policy"],
                          "span_end": c["span"][1]},
                content_hash=content_hash(s["content"]), embedding=vec,
                keywords=self.core.analyzer.index_text(s["content"], start))
            with self.lock:  # one short step: writers wait for one cluster at most
                # the plan was made without the lock: members deleted, pinned or archived
                # since then are left as they are now
                found = self.store.get_memories(ns, c["members"])
                members = [m for m in c["members"] if m in found]
                archive = [m for m in c["archive"] if m in found and not found[m].pinned
                           and found[m].status is Status.ACTIVE]
                batch = WriteBatch(ns, memories=[summary], edges=[
                    Relation(s["id"], m, RelationType.SUMMARIZES, ns, None, now,
                             EdgeSource.AUTO) for m in members],
                    patches=[(m, {"status": Status.ARCHIVED}) for m in archive])
                self.core.apply(batch)
            data["done"].append(c["key"])
            done.add(c["key"])
            if self.progress is not None:
                self.progress("apply", len(done), len(data["clusters"]))
            if time.monotonic() - saved > 2.0:  # progress every few seconds: re-applying a
                with self.lock:                # cluster after a crash changes nothing
                    self.store.save_run(data)
                if self.lease is not None:
                    self.lease.heartbeat()
                saved = time.monotonic()
        data["status"] = data["report"]["status"] = "applied"
        data["finished_at"] = now.isoformat()
        with self.lock:
            self.store.save_run(data)

    # -- helpers -----------------------------------------------------------------------------
    def _get(self, run_id: str) -> dict[str, Any]:
        data = self.store.get_run(run_id)
        if data is None:
            raise NotFoundError(f"no consolidation run {run_id!r}")
        return data

    class _Lease:
        """The one-run-at-a-time lease. Its owner names the run, the host and the process
        (``run@host:pid``): a lease whose process is gone on this host is taken over at once;
        one held on another host lapses ``lease_minutes`` after its last heartbeat (every
        saved step renews it)."""

        def __init__(self, outer: Consolidator, run_id: str, now: datetime) -> None:
            self.outer, self.now = outer, now
            self.owner = f"{run_id}@{socket.gethostname()}:{os.getpid()}"

        def _until(self, now: datetime) -> datetime:
            return now + timedelta(minutes=self.outer.config.lease_minutes)

        def __enter__(self) -> Consolidator._Lease:
            store = self.outer.store
            if store.acquire_lease(LEASE, self.owner, self._until(self.now), self.now):
                return self
            holder = store.lease_holder(LEASE)
            if holder is not None and _dead_here(holder[0]):
                log.warning("consolidation lease of a process that is gone (%s): taking over",
                            holder[0])
                store.release_lease(LEASE, holder[0])
                if store.acquire_lease(LEASE, self.owner, self._until(self.now), self.now):
                    return self
            raise ConflictError("another consolidation run is in progress"
                                + (f" ({holder[0]})" if holder else ""))

        def heartbeat(self) -> None:
            now = self.outer.core.clock()
            if not self.outer.store.acquire_lease(LEASE, self.owner, self._until(now), now):
                raise ConflictError("the consolidation lease was lost")

        def __exit__(self, *exc: object) -> None:
            self.outer.store.release_lease(LEASE, self.owner)

    def _lease(self, owner: str, now: datetime) -> Consolidator._Lease:
        self.lease = Consolidator._Lease(self, owner, now)
        return self.lease


def _dead_here(owner: str) -> bool:
    """True when ``owner`` (``run@host:pid``) names a process of this host that is gone."""
    _, _, where = owner.rpartition("@")
    host, _, pid = where.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
