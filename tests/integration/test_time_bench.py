"""``graphmem bench time`` (issue 49): the synthetic histories are deterministic and well formed,
and on a small one with the real model the time prior (weights.time 1.0) does not do worse than
no prior on the questions that name a time, nor on those that name none."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from graphmem.bench.time_questions import KINDS, make_history, run_time_bench, score, table


def test_histories_are_deterministic_and_their_evidence_exists() -> None:
    a, b = make_history(1, seed=3, months=6), make_history(1, seed=3, months=6)
    assert a.records == b.records
    assert [q.text for q in a.questions] == [q.text for q in b.questions]
    assert make_history(1, seed=4, months=6).records != a.records
    ids = {r["id"]: r for r in a.records}
    assert len(ids) == len(a.records)
    assert len({r["content"] for r in a.records}) == len(a.records)  # no exact duplicates
    kinds = Counter(q.kind for q in a.questions)
    assert set(kinds) == set(KINDS)
    for q in a.questions:
        assert q.evidence and set(q.evidence) <= set(ids), q
        if q.kind == "mention":  # written after the day the question names
            assert all(ids[e]["content"].split()[0] in ("Yesterday", "Two", "Last")
                       for e in q.evidence), q
        if q.kind == "relative":
            assert all(ids[e]["created_at"] < q.now for e in q.evidence), q
    assert score(["x", "a"], ["a"]) == {"r1": 0.0, "r5": 1.0, "r10": 1.0, "rr": 0.5,
                                        "missing": 0.0}


@pytest.mark.model
def test_the_time_prior_is_not_worse_than_none(real_embedder: Any) -> None:
    result = run_time_bench(histories=1, months=4, questions=(4, 4, 2, 2, 2),
                            weights=(0.0, 1.0), embedder=real_embedder, progress=lambda _: None)
    assert result["config"]["questions"] == 14
    assert 100 < result["config"]["memories"] < 250
    rows = {(r["weight"], r["kind"]): r for r in result["rows"]}
    assert {k for _, k in rows} == {*KINDS, "timed"}
    for r in result["rows"]:
        assert {"n", "r1", "r5", "r10", "mrr", "ms"} <= set(r)
        assert 0 <= r["r1"] <= r["r5"] <= r["r10"] <= 1
    assert "| weights.time |" in table(result)
    off, on = rows[(0.0, "timed")], rows[(1.0, "timed")]
    assert on["r10"] >= off["r10"] and on["mrr"] >= off["mrr"], (off, on)
    assert on["lifted@10"] > 0  # the term is there
    assert rows[(1.0, "none")]["mrr"] >= rows[(0.0, "none")]["mrr"]
