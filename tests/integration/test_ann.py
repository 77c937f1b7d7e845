"""Product codes on the embedded store (ADR 0019): they serve what the exact scan would, follow
every write, survive a restart only when nothing changed behind them, serve random vectors
too (raising their candidates when the self-check asks), and never let a filter cut recall."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphmem.config import StoreConfig
from graphmem.models import Memory, Status, Tier
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.store import SQLiteStore

DIM = 32
NS = "ann"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def clustered(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    """Vectors around 20 centres (the same for every seed): neighbourhoods, as real
    embeddings have."""
    centres = np.random.default_rng(dim).standard_normal((20, dim))
    rng = np.random.default_rng(seed)
    v = centres[rng.integers(20, size=n)] + 0.35 * rng.standard_normal((n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def uniform(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    """Random unit vectors: no neighbourhoods (the hard case)."""
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def memories(vectors: np.ndarray, start: int = 0, *, context: bool = True) -> list[Memory]:
    out = []
    for i, v in enumerate(vectors, start):
        out.append(Memory(id=f"m{i}", namespace=NS, content=f"memory {i}", created_at=T0,
                          updated_at=T0, last_accessed_at=T0, content_hash=f"h{i}",
                          embedding=v, context_embedding=np.roll(v, 1) if context else None,
                          keywords=f"w{i}", context_keywords=""))
    return out


def open_store(folder: Path, *, ann_min: int = 100, background: bool = False,
               dim: int = DIM, **config: object) -> SQLiteStore:
    store = SQLiteStore(folder, dim=dim, config=StoreConfig(
        ann_min=ann_min, ann_build_in_background=background, **config))  # type: ignore[arg-type]
    store.open()
    return store


def exact(store: SQLiteStore, q: np.ndarray, k: int, **kw: object) -> list[str]:
    return [i for i, _ in store._vectors[NS].topk(q, k, exact=True, **kw)]  # type: ignore[arg-type]


def recall(store: SQLiteStore, queries: np.ndarray, k: int = 10, **kw: object) -> float:
    hits = [len(set(exact(store, q, k, **kw))
                & {i for i, _ in store.vector_topk(NS, q, k, **kw)}) / k  # type: ignore[arg-type]
            for q in queries]
    return float(np.mean(hits))


def serves_exactly_and_follows_writes(store: SQLiteStore, queries: np.ndarray) -> None:
    """Both fields find the exact top-10; the answers are the exact scan's, scores and ties
    included; a write after the build is served at once, a delete is gone."""
    assert recall(store, queries) >= 0.98
    assert recall(store, queries, field="context") >= 0.98
    assert store.vector_topk(NS, queries[0], 10) == store._vectors[NS].topk(
        queries[0], 10, exact=True)
    probe = queries[0]
    store.apply(WriteBatch(NS, memories=memories(probe[None, :], start=10_000)))
    assert store.vector_topk(NS, probe, 1)[0][0] == "m10000"
    store.apply(WriteBatch(NS, delete_memories=["m10000"]))
    assert "m10000" not in {i for i, _ in store.vector_topk(NS, probe, 10)}


def test_codes_serve_the_exact_top_k_and_follow_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=50)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(3000))))
        assert store.ann_states() == {NS: "built"}
        assert store._vectors[NS].ann is not None
        queries = clustered(40, seed=1)
        serves_exactly_and_follows_writes(store, queries)
        # a state is filtered
        probe = queries[0]
        top = store.vector_topk(NS, probe, 1)[0][0]
        store.apply(WriteBatch(NS, patches=[(top, {"status": Status.ARCHIVED})]))
        assert top not in {i for i, _ in store.vector_topk(NS, probe, 10)}
        assert top in {i for i, _ in store.vector_topk(
            NS, probe, 10, statuses=(Status.ACTIVE, Status.ARCHIVED))}
        # a re-embedded memory is found by its new vector (its old code is stale)
        far = -probe
        store.apply(WriteBatch(NS, memories=memories(far[None, :], start=5)))
        assert store.vector_topk(NS, far, 1)[0][0] == "m5"
        assert store._vectors[NS].stale() >= 2  # the deleted row's and m5's old codes
    finally:
        store.close()


def test_random_vectors_are_served_and_the_self_check_raises_the_candidates(
        tmp_path: Path) -> None:
    """Random vectors have no neighbourhoods: 10 candidates miss much of the exact top-10,
    so the self-check raises them (4x, 16x) until the codes' answers pass 0.98."""
    store = open_store(tmp_path, dim=128, ann_candidates=10)
    try:
        store.apply(WriteBatch(NS, memories=memories(uniform(8000, dim=128))))
        index = store._vectors[NS]
        assert store.ann_states() == {NS: "built"} and index.ann is not None
        assert index.candidates in (80, 160)  # 10, 20, 40 miss too much of the top-10
        assert recall(store, uniform(50, seed=1, dim=128)) >= 0.98
    finally:
        store.close()


