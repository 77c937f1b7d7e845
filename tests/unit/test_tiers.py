import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphmem.config import TiersConfig
from graphmem.models import Tier
from graphmem.rules.tiers import decay_factor, decayed_importance, tier_for_importance

TIERS = TiersConfig()


@pytest.mark.parametrize(
    ("tier", "days", "expected"),
    [
        (Tier.MEDIUM, 1, 0.50), (Tier.MEDIUM, 7, 0.0078),
        (Tier.SLOW, 1, 0.905), (Tier.SLOW, 7, 0.50), (Tier.SLOW, 30, 0.051),
        (Tier.GLACIAL, 1, 0.977), (Tier.GLACIAL, 7, 0.852), (Tier.GLACIAL, 30, 0.50),
    ],
)
def test_decay_table(tier: Tier, days: int, expected: float) -> None:
    got = decayed_importance(1.0, tier, days * 24, TIERS)
    assert got == pytest.approx(expected, abs=0.0015)


def test_fast_tier_halves_every_hour() -> None:
    assert decayed_importance(0.8, Tier.FAST, 2, TIERS) == pytest.approx(0.2)


def test_negative_age_counts_as_zero() -> None:
    assert decay_factor(-5, 24) == 1.0


@given(base=st.floats(0, 1), t1=st.floats(0, 1e5), dt=st.floats(0, 1e5),
       tier=st.sampled_from(list(Tier)))
def test_decay_never_rises_and_stays_in_range(base: float, t1: float, dt: float,
                                              tier: Tier) -> None:
    a = decayed_importance(base, tier, t1, TIERS)
    b = decayed_importance(base, tier, t1 + dt, TIERS)
    assert 0.0 <= b <= a <= 1.0
    assert not math.isnan(b)


@pytest.mark.parametrize(
    ("importance", "tier"),
    [(0.95, Tier.FAST), (0.8, Tier.FAST), (0.79, Tier.MEDIUM), (0.5, Tier.MEDIUM),
     (0.3, Tier.SLOW), (0.29, Tier.GLACIAL), (0.0, Tier.GLACIAL)],
)
def test_tier_for_importance(importance: float, tier: Tier) -> None:
    assert tier_for_importance(importance, TIERS) is tier
