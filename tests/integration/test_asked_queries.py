"""The codes' candidates follow the questions asked (ADR 0027): the build's self-check probes
with stored vectors, questions can be harder; after 64 questions (then each doubling) a check
against their exact top-10 raises the candidates, and the count outlives a restart and a
rebuild."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphmem.store.ann import keeper as ann_keeper
from graphmem.store.ann.asked_queries import reference
from graphmem.store.ann.compact_rows import encode_chunk, steps_of
from graphmem.store.ann.vectors import VectorIndex
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.store import SQLiteStore
from tests.integration.test_ann import NS, clustered, memories, uniform
from tests.integration.test_ann import open_store as _open_store


def open_store(folder: Path, **config: Any) -> SQLiteStore:
    """The store at the bar these seeds were chosen for (0.98; the default is 0.985 since
    ADR 0050): the tests are about the mechanism, at a given bar."""
    config.setdefault("ann_min_recall", 0.98)
    return _open_store(folder, **config)


@pytest.fixture(autouse=True)
def _the_build_these_seeds_were_chosen_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's self-check as these seeds were chosen for: 64 probes, their mean alone.
    ADR 0052's (512 probes, a standard error of margin) already picks enough candidates for
    these questions; the tests are about what the questions asked do when it does not."""
    monkeypatch.setattr(ann_keeper, "_CHECK", 64)
    monkeypatch.setattr(ann_keeper, "_MARGIN_SE", 0.0)


def recall_of(store: SQLiteStore, queries: np.ndarray) -> float:
    index = store._vectors[NS]
    want = reference(index, queries)
    return float(np.mean([len({i for i, _ in index.topk(q, 10)} & w) / 10  # not recorded
                          for q, w in zip(queries, want, strict=True)]))


def ask(store: SQLiteStore, queries: np.ndarray) -> None:
    for q in queries:
        store.vector_topk_fields(NS, q, 10)
    store.wait_for_ann(60)


def test_hard_questions_raise_the_candidates_and_keep_them(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=10, background=True)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(4000))))
        store.wait_for_ann(60)
        index = store._vectors[NS]
        built = index.candidates
        questions = uniform(64, seed=12)  # far from every stored vector: a flat top-10
        before = recall_of(store, questions)
        assert before < 0.97, before  # the build's probes did not see this coming
        ask(store, questions[:63])
        assert index.candidates == built  # not yet due
        ask(store, questions[63:])
        assert index.candidates > built and index.learned == index.candidates
        assert recall_of(store, questions) >= 0.98
        # the next check waits for the count to double: 64 more questions change nothing
        learned = index.learned
        ask(store, uniform(63, seed=14))
        assert index.learned == learned
    finally:
        store.close()
    store = open_store(tmp_path, ann_candidates=10)
    try:
        index = store._vectors[NS]
        assert store.ann_states() == {NS: "loaded"} and index.candidates == learned
        assert index.learned == learned
        # a rebuild's self-check (stored vectors) would pick fewer: the learned count stays
        store.apply(WriteBatch(NS, memories=memories(clustered(4100, seed=3), start=4000)))
        assert store.ann_states() == {NS: "built"} and index.candidates >= learned
    finally:
        store.close()


def test_questions_just_under_the_target_change_nothing(tmp_path: Path) -> None:
    """64 questions estimate recall within ~0.006: 0.978 against 0.98 is noise, and doubling
    on it cost random vectors at 300k twice the re-scoring for nothing."""
    store = open_store(tmp_path, ann_candidates=10)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(4000))))
        index = store._vectors[NS]
        built = index.candidates
        questions = uniform(64, seed=11)
        assert 0.97 <= recall_of(store, questions) < 0.98
        ask(store, questions)
        assert index.candidates == built and index.learned == 0
    finally:
        store.close()


