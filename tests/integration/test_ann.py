"""The embedded store's vector layer (ADR 0068): exact numpy top-k below ``ann_min``, faiss
indexes above it that follow writes and filters, rebuilt when stale, built in the background
while the exact scan answers; a namespace costs what it holds."""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from graphmem.config import TuningConfig
from graphmem.models import Memory, Status, Tier
from graphmem.store.ann import faiss_fields
from graphmem.store.ann.builder import Builder
from graphmem.store.ann.index import VectorIndex
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.store import SQLiteStore

DIM = 16
NS = "ns"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def unit(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def memories(vectors: np.ndarray, start: int = 0) -> list[Memory]:
    return [Memory(id=f"m{i}", namespace=NS, content=f"memory {i}", created_at=T0,
                   updated_at=T0, last_accessed_at=T0, content_hash=f"h{i}", embedding=x,
                   context_embedding=None if i % 3 == 0 else np.roll(x, 1),
                   tier=Tier.FAST if i % 2 else Tier.SLOW, keywords=f"w{i}",
                   context_keywords="") for i, x in enumerate(vectors, start)]


def open_store(folder: Path, ann_min: int = 100, background: bool = False) -> SQLiteStore:
    store = SQLiteStore(folder, dim=DIM, tuning=TuningConfig(
        ann_min=ann_min, ann_build_in_background=background))
    store.open()
    return store


def exact(store: SQLiteStore, q: np.ndarray, k: int, **kw: object) -> object:
    return store._vectors[NS].topk(q, k, exact=True, **kw)  # type: ignore[arg-type]


def same(a: object, b: object) -> bool:
    """The same ids in the same order, the same scores to float32 rounding."""
    return [i for i, _ in a] == [i for i, _ in b] and np.allclose(  # type: ignore[attr-defined]
        [s for _, s in a], [s for _, s in b], atol=1e-6)  # type: ignore[attr-defined]


FILTERS: list[dict[str, object]] = [
    {}, {"tiers": [Tier.FAST]}, {"statuses": [Status.ACTIVE, Status.ARCHIVED]},
    {"field": "context"}, {"field": "context", "tiers": [Tier.SLOW]}]


def test_faiss_answers_as_the_exact_scan_and_follows_writes_and_filters(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Few lists, all probed: faiss's answers are the exact ones, under every filter, after
    deletes, re-embeddings and status changes (the old positions are never answered)."""
    searched: list[int] = []
    real = faiss_fields.search
    def spy(*args: object) -> np.ndarray:
        searched.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(faiss_fields, "search", spy)
    v = unit(300)
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=memories(v)))
        store.vector_topk(NS, v[0], 1)  # loaded on first use, and built
        assert store.ann_states() == {NS: "built"} and store._vectors[NS].ann is not None
        store.apply(WriteBatch(NS, delete_memories=["m1"], patches=[
            ("m2", {"status": Status.ARCHIVED})]))
        store.apply(WriteBatch(NS, memories=memories(-v[5:6], 5)))  # re-embedded
        store.apply(WriteBatch(NS, memories=memories(unit(20, seed=1), 1000)))  # added
        assert store._vectors[NS].stale() == 2  # m1's and m5's old positions
        for kw in FILTERS:  # every filter cached, then a promotion: the tier filters follow it
            store.vector_topk(NS, v[4], 10, **kw)  # type: ignore[arg-type]
        default = store._vectors[NS]._filter("content", (Status.ACTIVE,), None)[1]
        store.apply(WriteBatch(NS, patches=[("m4", {"tier": Tier.FAST})]))
        assert store._vectors[NS]._filter("content", (Status.ACTIVE,), None)[1] is default
        assert store.vector_topk(NS, v[4], 1, tiers=[Tier.FAST])[0][0] == "m4"
        for q in (v[1], v[2], v[4], v[5], -v[5], unit(1, seed=1)[0], unit(1, seed=9)[0]):
            for kw in FILTERS:
                got = store.vector_topk(NS, q, 10, **kw)  # type: ignore[arg-type]
                assert same(got, exact(store, q, 10, **kw)), kw
        assert "m1" not in {i for i, _ in store.vector_topk(NS, v[1], 10)}
        assert store.vector_topk(NS, -v[5], 1)[0][0] == "m5"
        many = store.vector_topk_many(NS, v[:5], 3)
        assert all(same(a, exact(store, q, 3)) for a, q in zip(many, v[:5], strict=True))
        assert searched
    finally:
        store.close()


def test_stale_positions_and_growth_rebuild_the_indexes(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=memories(unit(200))))
        store.vector_topk(NS, unit(1)[0], 1)
        assert store._vectors[NS].trained == 200
        store.apply(WriteBatch(NS, delete_memories=[f"m{i}" for i in range(40)]))
        assert store._vectors[NS].stale() == 40  # not yet a quarter of the rows
        store.apply(WriteBatch(NS, delete_memories=[f"m{i}" for i in range(40, 60)]))
        index = store._vectors[NS]
        assert index.stale() == 0 and index.trained == 140  # rebuilt
        store.apply(WriteBatch(NS, memories=memories(unit(200, seed=2), 1000)))
        assert index.trained == 340  # doubled since: rebuilt
    finally:
        store.close()


def test_install_takes_in_every_write_made_since_the_snapshot() -> None:
    v = unit(400)
    index = VectorIndex(DIM)
    for i, x in enumerate(v[:300]):
        index.upsert(f"m{i}", x, None, Tier.FAST, Status.ACTIVE, pk=i + 1)
    keys = index.col["key"][:300].copy()
    built = {f: faiss_fields.build(np.array(index.rows[f][:300])) for f in ("content",
                                                                          "context")}
    index.remove("m3")  # meanwhile: a delete, a re-embedding, new rows
    index.upsert("m4", -v[4], None, Tier.FAST, Status.ACTIVE)
    for i, x in enumerate(v[300:], 300):
        index.upsert(f"m{i}", x, None, Tier.FAST, Status.ACTIVE, pk=i + 1)
    index.install(built, keys, 300)
    index.exact_max = 1
    assert index.next_key == 300 + 1 + 100 and index.stale() == 2
    assert (index.key_row[index.col["key"][:len(index)]] == np.arange(len(index))).all()
    for q in (v[3], -v[4], v[350], v[10]):
        assert same(index.topk(q, 10), index.topk(q, 10, exact=True))


def test_a_background_build_answers_exactly_meanwhile_and_keeps_the_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = faiss_fields.build

    def slow(vectors: np.ndarray, seed: int = 0) -> object:
        time.sleep(0.3)
        return real(vectors, seed)

    monkeypatch.setattr(faiss_fields, "build", slow)
    v = unit(300)
    store = open_store(tmp_path, background=True)
    try:
        store.apply(WriteBatch(NS, memories=memories(v[:200])))
        store.vector_topk(NS, v[0], 1)  # loaded: the build starts
        assert store.ann_states() == {NS: "building"} and store._vectors[NS].ann is None
        store.apply(WriteBatch(NS, memories=memories(v[200:], 200)))  # during the build
        assert store.vector_topk(NS, v[250], 1)[0][0] == "m250"
        store.wait_for_ann()
        assert store.ann_states() == {NS: "built"} and store._vectors[NS].ann is not None
        for q in (v[250], v[10]):
            assert same(store.vector_topk(NS, q, 10), exact(store, q, 10))
    finally:
        store.close()


def test_no_indexes_below_the_threshold_or_when_off() -> None:
    index = VectorIndex(DIM)
    for i, x in enumerate(unit(50)):
        index.upsert(f"m{i}", x, None, Tier.FAST, Status.ACTIVE)
    assert not Builder(51).wanted(index) and not Builder(0).wanted(index)
    assert Builder(50).wanted(index)


def test_a_namespace_costs_what_it_holds(tmp_path: Path) -> None:
    """Arrays as long as the rows (grown by doubling), and a store opens without reading
    any namespace's vectors."""
    index = VectorIndex(384)
    for i, x in enumerate(unit(2, dim=384)):
        index.upsert(f"m{i}", x, x, Tier.FAST, Status.ACTIVE)
    held = sum(m.nbytes for m in index.rows.values()) + sum(a.nbytes for a in
                                                             index.col.values())
    assert held <= 4 * 2 * 384 * 4 + 4 * 64  # 4 rows at most: not 1,024
    store = open_store(tmp_path, ann_min=0)
    for n in range(200):
        store.apply(WriteBatch(f"user-{n}", memories=[
            dataclasses.replace(m, namespace=f"user-{n}") for m in memories(unit(2, seed=n))]))
    store.close()
    store = open_store(tmp_path, ann_min=0)
    try:
        assert store._vectors == {}
        assert store.vector_topk("user-7", unit(2, seed=7)[1], 1)[0][0] == "m1"
        assert list(store._vectors) == ["user-7"]
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.model
def test_faiss_recall_on_minilm_vectors(tmp_path: Path) -> None:
    """Real text, real model: the faiss path holds >= 0.98 of the exact top-10."""
    from graphmem.bench import synthetic
    from graphmem.engine.embedding import make_embedder, queries_of

    model = make_embedder()
    texts = synthetic.texts(24_000)
    vectors = np.concatenate([model.embed(texts[i:i + 512]) for i in range(0, len(texts), 512)])
    index = VectorIndex(vectors.shape[1])
    for i, x in enumerate(vectors):
        index.upsert(f"m{i}", x, None, Tier.FAST, Status.ACTIVE)
    Builder(20_000, background=False).consider(NS, index, None)
    assert index.ann is not None
    qs = queries_of(model)(synthetic.queries(200))
    hits = [len({i for i, _ in index.topk(q, 10)} & {i for i, _ in index.topk(
        q, 10, exact=True)}) / 10 for q in qs]
    assert float(np.mean(hits)) >= 0.98
