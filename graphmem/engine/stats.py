"""``GraphMemory.stats``: what operators watch - tier health, transitions, surprise."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from graphmem.config import GraphMemConfig
from graphmem.models import Kind, RelationType, Status, Tier, TransitionKind
from graphmem.rules.tiers import age_hours, current_importance
from graphmem.store.base import MemoryStore

IMPORTANCE_BINS = (0.2, 0.4, 0.6, 0.8, 1.0)  # upper edges
AGE_BINS = ((1, "<1h"), (24, "<1d"), (24 * 7, "<7d"), (24 * 30, "<30d"), (float("inf"), ">=30d"))


def namespace_stats(store: MemoryStore, ns: str, now: datetime, config: GraphMemConfig, *,
                    queries: int, hits: int) -> dict[str, Any]:
    counts = store.counts(ns)
    tiers = {t.value: 0 for t in Tier}
    statuses = {s.value: 0 for s in Status}
    kinds = {k.value: 0 for k in Kind}
    by_tier = {t.value: {s.value: 0 for s in Status} for t in Tier}
    for (tier, status, kind), n in counts.memories.items():
        statuses[status.value] += n
        by_tier[tier.value][status.value] += n
        kinds[kind] = kinds.get(kind, 0) + n
        if status is Status.ACTIVE:
            tiers[tier.value] += n
    importance = {t.value: [0] * len(IMPORTANCE_BINS) for t in Tier}
    ages = {t.value: dict.fromkeys((label for _, label in AGE_BINS), 0) for t in Tier}
    surprise_sum, active = 0.0, 0
    for page in store.iter_memories(ns, embeddings=False, statuses=[Status.ACTIVE]):
        for m in page:
            active += 1
            surprise_sum += m.surprise_score
            value = current_importance(m, now, config.tiers)
            importance[m.tier.value][next(i for i, edge in enumerate(IMPORTANCE_BINS)
                                          if value <= edge)] += 1
            age = age_hours(m.created_at, now)
            ages[m.tier.value][next(label for edge, label in AGE_BINS if age < edge)] += 1
    transitions: dict[str, dict[str, int]] = {}
    per_kind = {k.value: {"total": 0, "last_hour": 0} for k in TransitionKind}
    for kind, source, target, total, recent in store.transition_counts(
            ns, now - timedelta(hours=1)):
        transitions[f"{kind}:{source.value}->{target.value}"] = {
            "total": total, "last_hour": recent}
        per_kind[kind]["total"] += total
        per_kind[kind]["last_hour"] += recent
    return {
        "namespace": ns,
        "memories": sum(statuses.values()),
        "tiers": tiers,
        "statuses": statuses,
        "tier_statuses": by_tier,
        "kinds": kinds,
        "edges": {t.value: counts.edges.get(t, 0) for t in RelationType},
        "promotions": per_kind["promotion"],
        "demotions": per_kind["demotion"],
        "evictions": per_kind["eviction"],
        "expiries": per_kind["expiry"],
        "restores": per_kind["restore"],
        "transitions": transitions,
        "hit_rate": round(hits / queries, 4) if queries else None,
        "queries": queries,
        "average_surprise": round(surprise_sum / active, 4) if active else 0.0,
        "importance_histogram": {"upper_edges": list(IMPORTANCE_BINS), "tiers": importance},
        "age_histogram": ages,
    }
