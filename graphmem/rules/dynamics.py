"""Pure tier dynamics (SPEC §4): surprise, access windows, promotion, demotion, expiry,
eviction. Plain values and an explicit ``now``; no store. ``graphmem.engine.maintenance`` and the
facade apply what these functions decide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from graphmem.config import DynamicsConfig, TiersConfig
from graphmem.models import TIER_ORDER, Memory, Status, Tier, Transition, TransitionKind
from graphmem.rules.tiers import age_hours, decayed_importance


def surprise(old: float, actual: float, predicted: float, alpha: float = 0.3) -> float:
    """EMA of max(0, actual usefulness - predicted relevance), kept in 0..1."""
    gain = max(0.0, min(1.0, actual) - max(0.0, min(1.0, predicted)))
    return round(min(1.0, max(0.0, alpha * gain + (1 - alpha) * old)), 6)


def register_access(m: Memory, now: datetime, tiers: TiersConfig) -> tuple[datetime, int]:
    """The access window after one more access: it restarts when older than a half-life."""
    half = tiers.of(m.tier).half_life_hours
    if m.window_start is None or age_hours(m.window_start, now) > half:
        return now, 1
    return m.window_start, m.window_count + 1


def faster(tier: Tier) -> Tier | None:
    i = TIER_ORDER.index(tier)
    return TIER_ORDER[i - 1] if i > 0 else None


def slower(tier: Tier) -> Tier | None:
    i = TIER_ORDER.index(tier)
    return TIER_ORDER[i + 1] if i + 1 < len(TIER_ORDER) else None


def in_cooldown(m: Memory, now: datetime, cfg: DynamicsConfig) -> bool:
    return (m.last_promoted_at is not None
            and now - m.last_promoted_at < timedelta(hours=cfg.promotion_cooldown_hours))


def promotion(m: Memory, now: datetime, cfg: DynamicsConfig,
              tiers: TiersConfig) -> tuple[Tier, str] | None:
    """(target tier, reason) when the memory proved unexpectedly useful, else None."""
    target = faster(m.tier)
    if target is None or m.status is not Status.ACTIVE or in_cooldown(m, now, cfg):
        return None
    threshold = cfg.promotion_surprise.get(m.tier)
    if threshold is not None and m.surprise_score > threshold:
        return target, f"surprise {m.surprise_score:.2f} above {threshold:.2f}"
    half = tiers.of(m.tier).half_life_hours
    if (m.window_count >= cfg.promotion_accesses and m.window_start is not None
            and age_hours(m.window_start, now) <= half):
        return target, f"{m.window_count} accesses within {half:g} h"
    if m.success_count - m.failure_count >= cfg.promotion_successes:
        return target, f"{m.success_count} successes, {m.failure_count} failures"
    window = cfg.promotion_agents_window_hours
    agents = len(recent_users(m, now, window))
    if agents >= cfg.promotion_agents:
        return target, f"used by {agents} agents within {window:g} h"
    return None


#: at most this many agents are remembered per memory (the most recent uses)
MAX_USERS = 64


def recent_users(m: Memory, now: datetime, window_hours: float) -> dict[str, float]:
    """The agents that used ``m`` within the window before ``now`` (agent -> epoch s)."""
    start = now.timestamp() - window_hours * 3600
    return {a: t for a, t in m.used_by.items() if t >= start}


def note_use(m: Memory, agent: str, now: datetime, cfg: DynamicsConfig) -> dict[str, float]:
    """``agent`` used ``m`` now: its ``used_by`` without uses older than the window, at most
    ``MAX_USERS`` (the most recent). Returns the new map (also set on ``m``)."""
    users = recent_users(m, now, cfg.promotion_agents_window_hours)
    users[agent] = now.timestamp()
    if len(users) > MAX_USERS:
        users = dict(sorted(users.items(), key=lambda kv: kv[1])[-MAX_USERS:])
    m.used_by = users
    return users


def promote(m: Memory, target: Tier, now: datetime, tiers: TiersConfig) -> None:
    """Move up: the decay age restarts and importance reaches the new tier's entry level, so
    the next maintenance run does not demote it straight back."""
    m.tier = target
    m.base_importance = max(m.base_importance, tiers.of(target).entry_importance)
    m.importance = m.base_importance
    m.last_accessed_at = m.reinforced_at = now
    m.last_promoted_at = now
    m.window_start, m.window_count = None, 0
    m.used_by = {}  # the agents counted for this promotion start again


def stale_hours(m: Memory, now: datetime) -> float:
    """Hours without an access; a memory is never older than its storage here (imported or
    backdated memories start their lifecycle clocks when stored, ADR 0006)."""
    return age_hours(max(m.last_accessed_at, m.stored_at), now)


def settle(m: Memory, now: datetime, tiers: TiersConfig) -> list[tuple[Tier, Tier, str]]:
    """Demote step by step while the memory is stale (not accessed within its tier's
    retention) or its decayed importance is below the tier's floor. Pinned memories stay.

    A demotion never raises the ranking prior: the decay restarts in the slower tier from the
    value the memory had decayed to (``base_importance`` := that value, ``reinforced_at`` :=
    now), so the importance goes on falling, only more slowly. Returns the steps (from, to,
    reason); a fixed point: settling again changes nothing."""
    steps: list[tuple[Tier, Tier, str]] = []
    if m.pinned or m.status is not Status.ACTIVE:
        return steps
    stale = stale_hours(m, now)
    while (target := slower(m.tier)) is not None:
        cfg = tiers.of(m.tier)
        value = decayed_importance(m.base_importance, m.tier,
                                   age_hours(m.reinforced_at, now), tiers)
        floor = tiers.floor(m.tier)
        if stale > cfg.retention_hours:
            reason = f"not accessed for {stale:.1f} h (retention {cfg.retention_hours:g} h)"
        elif value < floor:
            reason = f"importance {value:.3f} below the {m.tier.value} floor {floor:g}"
        else:
            break
        steps.append((m.tier, target, reason))
        m.tier = target
        if m.reinforced_at < now:  # rebase: continuous, never rising (so never rounded up)
            m.base_importance = value
            m.importance = round(value, 6)
            m.reinforced_at = now
    return steps


DEMOTION_FIELDS = ("tier", "base_importance", "importance", "reinforced_at")


def expiry(m: Memory, now: datetime, tiers: TiersConfig) -> str | None:
    """A reason when a glacial memory outlived its retention (TTL); pinned never expire.
    Maintenance expires only memories a summary stands for (ADR 0006)."""
    if m.pinned or m.status is not Status.ACTIVE or m.tier is not Tier.GLACIAL:
        return None
    age = stale_hours(m, now)
    ttl = tiers.of(Tier.GLACIAL).retention_hours
    return f"not accessed for {age / 24:.1f} days (TTL {ttl / 24:g} days)" if age > ttl else None


@dataclass(slots=True, frozen=True)
class Candidate:
    """What eviction needs to know of an active memory.

    Example:
        >>> from datetime import datetime, UTC
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> evictions([Candidate("a", False, 0.2, t, 1.0), Candidate("b", False, 0.9, t, 1.0)], 1)
        ['a']
    """

    id: str
    pinned: bool
    importance: float  # decayed, now
    last_accessed_at: datetime
    success_rate: float
    #: event time: among equals the oldest event leaves first, never the id's order
    created_at: datetime | None = None


def candidate(m: Memory, now: datetime, tiers: TiersConfig, covered: bool = True
              ) -> Candidate:
    """``covered``: a summary stands for the memory, so it may leave the active set."""
    tries = m.success_count + m.failure_count
    return Candidate(m.id, m.pinned or not covered,
                     decayed_importance(m.base_importance, m.tier,
                                        age_hours(m.reinforced_at, now), tiers),
                     m.last_accessed_at, m.success_count / tries if tries else 0.5,
                     m.created_at)


def evictions(members: Sequence[Candidate], capacity: int) -> list[str]:
    """Who leaves an over-capacity tier: lowest decayed importance, then oldest access, then
    lowest success rate, then oldest event; never a pinned memory (if pinned ones alone
    overfill the tier, the tier stays over capacity)."""
    over = len(members) - capacity
    if over <= 0:
        return []
    movable = sorted((c for c in members if not c.pinned),
                     key=lambda c: (c.importance, c.last_accessed_at, c.success_rate,
                                    c.created_at or c.last_accessed_at, c.id))
    return [c.id for c in movable[:over]]


PROMOTION_FIELDS = ("tier", "base_importance", "importance", "last_accessed_at",
                    "reinforced_at", "last_promoted_at", "window_start", "window_count",
                    "used_by")


def apply_promotion(m: Memory, now: datetime, cfg: DynamicsConfig,
                    tiers: TiersConfig) -> tuple[dict[str, object], Transition] | None:
    """Promote ``m`` when a rule says so: its changed fields and the transition to record."""
    decided = promotion(m, now, cfg, tiers)
    if decided is None:
        return None
    source = m.tier
    promote(m, decided[0], now, tiers)
    return ({f: getattr(m, f) for f in PROMOTION_FIELDS},
            Transition(m.id, TransitionKind.PROMOTION, source, m.tier, decided[1], now))


def record_access(m: Memory, now: datetime, cfg: DynamicsConfig, tiers: TiersConfig,
                  predicted: float | None = None, *, reinforce: bool = False,
                  agent: str | None = None) -> tuple[dict[str, object], Transition | None]:
    """One access of ``m``: count, last access, window, the predicted relevance when known,
    and a promotion when the access rule says so. ``reinforce`` (a full read, ``entries``:
    the memory was used) also restarts its decay age; a retrieval that only shows it does not.
    ``agent``: who used it (counted for the shared-use promotion when ``reinforce``).
    Returns the fields to patch and the transition to record."""
    m.access_count += 1
    m.last_accessed_at = now
    m.window_start, m.window_count = register_access(m, now, tiers)
    fields: dict[str, object] = {"access_count": m.access_count, "last_accessed_at": now,
                                 "window_start": m.window_start,
                                 "window_count": m.window_count}
    if reinforce:  # used: the decay restarts from the base importance
        m.reinforced_at = fields["reinforced_at"] = now
        if agent is not None:
            fields["used_by"] = note_use(m, agent, now, cfg)
    if predicted is not None:
        m.last_predicted = fields["last_predicted"] = round(max(0.0, min(1.0, predicted)), 6)
    promoted = apply_promotion(m, now, cfg, tiers)
    if promoted is None:
        return fields, None
    fields.update(promoted[0])
    return fields, promoted[1]


def next_change(m: Memory, tiers: TiersConfig) -> datetime | None:
    """The earliest time at which the passing of time alone (no access, feedback or write)
    would make maintenance move ``m``: it becomes stale in its tier, its decayed importance
    crosses the tier's floor, or (glacial) its TTL runs out. None when time alone never moves
    it (pinned, not active, or glacial and expiring is not due). Between now and that time a
    maintenance run changes nothing but the persisted importance cache, so a simulation may
    skip those runs (``graphmem bench lifecycle``)."""
    if m.pinned or m.status is not Status.ACTIVE:
        return None
    cfg = tiers.of(m.tier)
    stale_at = max(m.last_accessed_at, m.stored_at) + timedelta(hours=cfg.retention_hours)
    if slower(m.tier) is None:
        return stale_at  # glacial: the TTL (expiry, or a hand-over to consolidation)
    floor = tiers.floor(m.tier)
    if floor <= 0:
        return stale_at
    if m.base_importance <= floor:
        return m.reinforced_at
    hours = cfg.half_life_hours * math.log2(m.base_importance / floor)
    return min(stale_at, m.reinforced_at + timedelta(hours=hours))