@pytest.mark.parametrize("block", [16_384, 100])  # one block; merged across nine
def test_the_reference_is_the_exact_top_10_of_active_rows(
        block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphmem.store.ann.asked_queries as asked_queries
    from graphmem.models import Status, Tier

    monkeypatch.setattr(asked_queries, "BLOCK", block)

    v = clustered(900)
    index = VectorIndex(v.shape[1])
    for i in range(900):
        index.upsert(f"m{i}", v[i], None, Tier.SLOW,
                     Status.ARCHIVED if i % 3 == 0 else Status.ACTIVE, pk=i + 1)
    qs = uniform(20, seed=4)
    want = [{i for i, _ in index.topk(q, 10, exact=True)} for q in qs]
    assert reference(index, qs, keep=32) == want
    assert all(int(i[1:]) % 3 for ids in want for i in ids)
    # scored by int8 copies, the rows near each top 10 re-scored: the same sets
    index.begin_compact(steps_of(index))
    compact = index.compact
    assert compact is not None
    compact.store(0, encode_chunk(index, compact, 0, 900))
    compact.ready = True
    assert reference(index, qs, keep=32) == want


def test_a_closing_store_stops_a_check_where_it_is(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=10)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(4000))))
        index = store._vectors[NS]
        built = index.candidates
        for q in uniform(63, seed=12):  # the hard questions, one short of a check
            index.asked.add(q)  # type: ignore[union-attr]
        index.asked.add(uniform(1, seed=13)[0])  # type: ignore[union-attr]
        store._ann._stop.set()  # what close does first
        store._ann.check_asked(index, store._lock)
        assert index.candidates == built  # stopped before it could raise them
        store._ann._stop.clear()
        store._ann.check_asked(index, store._lock)
        assert index.candidates > built
    finally:
        store.close()


def _hard_store(tmp_path: Path, **config: Any) -> tuple[SQLiteStore, int, np.ndarray]:
    store = open_store(tmp_path, ann_candidates=10, background=True, **config)
    store.apply(WriteBatch(NS, memories=memories(clustered(4000))))
    store.wait_for_ann(60)
    return store, store._vectors[NS].candidates, uniform(64, seed=12)


def _keep_asking(store: SQLiteStore, questions: np.ndarray, seconds: float) -> list[int]:
    """Questions asked again (not recorded: no new check is due) for ``seconds``; the
    candidates seen after each."""
    seen = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for q in questions[:4]:
            store.vector_topk_fields(NS, q, 10)
        seen.append(store._vectors[NS].candidates)
        time.sleep(0.01)
    return seen


def test_a_due_check_waits_for_a_quiet_store(tmp_path: Path) -> None:
    """ADR 0032: the check (on this small store a few ms) does not run while questions keep
    coming; it runs once they stop for ``ann_check_quiet_ms``."""
    store, built, questions = _hard_store(tmp_path, ann_check_quiet_ms=300)
    try:
        for q in questions:  # the 64th makes a check due
            store.vector_topk_fields(NS, q, 10)
        assert set(_keep_asking(store, questions, 1.5)) == {built}
        store.wait_for_ann(60)
        assert store._vectors[NS].candidates > built
    finally:
        store.close()


def test_a_store_never_quiet_is_checked_after_the_patience(tmp_path: Path) -> None:
    store, built, questions = _hard_store(tmp_path, ann_check_quiet_ms=60_000,
                                          ann_check_patience_s=0.3)
    try:
        for q in questions:
            store.vector_topk_fields(NS, q, 10)
        assert _keep_asking(store, questions, 2.0)[-1] > built
    finally:
        store.close()


def test_a_question_asked_again_is_not_counted_twice(tmp_path: Path) -> None:
    store, built, questions = _hard_store(tmp_path)
    try:
        for _ in range(2):
            ask(store, questions[:40])  # 80 questions asked, 40 different ones
        assert store._vectors[NS].asked.seen == 40  # type: ignore[union-attr]
        assert store._vectors[NS].candidates == built
    finally:
        store.close()


def test_the_scale_bench_measures_a_store_that_was_asked_questions(tmp_path: Path) -> None:
    """ADR 0053: the serving benchmark asks other questions before it measures, so the
    codes serve the count learned from questions; the measured questions are never taught
    and their recall is reported before and after."""
    from graphmem.bench.scale_serve import learning

    store, built, taught = _hard_store(tmp_path)
    try:
        held = uniform(40, seed=13)  # of the same kind, never asked
        out = learning(store, NS, taught, held)
        assert out is not None
        assert out["as_built"]["candidates"] == built
        assert out["as_built"]["recall@10_held_out"] < 0.97
        assert out["learned"]["candidates"] > built
        assert out["learned"]["recall@10_held_out"] >= 0.97
        assert store._vectors[NS].candidates == out["learned"]["candidates"]
        assert learning(store, "no-such-namespace", taught, held) is None
    finally:
        store.close()
