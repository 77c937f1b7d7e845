"""Resident int8 copies of a mapped namespace's rows (ADR 0026): close to the float32 scores,
filled once the codes serve, kept in step by every write (also by writes made while the fill
reads without the lock), and the reference scan for recall never uses them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem.models import Status, Tier
from graphmem.store.ann.compact_rows import FIELDS, CompactRows, encode_chunk, steps_for, steps_of
from graphmem.store.ann.vectors import VectorIndex
from graphmem.store.base import WriteBatch
from tests.integration.test_ann import DIM, NS, clustered, memories, open_store, recall, uniform


def in_step(index: VectorIndex) -> None:
    """Every row's copy is the encoding of its float32 row (context: where it has one)."""
    c = index.compact
    assert c is not None
    n = len(index)
    arrays = index.arrays()
    np.testing.assert_array_equal(c.codes["content"][:n],
                                  c.encode("content", arrays["content"][:n]))
    has = arrays["has_context"][:n]
    np.testing.assert_array_equal(c.codes["context"][:n][has],
                                  c.encode("context", arrays["context"][:n][has]))


@pytest.mark.parametrize("make", [clustered, uniform])
def test_scores_of_the_copies_are_within_a_few_thousandths(make: object) -> None:
    rows = make(3000, seed=1, dim=384)  # type: ignore[operator]
    queries = make(50, seed=2, dim=384)  # type: ignore[operator]
    c = CompactRows(384, len(rows), {f: steps_for(rows) for f in FIELDS})
    c.store(0, {"content": c.encode("content", rows)})
    everything = np.arange(len(rows))
    err = max(float(np.abs(c.scores("content", everything, q) - rows @ q).max())
              for q in queries)
    assert err < 0.003
    np.testing.assert_allclose(c.scan("content", len(rows), queries[0]),
                               c.scores("content", everything, queries[0]), atol=1e-5)


def test_a_mapped_namespace_with_codes_rescores_from_the_copies(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=100, mapped_rows_min=100)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(3000))))
        index = store._vectors[NS]
        assert index.mapped and index.compact is not None and index.compact.ready
        in_step(index)
        queries = clustered(30, seed=3)
        assert recall(store, queries) >= 0.98
        index._touched = 0
        index.asked = None  # no check of the questions midway (ADR 0027): answers' reads only
        for q in queries:
            store.vector_topk_fields(NS, q, 10)
            ids = [i for i, _ in store.vector_topk(NS, q, 20)]
            got = index.similarities(ids, q)
            want = {i: float(index.vectors([i])[i][0] @ q) for i in ids}
            bound = index.compact.error("content", q)  # 4 standard deviations
            assert max(abs(got[i][0] - want[i]) for i in ids) < bound < 0.01
        # float32 rows read: only those near each answer's top 10 (the codes offered 100)
        assert 0 < index._touched < 3 * 30 * 30
    finally:
        store.close()


def test_near_duplicates_keep_their_exact_order_and_scores() -> None:
    """Rows ~1e-4 apart in cosine, closer than the copies can tell: the first ten of an
    answer are the exact ones with their float32 scores (the copies alone misorder them)."""
    rng = np.random.default_rng(5)
    centre = clustered(1, seed=6)[0]
    v = centre + 0.02 * rng.standard_normal((3000, DIM)).astype(np.float32)
    v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    index = VectorIndex(DIM)
    index.extend([f"m{i}" for i in range(3000)], list(range(1, 3001)), v, v,
                 np.ones(3000, dtype=bool), (np.arange(3000) >= 600).astype(np.int8),
                 np.zeros(3000, dtype=np.int8))  # rows 0-599 fast, the others medium
    index.begin_compact(steps_of(index))
    compact = index.compact
    assert compact is not None
    compact.store(0, encode_chunk(index, compact, 0, 3000))
    compact.ready = True
    misordered = 0
    for q in clustered(5, seed=7):
        q = (q + 3 * centre) / np.linalg.norm(q + 3 * centre)
        for kw in ({}, {"tiers": [Tier.FAST]}):  # the whole scan; a filtered gather
            want = index.topk(q, 10, exact=True, **kw)  # type: ignore[arg-type]
            got = index.topk(q, 10, **kw)  # type: ignore[arg-type]
            assert [i for i, _ in got] == [i for i, _ in want]
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-6)
        want = index.topk(q, 10, exact=True)
        loose = compact.scores("content", np.arange(3000), q)
        misordered += [f"m{j}" for j in np.argsort(-loose)[:10]] != [i for i, _ in want]
    assert misordered  # the data is as hard as it should be


