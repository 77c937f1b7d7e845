"""The maintenance job: decay persisted, promotions, demotions, expiry and eviction, applied
in bounded batches (SPEC §4). Idempotent: a second run at the same time changes nothing.
``dry_run`` computes the same report and writes nothing.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from graphmem.engine.core import Core
from graphmem.engine.leases import Lease
from graphmem.models import Memory, RelationType, Status, Tier, Transition, TransitionKind
from graphmem.rules import dynamics
from graphmem.rules import ttl as ttl_rule
from graphmem.rules.importance import computed_importance
from graphmem.rules.tiers import current_importance
from graphmem.store.base import WriteBatch

log = logging.getLogger(__name__)

#: the store lease a maintenance run holds: one run at a time across processes and replicas
LEASE = "maintenance"
#: a decayed importance is written only when it moved at least this much
IMPORTANCE_EPSILON = 1e-4

#: the transitions a maintenance run makes (restore, update and supersede come from users)
_MAINTENANCE_KINDS = (TransitionKind.PROMOTION, TransitionKind.DEMOTION, TransitionKind.EXPIRY,
                     TransitionKind.EVICTION)


@dataclass(slots=True)
class MaintenanceReport:
    """What one maintenance run did (or, dry, would do): importance updates and tier
    transitions with their reasons.

    Example:
        >>> from datetime import datetime, UTC
        >>> report = MaintenanceReport(at=datetime(2026, 1, 1, tzinfo=UTC), dry_run=True)
        >>> report.changed, report.counts()["promotion"]
        (False, 0)
    """

    at: datetime
    dry_run: bool
    namespaces: list[str] = field(default_factory=list)
    scanned: int = 0
    importance_updates: int = 0
    transitions: list[Transition] = field(default_factory=list)
    #: memories due to expire or be evicted that no summary covers yet: they stay active
    #: until consolidation stands a summary for them (ADR 0006)
    awaiting_consolidation: int = 0
    #: stale records the store reclaimed after the run (``MemoryStore.compact``)
    compacted: int = 0
    #: why the run did nothing: another run (this owner) holds the maintenance lease
    skipped: str | None = None
    #: session context entries and messages past their TTL deleted (issue 48)
    context_purged: int = 0

    def counts(self) -> dict[str, int]:
        c = Counter(t.kind.value for t in self.transitions)
        return {k.value: c.get(k.value, 0) for k in _MAINTENANCE_KINDS}

    @property
    def changed(self) -> bool:
        return bool(self.importance_updates or self.transitions)

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "dry_run": self.dry_run,
                "namespaces": self.namespaces, "scanned": self.scanned,
                "importance_updates": self.importance_updates, "counts": self.counts(),
                "awaiting_consolidation": self.awaiting_consolidation,
                "compacted": self.compacted, "skipped": self.skipped,
                "context_purged": self.context_purged,
                "transitions": [t.to_dict() for t in self.transitions]}


class Maintainer:
    """Decay, promotion, demotion, expiry and eviction over whole namespaces, one page at a
    time under the write lock (ADR 0004, ADR 0006).

    Example:
        >>> import tempfile, threading
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> _ = mem.store("a note", namespace="ops")
        >>> Maintainer(mem.core, threading.RLock()).run("ops", dry_run=True).scanned
        1
        >>> mem.close()
    """

    def __init__(self, core: Core, lock: AbstractContextManager[Any]) -> None:
        self.core = core
        self.store = core.store
        self.config = core.config
        self.clock = core.clock
        #: the facade's write lock, held for one page at a time (read, decide, write), never
        #: for a whole run, so writers wait one step at most
        self.lock = lock
        #: runs of this process that found another run holding the lease and did nothing
        self.skipped = 0

    def run(self, namespace: str | None = None, *, dry_run: bool = False) -> MaintenanceReport:
        """One run over the namespace (default: every one). A run that writes holds the
        store's maintenance lease (one at a time across processes and replicas); one that
        finds it held does nothing (``report.skipped``, counted in ``skipped``)."""
        self.core.settle()  # deferred accesses count (windows, last access) before we read
        now = self.clock()
        report = MaintenanceReport(at=now, dry_run=dry_run)
        lease = None if dry_run else Lease(  # a dry run writes nothing: no lease
            self.store, LEASE, uuid.uuid4().hex[:12], timedelta(
                minutes=self.config.dynamics.maintenance_interval_minutes), self.clock,
            "maintenance")
        if lease is not None and (holder := lease.take()) is not None:
            self.skipped += 1
            report.skipped = f"another maintenance run holds the lease ({holder})"
            log.debug("maintenance skipped: %s", report.skipped)
            return report
        try:
            for ns in [namespace] if namespace else self.store.namespaces():
                report.namespaces.append(ns)
                self._namespace(ns, now, dry_run, report, lease)
            if not dry_run:
                # expired session context goes, as reads already leave it out (issue 48)
                report.context_purged = self.store.context_purge(namespace, now)
                with self.lock:
                    report.compacted = self.store.compact(
                        self.config.tuning.compact_min_stale)
        finally:
            if lease is not None:
                lease.release()
        log.info("maintenance%s: %d memories scanned, %s", " (dry run)" if dry_run else "",
                 report.scanned, report.counts())
        return report

    def _covered(self, ns: str, ids: list[str]) -> set[str]:
        """The ids among ``ids`` that a summary stands for (a SUMMARIZES edge into them)."""
        wanted = set(ids)
        return {e.target_id for e in self.store.edges_of(ns, ids, [RelationType.SUMMARIZES])
                if e.target_id in wanted}

    def _namespace(self, ns: str, now: datetime, dry_run: bool,
                   report: MaintenanceReport, lease: Lease | None = None) -> None:
        tuning = self.config.tuning
        members: dict[Tier, list[dynamics.Candidate]] = {t: [] for t in Tier}
        pages = self.store.iter_memories(ns, page=tuning.maintenance_batch, embeddings=False,
                                         statuses=[Status.ACTIVE])
        while True:
            if lease is not None:
                lease.renew()  # a long run keeps its lease page by page
            with self.lock:
                if not self._page(ns, next(pages, None), now, dry_run, report, members):
                    break
        self._evict(ns, now, dry_run, report, members)

    def _page(self, ns: str, page: list[Memory] | None, now: datetime, dry_run: bool,
              report: MaintenanceReport, members: dict[Tier, list[dynamics.Candidate]]
              ) -> bool:
        """One page read, decided and written under the lock; False when there is none."""
        if page is None:
            return False
        tiers, dyn = self.config.tiers, self.config.dynamics
        batch = WriteBatch(ns)
        covered = self._covered(ns, [m.id for m in page])
        causes = self._causes_out(ns, page)
        for m in page:
            report.scanned += 1
            if m.expired_at(now):  # its own TTL ran out (issue 48): expired, restorable
                batch.transitions.append(Transition(
                    m.id, TransitionKind.EXPIRY, m.tier, m.tier, ttl_rule.REASON, now,
                    Status.ACTIVE, Status.EXPIRED))
                m.status = Status.EXPIRED
                batch.patches.append((m.id, {"status": Status.EXPIRED}))
                continue
            fields: dict[str, Any] = {}
            promoted = dynamics.apply_promotion(m, now, dyn, tiers)
            if promoted is not None:
                fields.update(promoted[0])
                batch.transitions.append(promoted[1])
            else:
                for source, target, reason in dynamics.settle(m, now, tiers):
                    batch.transitions.append(Transition(
                        m.id, TransitionKind.DEMOTION, source, target, reason, now))
                    fields.update({f: getattr(m, f) for f in dynamics.DEMOTION_FIELDS})
                if (why := dynamics.expiry(m, now, tiers)) is not None:
                    if m.id in covered:
                        batch.transitions.append(Transition(
                            m.id, TransitionKind.EXPIRY, m.tier, m.tier,
                            f"{why}; its summary stands for it", now,
                            Status.ACTIVE, Status.EXPIRED))
                        m.status = fields["status"] = Status.EXPIRED
                    else:  # nothing leaves without a trace: consolidation first
                        report.awaiting_consolidation += 1
            value = (round(current_importance(m, now, tiers), 6) if causes is None else
                     computed_importance(m, now, self.config.importance,
                                         causes[m.id]))
            if abs(value - m.importance) > IMPORTANCE_EPSILON:
                m.importance = fields["importance"] = value
                report.importance_updates += 1
            if fields:
                batch.patches.append((m.id, fields))
            if m.status is Status.ACTIVE:
                members[m.tier].append(dynamics.candidate(m, now, tiers,
                                                          m.id in covered))
        report.transitions.extend(batch.transitions)
        if batch and not dry_run:
            self.core.apply(batch)
        return True

    def _causes_out(self, ns: str, page: list[Memory]) -> Counter[str] | None:
        """CAUSES out-degree of the page's memories when importance is computed (ADR 0014),
        else None (the decayed base importance is persisted)."""
        if not self.config.importance.computed:
            return None
        ids = {m.id for m in page}
        return Counter(r.source_id for r in self.core.store.edges_of(
            ns, ids, types=[RelationType.CAUSES]) if r.source_id in ids)

    def _evict(self, ns: str, now: datetime, dry_run: bool, report: MaintenanceReport,
               members: dict[Tier, list[dynamics.Candidate]]) -> None:
        tiers, batch_size = self.config.tiers, self.config.tuning.maintenance_batch
        for tier, group in members.items():
            capacity = tiers.of(tier).capacity
            victims = dynamics.evictions(group, capacity)
            report.awaiting_consolidation += max(0, len(group) - capacity - len(victims))
            for start in range(0, len(victims), batch_size):
                batch = WriteBatch(ns)
                for id_ in victims[start:start + batch_size]:
                    batch.patches.append((id_, {"status": Status.ARCHIVED}))
                    batch.transitions.append(Transition(
                        id_, TransitionKind.EVICTION, tier, tier,
                        f"{tier.value} over capacity ({len(group)} > {capacity}); its "
                        "summary stands for it", now,
                        Status.ACTIVE, Status.ARCHIVED))
                report.transitions.extend(batch.transitions)
                if not dry_run:
                    with self.lock:
                        self.core.apply(batch)

