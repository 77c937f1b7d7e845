"""Inverted lists for the largest namespaces (ADR 0031): past ``IVF_MIN`` vectors the codes
scan only the lists nearest a query, as many as its candidates ask for, and still serve the
exact top-k (re-scored), follow writes, survive a restart and pass the self-check on random
vectors. ``IVF_MIN`` is lowered here so a test-sized namespace gets lists."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem.store.ann import pq_codes
from graphmem.store.ann.pq_codes import PER_PROBE, CodeField
from graphmem.store.base import WriteBatch
from tests.integration.test_ann import (
    NS,
    clustered,
    memories,
    open_store,
    recall,
    serves_exactly_and_follows_writes,
    uniform,
)


@pytest.fixture(autouse=True)
def _small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pq_codes, "IVF_MIN", 2000)


def test_a_query_probes_as_many_lists_as_its_candidates_ask_for() -> None:
    x = clustered(6000, dim=32)
    field = CodeField(32)
    field.train(x)
    field.add(np.arange(len(x)), x)
    assert field.lists == pq_codes.lists_for(6000) == 77
    _, home = field.index.quantizer.search(x, 1)  # each row's list
    q = clustered(1, seed=5, dim=32)
    one = field.search(q[0], PER_PROBE)
    eight = field.search(q[0], 8 * PER_PROBE)
    assert len({int(home[k, 0]) for k in one}) == 1
    assert 1 < len({int(home[k, 0]) for k in eight}) <= 8  # faiss's default probes one


def test_listed_codes_serve_the_exact_top_k_follow_writes_and_reload(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=50, ann_min=1000)
    queries = clustered(40, seed=1)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(6000))))
        codes = store._vectors[NS].ann
        assert store.ann_states() == {NS: "built"} and codes is not None
        assert codes["content"].lists > 0 and codes["context"].lists > 0
        serves_exactly_and_follows_writes(store, queries)
        before = [store.vector_topk(NS, q, 10) for q in queries]
    finally:
        store.close()
    store = open_store(tmp_path, ann_candidates=50, ann_min=1000)
    try:
        codes = store._vectors[NS].ann
        assert store.ann_states() == {NS: "loaded"} and codes is not None
        assert codes["content"].lists > 0
        assert [store.vector_topk(NS, q, 10) for q in queries] == before
    finally:
        store.close()


def test_random_vectors_raise_the_candidates_and_so_the_lists_probed(tmp_path: Path) -> None:
    """No neighbourhoods: a few lists miss most of the top-10; the self-check doubles the
    candidates (each doubling probes twice the lists) until the answers pass 0.98."""
    store = open_store(tmp_path, dim=64, ann_candidates=16, ann_min=1000)
    try:
        store.apply(WriteBatch(NS, memories=memories(uniform(8000, dim=64))))
        index = store._vectors[NS]
        assert store.ann_states() == {NS: "built"} and index.ann is not None
        assert index.ann["content"].lists > 0
        assert index.candidates >= 16 * 8  # 16 candidates probe two lists of 89
        assert recall(store, uniform(50, seed=1, dim=64)) >= 0.98
    finally:
        store.close()


def test_flat_codes_saved_before_lists_are_rebuilt_with_lists_at_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A namespace past ``IVF_MIN`` whose saved codes are flat (written before ADR 0031)
    gets lists at its next open; the learned candidates carry over."""
    queries = clustered(20, seed=1)
    monkeypatch.setattr(pq_codes, "IVF_MIN", 10**9)  # as before: flat
    store = open_store(tmp_path, ann_candidates=50, ann_min=1000)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(6000))))
        codes = store._vectors[NS].ann
        assert codes is not None and codes["content"].lists == 0
        store._vectors[NS].learned = 400  # as if the questions' check had raised them
        store._vectors[NS].changed = True
    finally:
        store.close()
    monkeypatch.setattr(pq_codes, "IVF_MIN", 2000)
    store = open_store(tmp_path, ann_candidates=50, ann_min=1000)
    try:
        index = store._vectors[NS]
        assert index.ann is not None and index.ann["content"].lists > 0
        assert store.ann_states() == {NS: "built"} and index.candidates >= 400
        assert recall(store, queries) >= 0.98
    finally:
        store.close()


def test_listed_codes_re_score_at_least_the_list_floor_built_or_loaded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ADR 0055: codes with inverted lists start at ``ann_list_candidates`` (the self-check's
    stored-vector probes pass too few for real questions), also when codes saved with fewer
    are loaded; flat codes keep ``ann_candidates``."""
    x = clustered(6000)
    store = open_store(tmp_path, ann_candidates=50, ann_list_candidates=50, ann_min=1000)
    try:
        store.apply(WriteBatch(NS, memories=memories(x)))
        assert store._vectors[NS].ann["content"].lists > 0  # type: ignore[index]
        saved = store._vectors[NS].candidates  # what the self-check passed
    finally:
        store.close()
    floor = 2 * saved
    assert 4 * floor <= len(x)
    store = open_store(tmp_path, ann_candidates=50, ann_list_candidates=floor, ann_min=1000)
    try:
        assert store.ann_states() == {NS: "loaded"}
        assert store._vectors[NS].candidates == floor  # saved with fewer, raised at open
    finally:
        store.close()
    built = open_store(tmp_path / "b", ann_candidates=50, ann_list_candidates=floor,
                       ann_min=1000)
    try:
        built.apply(WriteBatch(NS, memories=memories(x)))
        assert built.ann_states() == {NS: "built"}
        assert built._vectors[NS].candidates == floor
    finally:
        built.close()
    monkeypatch.setattr(pq_codes, "IVF_MIN", 10**9)  # flat codes: no floor
    flat = open_store(tmp_path / "f", ann_candidates=50, ann_list_candidates=floor,
                      ann_min=1000)
    try:
        flat.apply(WriteBatch(NS, memories=memories(x)))
        assert flat._vectors[NS].ann["content"].lists == 0  # type: ignore[index]
        assert flat._vectors[NS].candidates < floor
    finally:
        flat.close()
