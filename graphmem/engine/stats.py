"""``GraphMemory.stats``: what operators watch - tier health, transitions, surprise."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from graphmem.config import GraphMemConfig
from graphmem.models import Kind, RelationType, Status, Tier, TransitionKind
from graphmem.store.base import ActiveColumns, MemoryStore

IMPORTANCE_BINS = (0.2, 0.4, 0.6, 0.8, 1.0)  # upper edges
AGE_BINS = ((1, "<1h"), (24, "<1d"), (24 * 7, "<7d"), (24 * 30, "<30d"), (float("inf"), ">=30d"))


def _histograms(cols: ActiveColumns, now: datetime, config: GraphMemConfig
                ) -> tuple[dict[str, list[int]], dict[str, dict[str, int]], float, int]:
    """Importance (decayed as ``current_importance`` does) and age (since ``stored_at``)
    histograms per tier, the surprise sum and the count of the active memories, counted with
    numpy (ADR 0018: a loop over memory objects was too slow)."""
    importance = {t.value: [0] * len(IMPORTANCE_BINS) for t in Tier}
    ages = {t.value: dict.fromkeys((label for _, label in AGE_BINS), 0) for t in Tier}
    labels = [label for _, label in AGE_BINS]
    at = now.timestamp()
    for tier in Tier:
        mask = cols.tier == tier.value
        if not mask.any():
            continue
        half_life = config.tiers.of(tier).half_life_hours
        age = np.maximum(0.0, (at - cols.reinforced_at[mask]) / 3600.0)
        value = np.clip(cols.base_importance[mask] * 0.5 ** (age / half_life), 0.0, 1.0)
        bins = np.searchsorted(IMPORTANCE_BINS, value, side="left")
        importance[tier.value] = np.bincount(bins, minlength=len(IMPORTANCE_BINS)).tolist()
        # age since it was stored here, not since its event time (an imported 2023
        # conversation is 0 days old on import day) nor since it was reinforced
        stored = (at - cols.stored_at[mask]) / 3600.0
        slots = np.searchsorted([edge for edge, _ in AGE_BINS], stored, side="right")
        for slot, n in enumerate(np.bincount(slots, minlength=len(AGE_BINS)).tolist()):
            ages[tier.value][labels[slot]] = n
    return importance, ages, float(cols.surprise.sum()), len(cols)


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
    importance, ages, surprise_sum, active = _histograms(store.active_columns(ns), now,
                                                        config)
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
