"""The embedded store ranks the terms of a keyword search alone when the namespace holds most
of the store (ADR 0041): FTS5's bm25() would count every row of the namespace's tag for its
IDF. The tags score nothing, so the rows that pass them are the same, in the same order; when
too few of the rows read pass, the tagged statement answers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from graphmem.config import TuningConfig
from graphmem.models import Memory, Status, Tier
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite import rows as sqlite_rows
from graphmem.store.sqlite.store import SQLiteStore

WORDS = [f"w{i}" for i in range(12)]


def _memories(ns: str, n: int, rng: random.Random) -> list[Memory]:
    return [Memory(id=f"{ns}-{i}", namespace=ns, content="x",
                   keywords=" ".join(rng.choices(WORDS, k=rng.randint(1, 4))),
                   context_keywords=" ".join(rng.choices(WORDS, k=rng.randint(0, 3))),
                   tier=rng.choice(list(Tier)),
                   status=Status.ARCHIVED if rng.random() < 0.2 else Status.ACTIVE)
            for i in range(n)]


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    s = SQLiteStore(tmp_path, dim=4, tuning=TuningConfig(ann_min=0))
    s.open()
    s.apply(WriteBatch("ops", memories=_memories("ops", 300, rng)))
    s.apply(WriteBatch("dev", memories=_memories("dev", 60, rng)))
    yield s
    s.close()


CASES = [
    (["w1"], 10, None, (Status.ACTIVE,)),
    (["w1", "w2"], 25, None, (Status.ACTIVE,)),
    (["w3"], 40, (Tier.FAST,), (Status.ACTIVE,)),
    (["w4", "w5", "w6"], 60, None, tuple(Status)),
    (["w7"], 5, (Tier.SLOW, Tier.GLACIAL), (Status.ARCHIVED,)),
]


@pytest.mark.parametrize("ns", ["ops", "dev"])
@pytest.mark.parametrize(("terms", "k", "tiers", "statuses"), CASES)
def test_the_terms_alone_rank_as_the_tagged_search(store: SQLiteStore, ns: str,
                                                   terms: list[str], k: int,
                                                   tiers: tuple[Tier, ...] | None,
                                                   statuses: tuple[Status, ...]) -> None:
    """Whatever the hint says: "dev" is a sixth of the store, so a hint of 1 there reads
    rows of "ops" mostly and must fall back to the tagged statement."""
    conn = store.conn
    tagged = sqlite_rows.keyword_rows(conn, ns, terms, k, tiers, statuses, False)
    assert len(tagged) == min(k, len(tagged)) and tagged  # something to compare
    for share in (0.5, 1.0):
        alone = sqlite_rows.keyword_rows(conn, ns, terms, k, tiers, statuses, False,
                                         share=share)
        assert alone == tagged, (ns, terms, share)


def test_a_store_of_one_namespace_never_runs_the_tagged_statement(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path, dim=4, tuning=TuningConfig(ann_min=0))
    s.open()
    try:
        s.apply(WriteBatch("ops", memories=_memories("ops", 400, random.Random(3))))
        statements: list[str] = []
        s.conn.set_trace_callback(statements.append)
        found = s.keyword_candidates("ops", ["w1"], 20)
        s.conn.set_trace_callback(None)
        alone = [x for x in statements if "m.namespace, m.status, m.tier" in x]
        tagged = [x for x in statements if "ORDER BY f.score DESC" in x and x not in alone]
        assert len(found) == 20 and len(alone) == 1 and tagged == []
        assert [i for i, _, _ in found] == [r[0] for r in sqlite_rows.keyword_rows(
            s.conn, "ops", ["w1"], 20, None, (Status.ACTIVE,), False)]
    finally:
        s.close()


def test_the_share_comes_from_the_kept_counts(store: SQLiteStore) -> None:
    counts = store.counts("ops").memories
    active = sum(n for (_, status, _), n in counts.items() if status is Status.ACTIVE)
    fast = sum(n for (tier, status, _), n in counts.items()
               if status is Status.ACTIVE and tier is Tier.FAST)
    assert store._share("ops", None, (Status.ACTIVE,)) == pytest.approx(active / 360)
    assert store._share("ops", (Tier.FAST,), (Status.ACTIVE,)) == pytest.approx(fast / 360)
    assert store._share("ops", None, tuple(Status)) == pytest.approx(300 / 360)
    assert store._share("nobody", None, (Status.ACTIVE,)) == 0.0