def test_every_write_keeps_the_copies_in_step(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=100, mapped_rows_min=100)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(1500))))
        first = len(store._vectors[NS].compact.written)  # type: ignore[union-attr]
        store.apply(WriteBatch(NS, memories=memories(clustered(2000, seed=4), start=1500)))
        store.apply(WriteBatch(NS, memories=memories(clustered(5, seed=5), start=7,
                                                     context=False)))  # re-embedded
        store.apply(WriteBatch(NS, delete_memories=["m3", "m100", "m3499"]))
        index = store._vectors[NS]
        assert len(index) == 3497 and index.compact is not None
        assert first < 3500 <= len(index.compact.written)  # grown by writes
        in_step(index)
    finally:
        store.close()


def test_the_fill_keeps_what_writes_made_while_it_read(tmp_path: Path) -> None:
    """A chunk read before a write and stored after it must not bring the old row back."""
    store = open_store(tmp_path, ann_candidates=100, mapped_rows_min=100, compact_rows=False)
    try:
        v = clustered(2000)
        store.apply(WriteBatch(NS, memories=memories(v)))
        index = store._vectors[NS]
        assert index.mapped and index.compact is None
        index.begin_compact(steps_of(index))
        compact = index.compact
        assert compact is not None
        chunk = encode_chunk(index, compact, 0, len(index))  # read, then the writes land
        store.apply(WriteBatch(NS, memories=memories(-v[3:4], start=3)))  # rewritten
        store.apply(WriteBatch(NS, delete_memories=["m10"]))  # the last row moves in
        compact.store(0, chunk)
        in_step(index)
        compact.ready = True
        assert store.vector_topk(NS, -v[3], 1)[0][0] == "m3"
        assert store.vector_topk(NS, v[1999], 1)[0][0] == "m1999"
    finally:
        store.close()


def test_copies_are_filled_again_at_open_and_only_for_mapped_rows(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=100, mapped_rows_min=100)
    store.apply(WriteBatch(NS, memories=memories(clustered(1200))))
    store.close()
    store = open_store(tmp_path, ann_candidates=100, mapped_rows_min=100)
    try:
        index = store._vectors[NS]
        assert store.ann_states() == {NS: "loaded"}
        assert index.compact is not None and index.compact.ready
        in_step(index)
    finally:
        store.close()
    store = open_store(tmp_path / "small", ann_candidates=100, mapped_rows_min=0)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(1200))))
        assert store.ann_states() == {NS: "built"} and store._vectors[NS].compact is None
    finally:
        store.close()


def test_the_exact_reference_never_scores_with_the_copies() -> None:
    v = clustered(400)
    index = VectorIndex(DIM)
    for i in range(400):
        index.upsert(f"m{i}", v[i], None, Tier.MEDIUM, Status.ACTIVE, pk=i + 1)
    index.begin_compact({f: steps_for(v) for f in FIELDS})
    compact = index.compact
    assert compact is not None
    compact.store(0, {"content": compact.encode("content", v)})
    compact.ready = True
    assert index.topk(v[5], 3)[0][0] == "m5"  # the copies serve ...

    def lie(*args: object) -> np.ndarray:
        raise AssertionError("the copies scored an exact search")

    compact.scores = compact.scan = lie  # type: ignore[method-assign,assignment]
    assert index.topk(v[5], 3, exact=True)[0][0] == "m5"  # ... never the reference
    assert index.topk(v[5], 3, field="content", tiers=[Tier.MEDIUM], exact=True)[0][0] == "m5"