def test_codes_that_fail_the_self_check_leave_the_exact_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.store.ann import keeper as ann_keeper

    monkeypatch.setattr(ann_keeper, "ladder", lambda c: [c, 2 * c, 4 * c])
    store = open_store(tmp_path, dim=256, ann_candidates=10, ann_min_recall=1.0)
    try:
        store.apply(WriteBatch(NS, memories=memories(uniform(10_000, dim=256))))
        assert store.ann_states() == {NS: "exact"} and store._vectors[NS].ann is None
        assert recall(store, uniform(10, seed=2, dim=256)) == 1.0
    finally:
        store.close()
    store = open_store(tmp_path, dim=256, ann_candidates=10, ann_min_recall=1.0)
    try:  # the verdict is remembered: no build at open until the namespace doubles
        assert store.ann_states() == {NS: "exact"} and store._vectors[NS].ann is None
    finally:
        store.close()


def test_filters_never_cut_recall(tmp_path: Path) -> None:
    """Half the rows archived, a tier of 1%: the fetch grows with the share the filter
    drops, and a filter that allows few rows is answered by the exact scan of those."""
    store = open_store(tmp_path, ann_candidates=40)
    try:
        v = uniform(6000, seed=3)
        batch = memories(v)
        for m in batch[::2]:
            m.status = Status.ARCHIVED
        for m in batch[1::100]:
            m.tier = Tier.GLACIAL
        store.apply(WriteBatch(NS, memories=batch))
        index = store._vectors[NS]
        assert index.ann is not None
        queries = uniform(30, seed=4)
        assert recall(store, queries) >= 0.98
        assert recall(store, queries, tiers=[Tier.GLACIAL]) == 1.0
        assert recall(store, queries, statuses=(Status.ARCHIVED,)) >= 0.98
        asked: list[int] = []
        search = index.ann["content"].search

        def counted(query: np.ndarray, count: int) -> np.ndarray:
            asked.append(count)
            return search(query, count)

        index.ann["content"].search = counted  # type: ignore[method-assign]
        store.vector_topk(NS, queries[0], 10)
        store.vector_topk(NS, queries[0], 10, tiers=[Tier.GLACIAL])
        assert asked == [2 * index.candidates]  # half active: twice the candidates; glacial: exact
    finally:
        store.close()


def test_saved_codes_load_only_when_nothing_changed_behind_them(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=40)
    store.apply(WriteBatch(NS, memories=memories(clustered(2000))))
    store.close()
    assert sorted(p.suffix for p in (tmp_path / "ann").iterdir()) == [
        ".faiss", ".faiss", ".json"]

    store = open_store(tmp_path, ann_candidates=40)
    assert store.ann_states() == {NS: "loaded"}
    queries = clustered(20, seed=2)
    assert recall(store, queries) >= 0.98
    store.close()

    # a process without codes rewrites a memory's vector in place (as a crashed one would
    # have left it): the counts still agree, the saved codes are stale all the same
    plain = open_store(tmp_path, ann_min=0)
    newest = -queries[3]  # far from everything stored
    plain.apply(WriteBatch(NS, memories=memories(newest[None, :], start=7)))
    plain.close()
    store = open_store(tmp_path, ann_candidates=40)
    try:
        assert store.ann_states() == {NS: "built"}
        assert store.vector_topk(NS, newest, 1)[0][0] == "m7"
    finally:
        store.close()


def test_codes_made_for_other_vectors_are_not_loaded(tmp_path: Path) -> None:
    """Same epoch, same counts, other vectors (a restored backup of another store's codes):
    the sampled rows do not find themselves, so the codes are rebuilt."""
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, seed in ((a, 0), (b, 1)):
        store = open_store(folder, ann_candidates=10)
        store.apply(WriteBatch(NS, memories=memories(uniform(3000, seed=seed))))
        store.close()
    for path in (b / "ann").iterdir():
        path.replace(a / "ann" / path.name)
    store = open_store(a, ann_candidates=10)
    try:
        assert store.ann_states() == {NS: "built"}
    finally:
        store.close()


