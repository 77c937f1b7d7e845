"""The lifecycle benchmark (issue 10): months of simulated use of LoCoMo conversations.

Per conversation, one namespace and an injected clock. For each session in date order the
clock is set to the session's date, its turns are stored as the LoCoMo benchmark stores them,
and retrieval runs once with each turn as the query (an agent recalling before it replies, so
access-driven dynamics happen). Between sessions the clock advances and the jobs run as
``graphmem serve`` schedules them: maintenance every 15 minutes, consolidation once a day.

Runs are coalesced only where the outcome is provably the same:
- a maintenance tick runs when some memory's state can have changed since the last run
  (``dynamics.next_change``: staleness, the importance floor or the TTL was crossed, or
  memories were written or accessed); the ticks skipped would change nothing but the persisted
  importance cache, which ranking does not read;
- a daily consolidation runs when its candidate set can differ from the last run's: memories
  became old enough, or the last run changed something.
Finally the clock moves 30 days past the last session and every question is asked twice:
with the default call, as users ask (``retrieve(q, namespace=ns, limit=10)``), and with the
``comprehensive`` strategy (every tier, no tier weight, archived memories reached through
their summaries as if active).

Scores: static (the same pipeline on a fresh store, no lifecycle), default (the evidence
memory itself in the top 10 of the default call: the headline), strict (the same in the
comprehensive view), lineage (the evidence memory, or a returned summary that SUMMARIZES it,
comprehensive view); evidence that ended archived or expired; active / stored; and a ledger
check.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from graphmem import GraphMemory
from graphmem.bench.locomo import CachedEmbedder, Conversation, conversations
from graphmem.models import RelationType, Status, Tier
from graphmem.rules.dynamics import next_change

TICK = timedelta(minutes=15)
FF_LIMIT = 3  # fast_first is timed on recalls of this many results
DAY = timedelta(days=1)
TAIL = timedelta(days=30)


class SimClock:
    """A clock the lifecycle bench moves by hand (``clock=`` of ``GraphMemory``).

    Example:
        >>> from datetime import datetime, timedelta, UTC
        >>> clock = SimClock(datetime(2023, 5, 1, tzinfo=UTC))
        >>> clock.now += timedelta(days=30); clock().month
        5
    """

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


@dataclass
class ConvResult:
    """One LoCoMo conversation's numbers in the lifecycle bench.

    Example:
        >>> ConvResult("conv-26", questions=10).strict_r10
        0.0
    """

    name: str
    questions: int = 0
    static_r10: float = 0.0
    static_mrr: float = 0.0
    default_r10: float = 0.0
    strict_r10: float = 0.0
    lineage_r10: float = 0.0
    stored: int = 0
    active: int = 0
    summaries: int = 0
    evidence: int = 0
    evidence_archived: int = 0
    evidence_expired: int = 0
    ledger_ok: bool = True
    ledger_missing: int = 0
    maintenance_runs: int = 0
    consolidation_runs: int = 0
    held_for_approval: int = 0
    recall_queries: int = 0
    transitions: dict[str, int] = field(default_factory=dict)
    #: fast_first against weighted on the same recalls (ms): when the fast tier sufficed,
    #: and when it fell through
    timing: dict[str, list[float]] = field(default_factory=lambda: {
        "weighted": [], "fast_first_sufficed": [], "fast_first_fell_through": []})
    seconds: float = 0.0

    @property
    def active_share(self) -> float:
        return self.active / self.stored if self.stored else 1.0

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("name", "timing")}
        out["fast_first"] = _timing(self.timing)
        for k in ("static_r10", "static_mrr", "default_r10", "strict_r10", "lineage_r10"):
            out[k] = round(out[k], 4)
        out["active_share"] = round(self.active_share, 4)
        out["seconds"] = round(self.seconds, 1)
        return out


def _sessions(conv: Conversation) -> list[tuple[datetime, list[dict[str, Any]]]]:
    by: dict[str, list[dict[str, Any]]] = {}
    for t in conv.turns:
        by.setdefault(t["session_id"], []).append(t)
    return sorted(((min(t["created_at"] for t in ts), ts) for ts in by.values()),
                  key=lambda p: p[0])


def _store(mem: GraphMemory, conv: Conversation, turns: list[dict[str, Any]]
           ) -> dict[str, str]:
    stored = mem.store_many([{k: t[k] for k in ("content", "source", "session_id",
                                                "created_at")} for t in turns],
                            namespace=conv.name)
    return {m.id: t["dia_id"] for m, t in zip(stored, turns, strict=True)}


def _recall(scores: list[float], rr: list[float], ranked: list[str], evidence: set[str],
            found: Callable[[str], set[str]]) -> None:
    hit: set[str] = set()
    first = None
    for pos, rid in enumerate(ranked[:10]):
        got = found(rid) & evidence
        if got and first is None:
            first = pos
        hit |= got
    scores.append(len(hit) / len(evidence))
    rr.append(0.0 if first is None else 1.0 / (first + 1))


class _Jobs:
    """Maintenance and consolidation on serve's cadence, coalesced where provably equal."""

    def __init__(self, mem: GraphMemory, ns: str, clock: SimClock, start: datetime,
                 res: ConvResult) -> None:
        self.mem, self.ns, self.clock, self.res = mem, ns, clock, res
        self.origin = start
        self.dirty = True  # something was written or accessed since the last maintenance
        self.next_due: datetime | None = None
        self.last_day: datetime | None = None
        self.consolidation_dirty = True
        self.old_count = -1

    def _tick_at_or_after(self, t: datetime, step: timedelta) -> datetime:
        n = -(-(t - self.origin) // step)
        return self.origin + n * step

    def _maintain(self) -> None:
        report = self.mem.maintain(self.ns)
        self.res.maintenance_runs += 1
        for kind, n in report.counts().items():
            self.res.transitions[kind] = self.res.transitions.get(kind, 0) + n
        self.dirty = False
        # what is due at or before now was applied by this run (a fixed point) or waits for
        # a summary (it changes only when consolidation writes one: that sets ``dirty``)
        now = self.clock.now
        changes = [c for page in self.mem.backend.iter_memories(
            self.ns, embeddings=False, statuses=[Status.ACTIVE])
            for m in page if (c := next_change(m, self.mem.config.tiers)) is not None
            and c > now]
        self.next_due = min(changes) if changes else None
        if report.transitions:
            self.consolidation_dirty = True

    def _consolidate(self) -> None:
        cutoff = self.clock.now - timedelta(days=self.mem.config.consolidation.age_days)
        old = sum(1 for page in self.mem.backend.iter_memories(
            self.ns, embeddings=False, statuses=[Status.ACTIVE])
            for m in page if m.stored_at <= cutoff)
        if old == self.old_count and not self.consolidation_dirty:
            return  # the same candidates as the last run, which changed nothing: same outcome
        self.old_count = old
        run = self.mem.consolidate(self.ns)
        self.res.consolidation_runs += 1
        self.res.held_for_approval += run.status == "pending_approval"
        self.consolidation_dirty = bool(run.report.get("summaries"))
        if self.consolidation_dirty:
            self.dirty = True

    def advance(self, until: datetime) -> None:
        """Run every job due from now up to ``until`` (exclusive), then set the clock there."""
        while True:
            candidates = []
            if self.dirty:
                candidates.append(self._tick_at_or_after(self.clock.now, TICK))
            elif self.next_due is not None:
                candidates.append(self._tick_at_or_after(max(self.next_due, self.clock.now),
                                                         TICK))
            day = self._tick_at_or_after(self.clock.now, DAY)
            if self.last_day is not None and day <= self.last_day:
                day += DAY
            candidates.append(day)
            at = min(candidates)
            if at >= until:
                break
            self.clock.now = at
            if at == day:
                self.last_day = day
                self._consolidate()
            if self.dirty or (self.next_due is not None and self.next_due <= at):
                self._maintain()
        self.clock.now = until


def run_conversation(conv: Conversation, emb: Any, config: Any = None,
                     progress: Callable[[str], None] | None = None) -> ConvResult:
    res = ConvResult(conv.name)
    t0 = time.perf_counter()
    sessions = _sessions(conv)
    questions = [qa for qa in conv.questions if qa["evidence"]]
    res.questions = len(questions)
    with tempfile.TemporaryDirectory() as tmp:
        # static: the same pipeline, no lifecycle
        with GraphMemory.open(Path(tmp) / "static", embedder=emb, config=config) as mem:
            id_map = _store(mem, conv, conv.turns)
            r10: list[float] = []
            rr: list[float] = []
            for qa in questions:
                hits = mem.retrieve(qa["question"], namespace=conv.name, limit=10,
                                    record_access=False)
                _recall(r10, rr, [h.id for h in hits], set(qa["evidence"]),
                        lambda i: {id_map[i]} if i in id_map else set())
            res.static_r10, res.static_mrr = sum(r10) / len(r10), sum(rr) / len(rr)

        # lifecycle
        clock = SimClock(sessions[0][0])
        with GraphMemory.open(Path(tmp) / "life", embedder=emb, config=config,
                              clock=clock) as mem:
            jobs = _Jobs(mem, conv.name, clock, sessions[0][0], res)
            id_map = {}
            for n, (when, turns) in enumerate(sessions, start=1):
                jobs.advance(when)
                id_map.update(_store(mem, conv, turns))
                for t in turns:  # an agent recalling before it replies
                    t0 = time.perf_counter()
                    mem.retrieve(t["content"], namespace=conv.name, limit=FF_LIMIT,
                                 record_access=False)
                    t1 = time.perf_counter()
                    fast = mem.retrieve(t["content"], namespace=conv.name, limit=FF_LIMIT,
                                        strategy="fast_first", record_access=False)
                    t2 = time.perf_counter()
                    sufficed = len(fast) == FF_LIMIT and all(
                        r.memory.tier is Tier.FAST for r in fast)
                    res.timing["weighted"].append(t1 - t0)
                    res.timing["fast_first_sufficed" if sufficed
                               else "fast_first_fell_through"].append(t2 - t1)
                    mem.retrieve(t["content"], namespace=conv.name, limit=10)
                    res.recall_queries += 1
                jobs.dirty = True
                if progress and n % 5 == 0:
                    progress(f"{conv.name}: session {n}/{len(sessions)} "
                             f"({when.date()}), {res.maintenance_runs} maintenance and "
                             f"{res.consolidation_runs} consolidation runs so far")
            end = sessions[-1][0] + TAIL
            jobs.advance(end)
            jobs._maintain()
            covered = _lineage(mem, conv.name)
            as_users: list[float] = []
            for qa in questions:  # the default call, as users ask
                hits = mem.retrieve(qa["question"], namespace=conv.name, limit=10,
                                    record_access=False)
                _recall(as_users, [], [h.id for h in hits], set(qa["evidence"]),
                        lambda i: {id_map[i]} if i in id_map else set())
            res.default_r10 = sum(as_users) / len(as_users)
            strict: list[float] = []
            lineage: list[float] = []
            rr = []
            for qa in questions:
                hits = mem.retrieve(qa["question"], namespace=conv.name, limit=10,
                                    strategy="comprehensive", record_access=False)
                ranked = [h.id for h in hits]
                ev = set(qa["evidence"])
                _recall(strict, rr, ranked, ev,
                        lambda i: {id_map[i]} if i in id_map else set())
                _recall(lineage, [], ranked, ev,
                        lambda i: ({id_map[i]} if i in id_map else
                                   {id_map[m] for m in covered.get(i, ()) if m in id_map}))
            res.strict_r10 = sum(strict) / len(strict)
            res.lineage_r10 = sum(lineage) / len(lineage)
            _census(mem, conv, id_map, covered, res)
    res.seconds = time.perf_counter() - t0
    return res


def _timing(t: dict[str, list[float]]) -> dict[str, Any]:
    def p50(xs: list[float]) -> float | None:
        return round(sorted(xs)[len(xs) // 2] * 1000, 2) if xs else None

    return {"recalls": len(t["weighted"]), "limit": FF_LIMIT,
            "sufficed": len(t["fast_first_sufficed"]),
            "weighted_p50_ms": p50(t["weighted"]),
            "sufficed_p50_ms": p50(t["fast_first_sufficed"]),
            "fell_through_p50_ms": p50(t["fast_first_fell_through"])}


def _lineage(mem: GraphMemory, ns: str) -> dict[str, set[str]]:
    """summary id -> every memory it stands for, through nested summaries too."""
    direct: dict[str, set[str]] = {}
    for page in mem.backend.iter_edges(ns):
        for e in page:
            if e.type is RelationType.SUMMARIZES:
                direct.setdefault(e.source_id, set()).add(e.target_id)
    out: dict[str, set[str]] = {}
    for s in direct:
        seen, todo = set(), [s]
        while todo:
            for m in direct.get(todo.pop(), ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        out[s] = seen
    return out


def _census(mem: GraphMemory, conv: Conversation, id_map: dict[str, str],
            covered: dict[str, set[str]], res: ConvResult) -> None:
    """Active share, evidence fates and the ledger: every stored memory is active, or an
    active summary stands for it (directly or through nested summaries)."""
    status: dict[str, Status] = {}
    for page in mem.backend.iter_memories(conv.name, embeddings=False):
        for m in page:
            status[m.id] = m.status
            if m.status is Status.ACTIVE:
                res.active += 1
            if m.kind.value == "summary" and m.status is Status.ACTIVE:
                res.summaries += 1
    reachable = {m for s, members in covered.items()
                 if status.get(s) is Status.ACTIVE for m in members}
    res.stored = len(id_map)
    evidence = {e for qa in conv.questions for e in qa["evidence"]}
    for mid, dia in id_map.items():
        st = status.get(mid)
        ok = st is Status.ACTIVE or (st is not None and mid in reachable)
        if not ok:
            res.ledger_missing += 1
        if dia in evidence:
            res.evidence += 1
            res.evidence_archived += st is Status.ARCHIVED
            res.evidence_expired += st is Status.EXPIRED
    res.ledger_ok = res.ledger_missing == 0


KEYS = ("static_r10", "default_r10", "strict_r10", "lineage_r10", "active_share", "ledger_ok")


def run_lifecycle(folder: Path, *, convs: Iterable[str] | None = None, embedder: Any = None,
                  config: Any = None, progress: Callable[[str], None] | None = None
                  ) -> dict[str, Any]:
    from graphmem.engine.embedding import make_embedder

    found = conversations(Path(folder), convs)
    if not found:
        raise FileNotFoundError(f"no LoCoMo conversation files in {folder}")
    emb = CachedEmbedder(embedder or make_embedder())
    t0 = time.perf_counter()
    results = []
    for conv in found:
        if progress:
            progress(f"{conv.name}: {len(conv.turns)} turns, {len(conv.questions)} questions")
        results.append(run_conversation(conv, emb, config, progress))
    total_q = sum(r.questions for r in results)

    def mean(key: str) -> float:
        return round(sum(getattr(r, key) * r.questions for r in results) / total_q, 4)

    stored = sum(r.stored for r in results)
    overall: dict[str, Any] = {
        "questions": total_q, "static_r10": mean("static_r10"),
        "static_mrr": mean("static_mrr"), "default_r10": mean("default_r10"),
        "strict_r10": mean("strict_r10"),
        "lineage_r10": mean("lineage_r10"), "stored": stored,
        "active": sum(r.active for r in results),
        "active_share": round(sum(r.active for r in results) / stored, 4),
        "evidence_archived": sum(r.evidence_archived for r in results),
        "evidence_expired": sum(r.evidence_expired for r in results),
        "ledger_ok": all(r.ledger_ok for r in results),
    }
    timing: dict[str, list[float]] = {k: [x for r in results for x in r.timing[k]]
                                      for k in results[0].timing}
    overall["fast_first"] = _timing(timing)
    overall["default_vs_static"] = round(overall["default_r10"] / overall["static_r10"], 4)
    overall["strict_vs_static"] = round(overall["strict_r10"] / overall["static_r10"], 4)
    overall["lineage_vs_static"] = round(overall["lineage_r10"] / overall["static_r10"], 4)
    return {"overall": overall, "conversations": {r.name: r.to_dict() for r in results},
            "seconds": round(time.perf_counter() - t0, 1)}


def table(r: dict[str, Any]) -> str:
    lines = ["| conversation | questions | static R@10 | **default R@10** | comprehensive: "
             "strict R@10 | lineage R@10 | active / stored | summaries | evidence archived | "
             "ledger | runs (maint / cons) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for name, c in r["conversations"].items():
        lines.append(f"| {name} | {c['questions']} | {c['static_r10']:.3f} | "
                     f"**{c['default_r10']:.3f}** | "
                     f"{c['strict_r10']:.3f} | {c['lineage_r10']:.3f} | "
                     f"{c['active']} / {c['stored']} ({c['active_share']:.2f}) | "
                     f"{c['summaries']} | {c['evidence_archived']} of {c['evidence']} | "
                     f"{'ok' if c['ledger_ok'] else 'MISSING ' + str(c['ledger_missing'])} | "
                     f"{c['maintenance_runs']} / {c['consolidation_runs']} |")
    o = r["overall"]
    lines.append(f"| **overall** | {o['questions']} | {o['static_r10']:.3f} | "
                 f"**{o['default_r10']:.3f} ({o['default_vs_static']:.3f}x)** | "
                 f"{o['strict_r10']:.3f} ({o['strict_vs_static']:.2f}x) | "
                 f"{o['lineage_r10']:.3f} ({o['lineage_vs_static']:.2f}x) | "
                 f"{o['active']} / {o['stored']} ({o['active_share']:.2f}) | | "
                 f"{o['evidence_archived']} | {'ok' if o['ledger_ok'] else 'BROKEN'} | |")
    f = o["fast_first"]
    lines += ["", f"fast_first vs weighted on {f['recalls']} recalls of {f['limit']} (p50 ms): "
              f"weighted {f['weighted_p50_ms']}; fast_first {f['sufficed_p50_ms']} when the "
              f"fast tier sufficed ({f['sufficed']} recalls), {f['fell_through_p50_ms']} when "
              "it fell through"]
    return "\n".join(lines)
