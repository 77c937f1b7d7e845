"""Pure tier dynamics: surprise, windows, promotion rules, settle, expiry, eviction."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphmem.config import DynamicsConfig, TiersConfig
from graphmem.models import Memory, Status, Tier
from graphmem.rules import dynamics
from graphmem.rules.tiers import current_importance

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TIERS = TiersConfig()
DYN = DynamicsConfig()


def mem(tier: Tier = Tier.MEDIUM, base: float = 0.6, **kw: object) -> Memory:
    m = Memory(id="m", namespace="n", content="x", tier=tier, base_importance=base,
               importance=base, created_at=T0, updated_at=T0, last_accessed_at=T0,
               stored_at=T0, reinforced_at=T0)
    for k, v in kw.items():
        setattr(m, k, v)
    return m


def test_surprise_is_an_ema_of_positive_gaps() -> None:
    assert dynamics.surprise(0.0, 1.0, 0.2, 0.3) == pytest.approx(0.24)
    assert dynamics.surprise(0.5, 0.0, 0.9, 0.3) == pytest.approx(0.35)  # no negative gain
    assert dynamics.surprise(0.9, 2.0, -1.0, 1.0) == 1.0  # clamped


def test_access_window_restarts_after_a_half_life() -> None:
    m = mem(Tier.FAST)
    start, count = dynamics.register_access(m, T0, TIERS)
    assert (start, count) == (T0, 1)
    m.window_start, m.window_count = start, count
    assert dynamics.register_access(m, T0 + timedelta(minutes=59), TIERS) == (T0, 2)
    assert dynamics.register_access(m, T0 + timedelta(minutes=61), TIERS) == (
        T0 + timedelta(minutes=61), 1)


@pytest.mark.parametrize(("tier", "surprise", "promoted"), [
    (Tier.GLACIAL, 0.51, True), (Tier.GLACIAL, 0.5, False), (Tier.SLOW, 0.61, True),
    (Tier.SLOW, 0.55, False), (Tier.MEDIUM, 0.71, True), (Tier.FAST, 1.0, False)])
def test_surprise_thresholds_per_tier(tier: Tier, surprise: float, promoted: bool) -> None:
    got = dynamics.promotion(mem(tier, surprise_score=surprise), T0, DYN, TIERS)
    assert (got is not None) is promoted
    if got:
        assert got[0] is dynamics.faster(tier) and "surprise" in got[1]


def test_access_and_success_rules_and_cooldown() -> None:
    busy = mem(Tier.SLOW, window_start=T0, window_count=3)
    assert dynamics.promotion(busy, T0 + timedelta(days=1), DYN, TIERS)[0] is Tier.MEDIUM  # type: ignore[index]
    old_window = mem(Tier.SLOW, window_start=T0, window_count=5)
    assert dynamics.promotion(old_window, T0 + timedelta(days=8), DYN, TIERS) is None
    good = mem(Tier.GLACIAL, success_count=3, failure_count=1)
    assert dynamics.promotion(good, T0, DYN, TIERS) is None  # 2 more successes than failures
    good.success_count = 4
    assert dynamics.promotion(good, T0, DYN, TIERS)[0] is Tier.SLOW  # type: ignore[index]
    cooling = mem(Tier.GLACIAL, surprise_score=0.9, last_promoted_at=T0)
    assert dynamics.promotion(cooling, T0 + timedelta(hours=23), DYN, TIERS) is None
    assert dynamics.promotion(cooling, T0 + timedelta(hours=25), DYN, TIERS) is not None


def test_promote_lifts_importance_to_the_new_floor_and_restarts_decay() -> None:
    m = mem(Tier.GLACIAL, base=0.1, surprise_score=0.9)
    now = T0 + timedelta(days=3)
    fields, transition = dynamics.apply_promotion(m, now, DYN, TIERS)  # type: ignore[misc]
    assert m.tier is Tier.SLOW and m.base_importance == 0.3 and m.last_accessed_at == now
    assert fields["tier"] is Tier.SLOW and transition.from_tier is Tier.GLACIAL
    assert dynamics.settle(m, now, TIERS) == []  # not demoted straight back


def test_settle_walks_down_to_a_fixed_point() -> None:
    m = mem(Tier.FAST, base=0.9)
    steps = dynamics.settle(m, T0 + timedelta(hours=3), TIERS)
    assert [(a, b) for a, b, _ in steps] == [(Tier.FAST, Tier.MEDIUM), (Tier.MEDIUM, Tier.SLOW)]
    assert "retention" in steps[0][2]  # 3 h unaccessed > 2 h retention of fast
    assert "below the medium floor 0.3" in steps[1][2]  # 0.9 x 0.5^3 = 0.1125
    # the decay goes on from the value reached: demotion never raises the ranking prior
    assert m.base_importance == pytest.approx(0.1125) and m.reinforced_at == T0 + timedelta(
        hours=3)
    assert dynamics.settle(m, T0 + timedelta(hours=3), TIERS) == []
    deep = mem(Tier.FAST, base=0.9)
    steps = dynamics.settle(deep, T0 + timedelta(days=20), TIERS)
    assert [b for _, b, _ in steps] == [Tier.MEDIUM, Tier.SLOW, Tier.GLACIAL]
    pinned = mem(Tier.FAST, base=0.9, pinned=True)
    assert dynamics.settle(pinned, T0 + timedelta(days=20), TIERS) == []


def test_default_importance_does_not_demote_at_the_first_maintenance() -> None:
    m = mem(Tier.MEDIUM, base=0.5)
    assert dynamics.settle(m, T0 + timedelta(minutes=15), TIERS) == []
    assert dynamics.settle(m, T0 + timedelta(hours=17), TIERS) == []  # 0.5 x 0.5^(17/24)
    assert dynamics.next_change(m, TIERS) == T0 + timedelta(hours=24 * math.log2(0.5 / 0.3))


def test_an_imported_memory_starts_its_clocks_when_stored() -> None:
    old = datetime(2023, 5, 8, tzinfo=UTC)
    m = mem(Tier.GLACIAL, base=0.2, created_at=old, last_accessed_at=old)  # stored at T0
    assert dynamics.expiry(m, T0 + timedelta(days=1), TIERS) is None
    assert dynamics.settle(m, T0 + timedelta(days=1), TIERS) == []


@settings(max_examples=200, deadline=None)
@given(tier=st.sampled_from(list(Tier)), base=st.floats(0, 1),
       hours=st.lists(st.floats(0, 5000), min_size=1, max_size=6))
def test_maintenance_never_raises_the_importance(tier: Tier, base: float,
                                                 hours: list[float]) -> None:
    m = mem(tier, base=base)
    now, last = T0, base
    for h in hours:
        now += timedelta(hours=h)
        dynamics.settle(m, now, TIERS)
        value = current_importance(m, now, TIERS)
        assert value <= last + 1e-9
        last = value


def test_expiry_after_the_glacial_ttl_only() -> None:
    m = mem(Tier.GLACIAL, base=0.2)
    assert dynamics.expiry(m, T0 + timedelta(days=59), TIERS) is None
    assert "TTL 60" in (dynamics.expiry(m, T0 + timedelta(days=61), TIERS) or "")
    assert dynamics.expiry(mem(Tier.SLOW), T0 + timedelta(days=99), TIERS) is None
    assert dynamics.expiry(mem(Tier.GLACIAL, pinned=True), T0 + timedelta(days=99),
                           TIERS) is None
    assert dynamics.expiry(mem(Tier.GLACIAL, status=Status.ARCHIVED),
                           T0 + timedelta(days=99), TIERS) is None


def test_eviction_order() -> None:
    c = dynamics.Candidate
    members = [c("low", False, 0.1, T0, 0.5), c("old", False, 0.5, T0, 0.5),
               c("new", False, 0.5, T0 + timedelta(hours=1), 0.5),
               c("pinned", True, 0.0, T0, 0.0), c("bad", False, 0.5, T0, 0.1)]
    assert dynamics.evictions(members, 4) == ["low"]
    assert dynamics.evictions(members, 2) == ["low", "bad", "old"]
    assert dynamics.evictions(members, 5) == []


candidates = st.lists(
    st.builds(dynamics.Candidate, id=st.uuids().map(str), pinned=st.booleans(),
              importance=st.floats(0, 1), last_accessed_at=st.datetimes(
                  min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)).map(
                  lambda d: d.replace(tzinfo=UTC)),
              success_rate=st.floats(0, 1)),
    max_size=40, unique_by=lambda c: c.id)


@settings(max_examples=200, deadline=None)
@given(members=candidates, capacity=st.integers(0, 40))
def test_eviction_never_takes_pinned_and_restores_capacity(
        members: list[dynamics.Candidate], capacity: int) -> None:
    victims = dynamics.evictions(members, capacity)
    pinned = {c.id for c in members if c.pinned}
    assert not set(victims) & pinned
    assert len(set(victims)) == len(victims)
    left = len(members) - len(victims)
    assert left <= capacity or left == len(pinned) > capacity
    assert left >= min(len(members), capacity)  # never more than needed


@settings(max_examples=200, deadline=None)
@given(base=st.floats(0, 1), tier=st.sampled_from(list(Tier)), hours=st.floats(0, 5000),
       pinned=st.booleans())
def test_settle_is_idempotent_and_only_slows(base: float, tier: Tier, hours: float,
                                             pinned: bool) -> None:
    m = mem(tier, base=base, pinned=pinned)
    now = T0 + timedelta(hours=hours)
    dynamics.settle(m, now, TIERS)
    assert m.tier.rank >= tier.rank
    if pinned:
        assert m.tier is tier
    assert dynamics.settle(m, now, TIERS) == []


def test_clustering_is_temporal_and_measures_coherence() -> None:
    import numpy as np

    from graphmem.consolidation import cluster

    rng = np.random.default_rng(0)
    centres = rng.standard_normal((2, 16))
    pts = np.concatenate([c + 0.05 * rng.standard_normal((6, 16)) for c in centres])
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    times = [T0 + timedelta(days=d) for d in (0, 1, 2, 10, 11, 12, 0, 0, 1, 1, 2, 2)]
    got = cluster.clusters(pts, times, min_cluster_size=3, window=timedelta(days=7))
    assert sorted(sorted(g) for g in got) == [[0, 1, 2], [3, 4, 5], list(range(6, 12))]
    one = cluster.clusters(pts[:6], times[:6], min_cluster_size=3,
                           window=timedelta(days=30))
    assert len(one) == 1 and len(one[0]) >= 4  # one topic alone is still a cluster
    assert cluster.coherence(pts[:6]) > 0.9 > cluster.coherence(pts[[0, 7]])
    assert cluster.coherence(pts[:1]) == 1.0
