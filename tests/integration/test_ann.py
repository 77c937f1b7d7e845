"""HNSW graphs on the embedded store: they serve what the exact scan would, follow every
write, survive a restart only when nothing changed behind them, and stand down on data
without neighbourhoods."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from graphmem.config import StoreConfig
from graphmem.models import Memory, Status, Tier
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite import SQLiteStore

DIM = 32
NS = "ann"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Vectors around 20 centres: neighbourhoods, as real embeddings have."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, DIM))
    v = centres[rng.integers(20, size=n)] + 0.35 * rng.standard_normal((n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def memories(vectors: np.ndarray, start: int = 0, *, context: bool = True) -> list[Memory]:
    out = []
    for i, v in enumerate(vectors, start):
        out.append(Memory(id=f"m{i}", namespace=NS, content=f"memory {i}", created_at=T0,
                          updated_at=T0, last_accessed_at=T0, content_hash=f"h{i}",
                          embedding=v, context_embedding=np.roll(v, 1) if context else None,
                          keywords=f"w{i}", context_keywords=""))
    return out


def open_store(folder: Path, *, ann_min: int = 100, background: bool = False) -> SQLiteStore:
    store = SQLiteStore(folder, dim=DIM, config=StoreConfig(
        ann_min=ann_min, ann_build_in_background=background))
    store.open()
    return store


def exact(store: SQLiteStore, q: np.ndarray, k: int, **kw: object) -> list[str]:
    return [i for i, _ in store._vectors[NS].topk(q, k, exact=True, **kw)]  # type: ignore[arg-type]


def recall(store: SQLiteStore, queries: np.ndarray, k: int = 10, **kw: object) -> float:
    hits = [len(set(exact(store, q, k, **kw))
                & {i for i, _ in store.vector_topk(NS, q, k, **kw)}) / k  # type: ignore[arg-type]
            for q in queries]
    return float(np.mean(hits))


def test_graphs_serve_the_exact_top_k_and_follow_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(600))))
        assert store.graph_states() == {NS: "built"}
        assert store._vectors[NS].ann is not None
        queries = clustered(40, seed=1)
        assert recall(store, queries) >= 0.98
        assert recall(store, queries, field="context") >= 0.98
        # a write after the build is served at once, a delete is gone, a state is filtered
        probe = queries[0]
        store.apply(WriteBatch(NS, memories=memories(probe[None, :], start=10_000)))
        assert store.vector_topk(NS, probe, 1)[0][0] == "m10000"
        store.apply(WriteBatch(NS, delete_memories=["m10000"]))
        assert "m10000" not in {i for i, _ in store.vector_topk(NS, probe, 10)}
        top = store.vector_topk(NS, probe, 1)[0][0]
        store.apply(WriteBatch(NS, patches=[(top, {"status": Status.ARCHIVED})]))
        assert top not in {i for i, _ in store.vector_topk(NS, probe, 10)}
        assert top in {i for i, _ in store.vector_topk(
            NS, probe, 10, statuses=(Status.ACTIVE, Status.ARCHIVED))}
        # a tier too rare for the over-fetch falls back to the exact scan, not to fewer hits
        store.apply(WriteBatch(NS, patches=[("m5", {"tier": Tier.GLACIAL})]))
        assert [i for i, _ in store.vector_topk(NS, probe, 3, tiers=[Tier.GLACIAL])] == ["m5"]
    finally:
        store.close()


def test_saved_graphs_load_only_when_nothing_changed_behind_them(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=memories(clustered(300))))
    store.close()
    assert sorted(p.suffix for p in (tmp_path / "ann").iterdir()) == [
        ".json", ".usearch", ".usearch"]

    store = open_store(tmp_path)
    assert store.graph_states() == {NS: "loaded"}
    queries = clustered(20, seed=2)
    assert recall(store, queries) >= 0.98
    store.close()

    # a process without graphs rewrites a memory's vector in place (as a crashed one would
    # have left it): the counts still agree, the saved graphs are stale all the same
    plain = open_store(tmp_path, ann_min=0)
    newest = -queries[3]  # far from everything stored
    plain.apply(WriteBatch(NS, memories=memories(newest[None, :], start=7)))
    plain.close()
    store = open_store(tmp_path)
    try:
        assert store.graph_states() == {NS: "built"}
        assert store.vector_topk(NS, newest, 1)[0][0] == "m7"
    finally:
        store.close()


def test_a_damaged_graph_file_is_rebuilt_not_fatal(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=memories(clustered(300))))
    store.close()
    for path in (tmp_path / "ann").glob("*.content.usearch"):
        path.write_bytes(b"not an index")
    store = open_store(tmp_path)
    try:
        assert store.graph_states() == {NS: "built"}
        assert recall(store, clustered(20, seed=3)) >= 0.98
    finally:
        store.close()


def test_random_vectors_keep_the_exact_scan(tmp_path: Path) -> None:
    """No neighbourhoods, no graph: the self-check refuses it and recall stays 1."""
    rng = np.random.default_rng(5)
    v = rng.standard_normal((3000, 256)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    store = SQLiteStore(tmp_path, dim=256, config=StoreConfig(
        ann_min=100, ann_build_in_background=False, ann_ef=8, ann_connectivity=4))
    store.open()
    try:
        batch = [Memory(id=f"r{i}", namespace=NS, content="x", created_at=T0, updated_at=T0,
                        last_accessed_at=T0, content_hash=f"r{i}", embedding=x, keywords="x",
                        context_keywords="") for i, x in enumerate(v)]
        store.apply(WriteBatch(NS, memories=batch))
        assert store.graph_states() == {NS: "exact"} and store._vectors[NS].ann is None
    finally:
        store.close()


def test_a_background_build_replays_the_writes_made_meanwhile(tmp_path: Path) -> None:
    store = open_store(tmp_path, background=True)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(2000))))
        extra = clustered(50, seed=9)
        store.apply(WriteBatch(NS, memories=memories(extra, start=20_000)))  # maybe mid-build
        store.apply(WriteBatch(NS, delete_memories=["m20001"]))
        store.wait_for_graphs(60)
        assert store.graph_states() == {NS: "built"}
        got = store.vector_topk(NS, extra[0], 1)
        assert got[0][0] == "m20000"
        assert "m20001" not in {i for i, _ in store.vector_topk(NS, extra[1], 5)}
        assert len(store._vectors[NS].ann["content"]) == 2049  # type: ignore[index]
    finally:
        store.close()


@pytest.mark.parametrize("ann_min", [0, 10**9])
def test_no_graph_below_the_threshold_or_when_off(tmp_path: Path, ann_min: int) -> None:
    store = open_store(tmp_path, ann_min=ann_min)
    try:
        store.apply(WriteBatch(NS, memories=memories(clustered(200))))
        assert store.graph_states() == {} and store._vectors[NS].ann is None
    finally:
        store.close()
    assert not (tmp_path / "ann").exists()


def test_install_replays_every_write_made_since_the_snapshot() -> None:
    """The build reads rows without the store's lock; whatever changed meanwhile (a new row,
    a rewrite, a delete that moves the last row into the hole) reaches the graphs."""
    from graphmem.store.ann import HnswField
    from graphmem.store.vectors import VectorIndex

    v = clustered(200)
    index = VectorIndex(DIM)
    for i in range(200):
        index.upsert(f"m{i}", v[i], None, Tier.MEDIUM, Status.ACTIVE, pk=i + 1)
    pks, content, _, _ = index.snapshot()
    n = len(pks)
    graph = HnswField(DIM)
    graph.add(pks[n // 2:], content[n // 2:])  # half built when the writes come
    first_vectors = content[:n // 2].copy()  # the build read these vectors before ...
    index.remove("m10")  # m199's row moves into the hole
    index.upsert("new", -v[0], None, Tier.MEDIUM, Status.ACTIVE, pk=1000)
    index.upsert("m3", -v[1], None, Tier.MEDIUM, Status.ACTIVE)  # rewritten in place
    graph.add(pks[:n // 2], first_vectors)  # ... and their keys after: pk 200 gets v[10]
    index.install({"content": graph, "context": HnswField(DIM)})
    assert len(graph) == 200  # 200 + new - m10
    assert not graph.contains(11) and graph.contains(1000)
    for pk, want in ((1000, -v[0]), (4, -v[1]), (200, v[199])):
        got = graph.vector(pk)
        assert got is not None and float(got @ want) > 0.999
    assert [i for i, _ in index.topk(-v[1], 1)] == ["m3"]


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
        return rows, kw, ctx, edges, sorted(s._vectors)

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
from graphmem.store.ann import HnswField
HnswField(4)
assert "onnxruntime" in sys.modules  # loaded before usearch first runs
done = threading.Event()
def build():
    rng = np.random.default_rng(0)
    while not done.is_set():
        f = HnswField(384)
        f.add(np.arange(3000), rng.standard_normal((3000, 384)).astype(np.float32))
t = threading.Thread(target=build); t.start()
import time; time.sleep(0.5)
import onnxruntime, sklearn.cluster  # what a server or a consolidation run loads later
done.set(); t.join()
print("alive")
"""


def test_building_a_graph_while_the_embedder_loads_does_not_crash_the_process() -> None:
    """A server warms its ONNX embedder while a graph is built: onnxruntime's first import
    with usearch running in another thread was a SIGSEGV (exit 139) every time."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", CRASH], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "alive", out.stderr[-2000:]