def test_a_folder_from_the_hnsw_index_gets_codes(tmp_path: Path) -> None:
    """A data folder written before ADR 0019 holds usearch graphs and, for random vectors,
    an "exact until it doubles" verdict: both belong to the old index and are dropped."""
    store = open_store(tmp_path, ann_min=0)
    store.apply(WriteBatch(NS, memories=memories(clustered(300))))
    store.close()
    import hashlib
    import json

    stem = hashlib.blake2b(NS.encode(), digest_size=8).hexdigest()
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / f"{stem}.json").write_text(
        json.dumps({"namespace": NS, "exact_until": 600}))
    (tmp_path / "ann" / f"{stem}.content.usearch").write_bytes(b"an old graph")
    store = open_store(tmp_path)
    try:
        assert store.ann_states() == {NS: "built"}
        assert not list((tmp_path / "ann").glob("*.usearch"))
    finally:
        store.close()


def test_a_damaged_code_file_is_rebuilt_not_fatal(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=memories(clustered(300))))
    store.close()
    for path in (tmp_path / "ann").glob("*.content.faiss"):
        path.write_bytes(b"not an index")
    store = open_store(tmp_path)
    try:
        assert store.ann_states() == {NS: "built"}
        assert recall(store, clustered(20, seed=3)) >= 0.98
    finally:
        store.close()


def test_a_background_build_replays_the_writes_made_meanwhile(tmp_path: Path) -> None:
    store = open_store(tmp_path, background=True, ann_candidates=20)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(2000))))
        extra = clustered(50, seed=9)
        store.apply(WriteBatch(NS, memories=memories(extra, start=20_000)))  # maybe mid-build
        store.apply(WriteBatch(NS, delete_memories=["m20001"]))
        store.wait_for_ann(60)
        assert store.ann_states() == {NS: "built"}
        got = store.vector_topk(NS, extra[0], 1)
        assert got[0][0] == "m20000"
        assert "m20001" not in {i for i, _ in store.vector_topk(NS, extra[1], 5)}
        assert len(store._vectors[NS].ann["content"]) >= 2049  # type: ignore[index]
    finally:
        store.close()


def test_stale_codes_and_growth_rebuild_the_codes(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_candidates=20)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(400))))
        first = store._vectors[NS].ann
        # re-embed a quarter of the rows and a little more: their old codes turn stale
        store.apply(WriteBatch(NS, memories=memories(clustered(90, seed=5))))
        assert store._vectors[NS].ann is first and store._vectors[NS].stale() == 180
        store.apply(WriteBatch(NS, memories=memories(clustered(20, seed=6), start=90)))
        index = store._vectors[NS]
        assert index.ann is not first and index.stale() == 0
        assert recall(store, clustered(20, seed=7)) >= 0.98
        # a namespace that doubled since its codes were trained gets new ones
        second = index.ann
        store.apply(WriteBatch(NS, memories=memories(clustered(500, seed=8), start=1000)))
        assert index.ann is not second and store._ann.trained_on[NS] == 900
    finally:
        store.close()


@pytest.mark.parametrize("ann_min", [0, 10**9])
def test_no_codes_below_the_threshold_or_when_off(tmp_path: Path, ann_min: int) -> None:
    store = open_store(tmp_path, ann_min=ann_min)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(200))))
        assert store.ann_states() == {} and store._vectors[NS].ann is None
    finally:
        store.close()
    assert not (tmp_path / "ann").exists()


