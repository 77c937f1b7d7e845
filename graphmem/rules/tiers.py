"""Pure tier arithmetic: decay and tier choice (SPEC §4). No store, no clock of its own."""

from __future__ import annotations

from datetime import datetime

from graphmem.config import TiersConfig
from graphmem.models import TIER_ORDER, Memory, Tier


def decay_factor(age_hours: float, half_life_hours: float) -> float:
    """0.5 ** (age / half-life); an age below zero (clock skew) counts as zero."""
    return float(0.5 ** (max(0.0, age_hours) / half_life_hours))


def decayed_importance(
    base_importance: float, tier: Tier, age_hours: float, tiers: TiersConfig
) -> float:
    value = base_importance * decay_factor(age_hours, tiers.of(tier).half_life_hours)
    return min(1.0, max(0.0, value))


def age_hours(since: datetime, now: datetime) -> float:
    return (now - since).total_seconds() / 3600.0


def current_importance(memory: Memory, now: datetime, tiers: TiersConfig) -> float:
    """Decayed importance, aged since the memory was stored or last reinforced by use
    (``reinforced_at``; a retrieval that only shows it does not reinforce it, ADR 0006)."""
    return decayed_importance(
        memory.base_importance, memory.tier, age_hours(memory.reinforced_at, now), tiers
    )


def tier_for_importance(importance: float, tiers: TiersConfig) -> Tier:
    """The fastest tier whose entry importance the value reaches (SPEC §4 table)."""
    for tier in TIER_ORDER:
        if importance >= tiers.of(tier).entry_importance:
            return tier
    return Tier.GLACIAL
