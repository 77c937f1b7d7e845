"""The "age" histogram of ``stats`` (and so of the viewer's tier page) counts from when a
memory was stored here (``stored_at``), not from its event time (``created_at``: an imported
2023 conversation is 0 days old on import day) and not from when it was last reinforced.
On every adapter (the ``mem`` fixture: SQLite, FalkorDB, Neo4j)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from graphmem import GraphMemory
from graphmem.config import GraphMemConfig
from graphmem.engine.stats import AGE_BINS, _histograms
from graphmem.store.base import ActiveColumns
from tests.conftest import Clock

NS = "ages"
LABELS = [label for _, label in AGE_BINS]


def _ages(mem: GraphMemory) -> dict[str, int]:
    """The age histogram summed over the tiers."""
    per_tier = mem.stats(namespace=NS)["age_histogram"]
    return {label: sum(bins[label] for bins in per_tier.values()) for label in LABELS}


def test_an_old_event_stored_now_is_in_the_youngest_bin(mem: GraphMemory,
                                                        clock: Clock) -> None:
    long_ago = clock() - timedelta(days=3 * 365)
    mem.store("Caroline went to the adoption agency on Friday", namespace=NS,
              created_at=long_ago)
    mem.store_many([{"content": f"Melanie: turn {i} of a conversation from 2023",
                     "session_id": "session_1", "created_at": long_ago + timedelta(minutes=i)}
                    for i in range(3)], namespace=NS)
    assert _ages(mem) == {"<1h": 4, "<1d": 0, "<7d": 0, "<30d": 0, ">=30d": 0}
    clock.advance(days=2)
    assert _ages(mem)["<7d"] == 4


def test_reinforcing_does_not_make_a_memory_younger(mem: GraphMemory, clock: Clock) -> None:
    m = mem.store("The backup disk ran out of space", namespace=NS)
    clock.advance(days=10)
    again = mem.store("The backup disk ran out of space", namespace=NS)  # reinforces it
    assert again.id == m.id
    assert _ages(mem) == {"<1h": 0, "<1d": 0, "<7d": 0, "<30d": 1, ">=30d": 0}


def test_the_histogram_reads_the_stored_at_column() -> None:
    now = 1_800_000_000.0
    day = 86_400.0
    cols = ActiveColumns(tier=np.array(["fast", "slow"], dtype=object),
                         base_importance=np.array([0.9, 0.4]),
                         reinforced_at=np.array([now, now]),
                         created_at=np.array([now - 900 * day, now]),
                         surprise=np.array([0.0, 0.0]),
                         stored_at=np.array([now - 60.0, now - 40 * day]))
    _, ages, _, active = _histograms(cols, datetime.fromtimestamp(now, UTC), GraphMemConfig())
    assert active == 2
    assert ages["fast"]["<1h"] == 1 and ages["fast"][">=30d"] == 0
    assert ages["slow"][">=30d"] == 1 and ages["slow"]["<1h"] == 0