def test_install_replays_every_write_made_since_the_snapshot() -> None:
    """The build reads rows without the store's lock; whatever changed meanwhile (a new row,
    a rewrite, a delete that moves the last row into the hole) reaches the codes."""
    from graphmem.store.ann.pq_codes import CodeField
    from graphmem.store.ann.vectors import VectorIndex

    v = clustered(200)
    index = VectorIndex(DIM)
    for i in range(200):
        index.upsert(f"m{i}", v[i], None, Tier.MEDIUM, Status.ACTIVE, pk=i + 1)
    pks, content, _, _ = index.snapshot()
    n = len(pks)
    codes = {"content": CodeField(DIM), "context": CodeField(DIM)}
    codes["content"].train(content)
    codes["context"].train(content)
    codes["content"].add(pks[n // 2:], content[n // 2:])  # half built when the writes come
    first_vectors = content[:n // 2].copy()  # the build read these vectors before ...
    index.remove("m10")  # m199's row moves into the hole
    index.upsert("new", -v[0], None, Tier.MEDIUM, Status.ACTIVE, pk=1000)
    index.upsert("m3", -v[1], None, Tier.MEDIUM, Status.ACTIVE)  # rewritten in place
    codes["content"].add(pks[:n // 2], first_vectors)  # ... and their keys after
    index.install(codes, candidates=5)
    # the replayed rows are found by their current vectors with only 5 candidates
    for id_, want in (("new", -v[0]), ("m3", -v[1]), ("m199", v[199])):
        assert index.topk(want, 1)[0][0] == id_
    assert "m10" not in {i for i, _ in index.topk(v[10], 5)}


def _coded_index(rows: np.ndarray) -> tuple[Any, list[int]]:
    """An index of ``rows`` (m0, m1, ...) served by product codes re-scoring 10 candidates,
    and the list of candidate counts its batched searches ask the codes for."""
    from graphmem.store.ann.pq_codes import CodeField
    from graphmem.store.ann.vectors import VectorIndex

    index = VectorIndex(DIM)
    for i, v in enumerate(rows):
        index.upsert(f"m{i}", v, None, Tier.MEDIUM, Status.ACTIVE, pk=i + 1)
    codes = {"content": CodeField(DIM), "context": CodeField(DIM)}
    for f in codes.values():
        f.train(rows)
    index.snapshot()
    codes["content"].add(np.arange(1, len(rows) + 1), rows)
    index.install(codes, candidates=10)
    asked: list[int] = []
    search = codes["content"].search_many_scored

    def counted(queries: np.ndarray, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
        asked.append(count)
        return search(queries, count)

    codes["content"].search_many_scored = counted  # type: ignore[method-assign]
    return index, asked


def test_a_thresholded_batch_search_widens_until_nothing_above_is_cut() -> None:
    """SIMILAR_TO's search re-scores only candidates the codes put near its threshold, from
    a first fetch of 64; with 300 near-duplicates all of those are near it, so the cut may
    hide better ones: it widens until it does not, and answers as the exact scan."""
    from graphmem.store.ann.vectors import MANY_FETCH

    rng = np.random.default_rng(11)
    base = clustered(1)[0]
    near = base + 0.2 * rng.standard_normal((300, DIM)).astype(np.float32) / np.sqrt(DIM)
    rows = np.concatenate([near / np.linalg.norm(near, axis=1, keepdims=True),
                           clustered(400, seed=12)])
    index, asked = _coded_index(rows)
    queries = np.stack([base, rows[350]])
    got = index.topk_many(queries, 5, min_score=0.9)
    assert asked[0] == MANY_FETCH and max(asked) > MANY_FETCH  # it widened
    for q, row in zip(queries, got, strict=True):
        exact = index.topk(q, 5, exact=True)
        assert [i for i, s in row if s >= 0.9] == [i for i, s in exact if s >= 0.9]
    assert len(got[0]) == 5


def test_a_thresholded_batch_search_stops_when_its_top_k_are_clear_of_the_rest() -> None:
    """3,000 memories all above the threshold, the query's 5 nearest far above them: the
    first fetch holds the top 5 (no candidate it did not ask can beat them, by the codes'
    margin), so it does not widen - it used to ask 256, 1,024 and 4,096 more (every
    candidate asked was near the threshold), re-scoring each from the rows."""
    from graphmem.store.ann.vectors import MANY_FETCH

    rng = np.random.default_rng(5)
    q = uniform(1, seed=21)[0]

    def around(count: int, cosine: float) -> np.ndarray:
        noise = rng.standard_normal((count, DIM)).astype(np.float32)
        noise -= np.outer(noise @ q, q)  # orthogonal to q
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        return (cosine * q + np.sqrt(1 - cosine ** 2) * noise).astype(np.float32)

    rows = np.concatenate([around(5, 0.99), around(3000, 0.8)])
    index, asked = _coded_index(rows)
    got = index.topk_many(q[None, :], 5, min_score=0.75)[0]
    assert asked == [MANY_FETCH]
    assert [i for i, _ in got] == [i for i, _ in index.topk(q, 5, exact=True)]
    assert {i for i, _ in got} == {f"m{i}" for i in range(5)}


def test_the_dense_key_map_answers_as_the_dict() -> None:
    """Candidates' keys become rows through an array indexed by pk (vectorised); it must say
    what the dict says after inserts, rewrites, deletes that move the last row, a bulk load,
    and fall back to the dict when the pks are too sparse for an array."""
    from graphmem.store.ann.vectors import VectorIndex

    v = clustered(300)
    index = VectorIndex(DIM)
    index.extend([f"m{i}" for i in range(100)], list(range(1000, 1100)), v[:100],
                 v[:100], np.ones(100, bool), np.zeros(100, np.int8), np.zeros(100, np.int8))
    for i in range(100, 300):
        index.upsert(f"m{i}", v[i], None, Tier.MEDIUM, Status.ACTIVE, pk=1000 + i)
    for i in (5, 150, 299, 0):
        index.remove(f"m{i}")
    index.upsert("m7", -v[7], None, Tier.MEDIUM, Status.ACTIVE)
    keys = np.arange(990, 1310)
    want = np.array([index.row_of_pk.get(int(k), -1) for k in keys])
    assert index._pk_rows is not None
    assert np.array_equal(index._rows_of(keys), want)
    index.upsert("far", v[1], None, Tier.MEDIUM, Status.ACTIVE, pk=10**9)
    assert index._pk_rows is None  # too sparse: the dict answers
    want = np.array([index.row_of_pk.get(int(k), -1) for k in [*keys, 10**9]])
    assert np.array_equal(index._rows_of(np.array([*keys, 10**9])), want)


def test_reopening_loads_the_same_rows_statistics_and_edges_in_bulk(tmp_path: Path) -> None:
    from graphmem.models import Relation, RelationType

    store = open_store(tmp_path, ann_min=0)
    batch = memories(clustered(50))
    for m in batch[::3]:
        m.context_embedding = None
    batch[4].tier, batch[5].status = Tier.GLACIAL, Status.ARCHIVED
    batch[6].keywords, batch[6].context_keywords = "deploy fail deploy", "tea"
    store.apply(WriteBatch(NS, memories=batch, edges=[
        Relation("m1", "m2", RelationType.CAUSES, NS, 0.5, T0),
        Relation("m2", "m3", RelationType.SIMILAR_TO, NS, None, T0)]))
    store.apply(WriteBatch(NS, delete_memories=["m7"]))
    stranger = memories(clustered(1, seed=4))[0]
    stranger.namespace = "other"
    store.apply(WriteBatch("other", memories=[stranger]))

    def state(s: SQLiteStore) -> tuple[object, ...]:
        index = s._vectors[NS]
        rows = sorted((i, int(index._pk[r]), index._content[r].tobytes(),
                       index._context[r].tobytes() if index._has_context[r] else None,
                       int(index._tier[r]), int(index._status[r]))
                      for i, r in index.row_of.items())
        kw, ctx = s.keyword_stats(NS, ["deploy", "tea", "w3", "fail"])
        edges = sorted((e.source_id, e.target_id, e.type.value, e.score, e.created_at)
                       for e in s.edges_of(NS, ["m1", "m2", "m3"]))
        return rows, kw, ctx, edges, sorted(s._vectors), index._states.tolist()

    before = state(store)
    store.close()
    store = open_store(tmp_path, ann_min=0)
    try:
        assert state(store) == before
    finally:
        store.close()


CRASH = """
import sys, threading
import numpy as np
from graphmem.store.ann.pq_codes import CodeField
assert "onnxruntime" not in sys.modules
done = threading.Event()
def build():
    rng = np.random.default_rng(0)
    while not done.is_set():
        x = rng.standard_normal((3000, 384)).astype(np.float32)
        f = CodeField(384); f.train(x); f.add(np.arange(3000), x); f.search_many(x[:50], 100)
t = threading.Thread(target=build); t.start()
import time; time.sleep(0.5)
import onnxruntime, sklearn.cluster  # what a server or a consolidation run loads later
done.set(); t.join()
print("alive")
"""


def test_building_codes_while_the_embedder_loads_does_not_crash_the_process() -> None:
    """A server warms its ONNX embedder while codes are built: onnxruntime's first import
    with usearch (the index before ADR 0019) in another thread was a SIGSEGV every time;
    with faiss it must not be."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", CRASH], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "alive", out.stderr[-2000:]
