"""The store port's contract, run against every adapter (``store`` fixture params)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphmem.errors import StoreError
from graphmem.models import Candidate, Memory, Relation, RelationType, Status, Tier
from graphmem.store.base import MemoryStore, WriteBatch
from graphmem.store.sqlite.store import SQLiteStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DIM = 384
NS = "contract"


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def memory(i: int, *, ns: str = NS, session: str | None = None, tier: Tier = Tier.MEDIUM,
           status: Status = Status.ACTIVE, keywords: str = "", minutes: int | None = None,
           context: bool = False) -> Memory:
    at = T0 + timedelta(minutes=i if minutes is None else minutes)
    return Memory(id=f"m{i}", namespace=ns, content=f"memory {i}", tier=tier, status=status,
                  created_at=at, updated_at=at, last_accessed_at=at, session_id=session,
                  content_hash=f"h{i}", embedding=vec(i), keywords=keywords or f"memori w{i}",
                  context_keywords="", context_embedding=vec(1000 + i) if context else None,
                  metadata={"i": i})


def edge(a: str, b: str, t: RelationType = RelationType.CAUSES, ns: str = NS,
         score: float | None = None) -> Relation:
    return Relation(a, b, t, ns, score, T0)


def open_sqlite(tmp_path: Path, *, ann: bool = False) -> SQLiteStore:
    """``ann``: every namespace's top-k answered by its faiss indexes (built in the write)."""
    from graphmem.config import TuningConfig

    tuning = TuningConfig(ann_min=1 if ann else 0, ann_build_in_background=False)
    s = SQLiteStore(tmp_path / "sqlite", dim=DIM, tuning=tuning)
    s.open()
    return s


def open_falkordb(request: pytest.FixtureRequest) -> MemoryStore:
    from tests.conftest import open_falkordb_store

    store: MemoryStore = open_falkordb_store(request.getfixturevalue("falkordb_server"))
    return store


def open_neo4j(request: pytest.FixtureRequest) -> MemoryStore:
    import os

    uri = request.getfixturevalue("neo4j_uri")  # started from Maven Central, or external
    from tests.conftest import _wipe_neo4j

    _wipe_neo4j(uri)  # the test database is emptied: other suites share it
    from graphmem.store.graph.neo4j_conn import Neo4jConnection
    from graphmem.store.graph.store import CypherStore

    store = CypherStore(Neo4jConnection(uri, user=os.environ.get("GRAPHMEM_NEO4J_USER", "neo4j"),
                                        password=os.environ.get("GRAPHMEM_NEO4J_PASSWORD")))
    store.open()
    from graphmem.cypher import Statement

    # a shared database: start each test from empty contract namespaces and leases
    wipe = Statement("test/wipe", "neo4j",
                     "MATCH (n) WHERE n.namespace IN $ns OR n:GraphmemLease DETACH DELETE n")
    store.conn.run(wipe, {"ns": [NS, "other"]}, write=True)
    return store


@pytest.fixture(params=["sqlite", "sqlite-ann", "falkordb", "neo4j"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    s = (open_sqlite(tmp_path, ann=request.param == "sqlite-ann")
         if request.param.startswith("sqlite") else
         open_falkordb(request) if request.param == "falkordb" else open_neo4j(request))
    yield s
    s.close()


def test_apply_then_get_round_trips_every_field(store: MemoryStore) -> None:
    m = memory(1, session="s1", context=True)
    m.pinned, m.surprise_score, m.source, m.topic = True, 0.25, "alice", "ops"
    m.last_promoted_at = T0 + timedelta(hours=3)
    store.apply(WriteBatch(NS, memories=[m]))
    got = store.get_memories(NS, ["m1", "missing"], embeddings=True)
    assert set(got) == {"m1"}
    g = got["m1"]
    for field in ("id", "namespace", "content", "kind", "tier", "base_importance", "pinned",
                  "created_at", "updated_at", "last_accessed_at", "last_promoted_at",
                  "surprise_score", "source", "topic", "session_id", "metadata", "status",
                  "content_hash", "keywords"):
        assert getattr(g, field) == getattr(m, field), field
    assert g.embedding is not None and m.embedding is not None
    assert g.context_embedding is not None and m.context_embedding is not None
    assert np.allclose(g.embedding, m.embedding)
    assert np.allclose(g.context_embedding, m.context_embedding)
    assert store.get_memories(NS, ["m1"])["m1"].embedding is None


def test_namespaces_are_isolated(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1)]))
    store.apply(WriteBatch("other", memories=[memory(2, ns="other")]))
    assert store.get_memories("other", ["m1"]) == {}
    assert [i for i, _ in store.vector_topk("other", vec(1), 5)] == ["m2"]
    assert store.keyword_topk("other", ["w1"], 5) == []
    assert sorted(store.namespaces()) == ["contract", "other"]


def test_failed_batch_writes_nothing(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1)]))
    bad = memory(2)
    bad.namespace = "elsewhere"
    with pytest.raises(StoreError):
        store.apply(WriteBatch(NS, memories=[memory(3), bad], edges=[edge("m1", "m3")]))
    assert set(store.get_memories(NS, ["m1", "m2", "m3"])) == {"m1"}
    assert store.edges_of(NS, ["m1"]) == []
    assert [i for i, _ in store.vector_topk(NS, vec(3), 5)] == ["m1"]


def test_upsert_replaces_and_keeps_indexes_in_step(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1, keywords="alpha")]))
    changed = memory(1, keywords="beta", tier=Tier.FAST)
    changed.content = "changed"
    changed.embedding = vec(99)
    store.apply(WriteBatch(NS, memories=[changed]))
    assert store.get_memories(NS, ["m1"])["m1"].content == "changed"
    assert store.keyword_topk(NS, ["alpha"], 5) == []
    assert [i for i, _ in store.keyword_topk(NS, ["beta"], 5)] == ["m1"]
    top = store.vector_topk(NS, vec(99), 1)
    assert top[0][0] == "m1" and top[0][1] == pytest.approx(1.0, abs=1e-5)
    assert store.vector_topk(NS, vec(99), 1, tiers=[Tier.MEDIUM]) == []


def test_upsert_without_embedding_keeps_vectors(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1, context=True), memory(2)]))
    meta_only = memory(1, tier=Tier.GLACIAL, status=Status.ARCHIVED)
    meta_only.embedding = None
    store.apply(WriteBatch(NS, memories=[meta_only]))
    got = store.get_memories(NS, ["m1"], embeddings=True)["m1"]
    assert got.tier is Tier.GLACIAL and got.status is Status.ARCHIVED
    assert got.embedding is not None and got.context_embedding is not None
    assert np.allclose(got.embedding, vec(1)) and np.allclose(got.context_embedding, vec(1001))
    assert store.vector_topk(NS, vec(1), 1, statuses=[Status.ARCHIVED])[0][0] == "m1"
    assert store.vector_topk(NS, vec(1), 1)[0][0] == "m2"


def test_vector_topk_orders_and_filters(store: MemoryStore) -> None:
    ms = [memory(i, tier=Tier.FAST if i % 2 else Tier.SLOW) for i in range(20)]
    ms[3].status = Status.ARCHIVED
    store.apply(WriteBatch(NS, memories=ms))
    q = vec(5) + 0.5 * vec(7)
    top = store.vector_topk(NS, q, 3)
    assert [i for i, _ in top][:2] == ["m5", "m7"]
    assert top[0][1] >= top[1][1] >= top[2][1]
    assert all(i != "m3" for i, _ in store.vector_topk(NS, vec(3), 20))
    archived = store.vector_topk(NS, vec(3), 1, statuses=[Status.ARCHIVED])
    assert archived[0][0] == "m3"
    fast = store.vector_topk(NS, q, 20, tiers=[Tier.FAST])
    assert fast and all(int(i[1:]) % 2 for i, _ in fast)
    many = store.vector_topk_many(NS, np.stack([vec(5), vec(8)]), 2)
    assert [row[0][0] for row in many] == ["m5", "m8"]


def test_vector_topk_many_is_vector_topk_per_row_even_when_crowded_out(
        store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batched search (one statement per chunk on Cypher) answers as one search per vector,
    also where another namespace's nearer memories fill the first fetch (widened alone)."""
    monkeypatch.setattr("graphmem.store.graph.store._MANY_CHUNK", 3)  # several chunks, a short one
    store.apply(WriteBatch(NS, memories=[memory(i) for i in range(12)]))
    crowd = []
    for j in range(150):  # nearer to vec(5) than m5's neighbours: crowds a fetch of 64 out
        v = vec(5) + 0.05 * vec(5000 + j)
        m = memory(100 + j, ns="other")
        m.embedding = v / np.linalg.norm(v)
        crowd.append(m)
    store.apply(WriteBatch("other", memories=crowd))
    queries = np.stack([vec(i) for i in (5, 1, 2, 9, 11, 4, 7)] +
                       [0.9 * vec(5) + 0.1 * vec(3)])
    many = store.vector_topk_many(NS, queries, 3)
    one = [store.vector_topk(NS, q, 3) for q in queries]
    assert [[i for i, _ in row] for row in many] == [[i for i, _ in row] for row in one]
    assert many[0][0][0] == "m5" and many[-1][0][0] == "m5" and len(many[-1]) == 3
    for row_many, row_one in zip(many, one, strict=True):
        assert [s for _, s in row_many] == pytest.approx([s for _, s in row_one], abs=1e-5)
    assert store.vector_topk_many(NS, queries[:0], 3) == []


def test_vector_topk_many_with_min_score_keeps_every_hit_at_or_above_it(
        store: MemoryStore) -> None:
    """SIMILAR_TO asks only for hits at or above its threshold: an adapter may leave out the
    ones below, never one above, and every hit it returns is exact. 100 near-duplicates make
    the embedded store's codes widen their first fetch."""
    base = vec(7)
    ms = []
    for j in range(100):
        v = base + 0.15 * vec(3000 + j)
        m = memory(j)
        m.embedding = v / np.linalg.norm(v)
        ms.append(m)
    ms += [memory(200 + j) for j in range(40)]  # unrelated
    store.apply(WriteBatch(NS, memories=ms))
    queries = np.stack([base, vec(201), vec(9999)])
    for min_score in (0.8, 0.3):
        got = store.vector_topk_many(NS, queries, 5, min_score=min_score)
        for q, row in zip(queries, got, strict=True):
            exact = store.vector_topk(NS, q, 5)
            assert [i for i, s in row if s >= min_score] == [i for i, s in exact
                                                             if s >= min_score]
            scores = dict(exact)
            for i, s in row:
                if i in scores:
                    assert s == pytest.approx(scores[i], abs=1e-5)
    assert len(store.vector_topk_many(NS, queries[:1], 5, min_score=0.8)[0]) == 5


def test_compact_reclaims_what_replaced_and_deleted_memories_left(store: MemoryStore) -> None:
    """Replaced vectors and deleted memories leave stale vector nodes on the graph engines;
    maintenance compacts them once enough wait. The embedded store has none to reclaim."""
    ms = [memory(i, context=True) for i in range(4)]
    store.apply(WriteBatch(NS, memories=ms))
    assert store.compact(1) == 0
    changed = ms[0].copy(embedding=vec(900), content_hash="h900")
    store.apply(WriteBatch(NS, memories=[changed], delete_memories=["m1"]))
    graph = not isinstance(store, SQLiteStore)
    assert store.compact(10) == 0  # fewer wait than asked: nothing done
    assert store.compact(1) == (3 if graph else 0)  # m0's old content; m1's content, context
    assert store.compact(1) == 0
    assert store.vector_topk(NS, vec(900), 1)[0][0] == "m0"
    assert [i for i, _ in store.vector_topk(NS, vec(2), 1)] == ["m2"]
    assert len(store.vector_topk(NS, vec(2), 10)) == 3


def test_context_field_only_ranks_memories_with_context(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1, context=True), memory(2)]))
    got = store.vector_topk(NS, vec(1001), 5, field="context")
    assert [i for i, _ in got] == ["m1"]


def test_vector_topk_fields_is_vector_topk_of_each_field(store: MemoryStore) -> None:
    """Both fields in one call answer as two calls would."""
    ms = [memory(i, context=i % 3 > 0, tier=Tier.FAST if i % 2 else Tier.SLOW)
          for i in range(30)]
    ms[4].status = Status.ARCHIVED
    store.apply(WriteBatch(NS, memories=ms))
    q = vec(5) + 0.4 * vec(1007) + 0.2 * vec(4)
    q = q / np.linalg.norm(q)
    for kw in ({}, {"tiers": [Tier.FAST]}, {"statuses": [Status.ACTIVE, Status.ARCHIVED]}):
        content, context = store.vector_topk_fields(NS, q, 5, **kw)
        assert content == store.vector_topk(NS, q, 5, **kw)
        assert context == store.vector_topk(NS, q, 5, field="context",
                                            **kw)
        assert content and context and content != context
    assert store.vector_topk_fields("nobody", q, 5) == ([], [])


def test_similarities_are_the_cosines_of_the_current_vectors(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1, context=True), memory(2)]))
    bare = memory(3)
    bare.embedding = None
    store.apply(WriteBatch(NS, memories=[bare]))  # stored without vectors: kept as it was
    store.apply(WriteBatch("other", memories=[memory(4, ns="other")]))
    q = vec(1) * 0.6 + vec(1001) * 0.8
    q = q / np.linalg.norm(q)
    got = store.similarities(NS, ["m1", "m2", "m3", "m4", "nope"], q)
    assert set(got) == {"m1", "m2"}
    assert got["m1"][0] == pytest.approx(float(vec(1) @ q), abs=1e-5)
    assert got["m1"][1] == pytest.approx(float(vec(1001) @ q), abs=1e-5)
    assert got["m2"][0] == pytest.approx(float(vec(2) @ q), abs=1e-5) and got["m2"][1] is None
    changed = memory(1)
    changed.embedding = vec(7)
    store.apply(WriteBatch(NS, memories=[changed]))  # a new vector replaces the old one
    assert store.similarities(NS, ["m1"], q)["m1"][0] == pytest.approx(float(vec(7) @ q),
                                                                      abs=1e-5)
    assert store.similarities(NS, [], q) == {}


def test_keyword_topk_and_field_scores(store: MemoryStore) -> None:
    a = memory(1, keywords="deploy fail migrat")
    b = memory(2, keywords="deploy")
    c = memory(3, keywords="tea coffe")
    c.context_keywords = "deploy tea"
    store.apply(WriteBatch(NS, memories=[a, b, c]))
    top = store.keyword_topk(NS, ["deploy", "migrat"], 10)
    assert top[0][0] == "m1" and {i for i, _ in top} == {"m1", "m2", "m3"}
    assert all(s >= 0 for _, s in top) and [s for _, s in top] == sorted(
        (s for _, s in top), reverse=True)
    assert store.keyword_topk(NS, ["deploy"], 10, tiers=[Tier.FAST]) == []
    assert [i for i, _ in store.keyword_topk(NS, ["tea"], 10)] == ["m3"]
    kw, ctx = store.keyword_stats(NS, ["deploy", "tea", "none"])
    assert (kw.docs, kw.df) == (3, {"deploy": 2, "tea": 1, "none": 0})
    assert kw.avg_length == pytest.approx(6 / 3)
    assert (ctx.docs, ctx.df) == (1, {"deploy": 1, "tea": 1, "none": 0})
    store.apply(WriteBatch(NS, delete_memories=["m2"]))
    assert store.keyword_stats(NS, ["deploy"])[0].df == {"deploy": 1}
    assert store.keyword_stats("other", ["deploy"])[0].docs == 0
    assert store.keyword_topk(NS, [], 10) == []
    assert store.keyword_topk(NS, ['quote"s', "or", "AND"], 10) == []  # no syntax errors
    assert store.keyword_fields(NS, ["m3", "m1", "m2", "nope"]) == {
        "m3": ("tea coffe", "deploy tea"), "m1": ("deploy fail migrat", "")}
    assert store.keyword_fields("other", ["m1"]) == {} and store.keyword_fields(NS, []) == {}


def test_keyword_topk_newest_keeps_the_filters(store: MemoryStore) -> None:
    """``newest`` lets a store serve the last-stored matches instead of ranking every posting;
    on every store the results still hold a term and obey namespace, tier and status."""
    store.apply(WriteBatch(NS, memories=[
        memory(i, keywords="deploy" if i % 2 else "tea",
               tier=Tier.FAST if i % 3 == 0 else Tier.MEDIUM,
               status=Status.ARCHIVED if i == 5 else Status.ACTIVE) for i in range(12)]))
    store.apply(WriteBatch("other", memories=[memory(99, ns="other", keywords="deploy")]))
    got = [i for i, _ in store.keyword_topk(NS, ["deploy"], 3, newest=True,
                                            tiers=[Tier.MEDIUM])]
    assert len(got) == 3 and set(got) <= {"m1", "m7", "m11"}
    every = {i for i, _ in store.keyword_topk(NS, ["deploy"], 50, newest=True)}
    assert every == {"m1", "m3", "m7", "m9", "m11"}


def test_sqlite_newest_keyword_matches_are_the_last_stored(tmp_path: Path) -> None:
    s = open_sqlite(tmp_path)
    try:
        s.apply(WriteBatch(NS, memories=[memory(i, keywords="deploy") for i in range(20)]))
        s.apply(WriteBatch(NS, memories=[memory(3, keywords="deploy again")]))  # rewrite
        got = s.keyword_topk(NS, ["deploy"], 4, newest=True)
        assert [i for i, _ in got] == ["m19", "m18", "m17", "m16"]
        assert all(score == 0.0 for _, score in got)
    finally:
        s.close()


def test_keyword_candidates_are_the_search_with_its_fields(store: MemoryStore) -> None:
    """One round trip for retrieval's keyword seeds (ADR 0017): the ids of ``keyword_topk``
    (in its order when they are more than asked), each with what ``keyword_fields`` reads,
    under the same filters - also when a field holds the separator FalkorDB joins the reply
    with (a newline)."""
    ms = [memory(i, keywords=["deploy fail migrat", "deploy", "tea coffe", "deploy odd"][i % 4],
                 tier=Tier.FAST if i % 3 == 0 else Tier.MEDIUM) for i in range(12)]
    ms[2].context_keywords = "deploy tea"
    ms[3].context_keywords = "late\nnight"
    store.apply(WriteBatch(NS, memories=ms))
    store.apply(WriteBatch("other", memories=[memory(99, ns="other", keywords="deploy")]))
    for terms, tiers in ((["deploy", "migrat"], None), (["tea"], None),
                         (["deploy"], [Tier.FAST]), (["fail", "coffe"], [Tier.MEDIUM])):
        top = store.keyword_topk(NS, terms, 50, tiers=tiers)
        got = store.keyword_candidates(NS, terms, 50, tiers=tiers)
        assert top and sorted(i for i, _, _ in got) == sorted(i for i, _ in top), terms
        fields = store.keyword_fields(NS, [i for i, _ in top])
        assert {i: (kw, ctx) for i, kw, ctx in got} == fields
    assert ("m3", "deploy odd", "late\nnight") in store.keyword_candidates(NS, ["deploy"], 50)
    for k in (3, 5):  # more match than asked: keyword_topk's first k, in its order
        first = store.keyword_candidates(NS, ["deploy", "fail"], k)
        assert [i for i, _, _ in first] == [i for i, _ in store.keyword_topk(
            NS, ["deploy", "fail"], k)]
    assert store.keyword_candidates(NS, [], 10) == []
    assert store.keyword_candidates(NS, ['quote"s', "or"], 10) == []
    assert store.keyword_candidates(NS, ["deploy"], 10, statuses=[Status.ARCHIVED]) == []
    rewritten = memory(1, keywords="rollback done")
    store.apply(WriteBatch(NS, memories=[rewritten], delete_memories=["m5"]))
    after = {i: kw for i, kw, _ in store.keyword_candidates(NS, ["deploy", "rollback"], 50)}
    assert after["m1"] == "rollback done" and "m5" not in after


def test_get_scored_is_get_memories_with_similarities(store: MemoryStore) -> None:
    """Retrieval's candidate read (ADR 0017) answers what its two reads answer apart: the
    ranked fields of each memory (``Candidate``, ADR 0041), and the cosines."""
    odd = memory(2, keywords='odd "quoted\\ keyword')  # FalkorDB's toJSON leaves it raw
    odd.content, odd.metadata = 'free "text"\n\\ é', {"k": 'v"\n'}
    first = memory(1, context=True)
    first.source, first.session_id, first.topic, first.type = "alice", "s1", "deploys", "fact"
    first.valid_from = first.created_at - timedelta(days=3)
    first.valid_until = first.created_at + timedelta(days=3)
    first.access_count, first.importance, first.base_importance = 4, 0.25, 0.75
    first.context_keywords = "before deploy"
    store.apply(WriteBatch(NS, memories=[first, memory(5, status=Status.ARCHIVED)]))
    bare = memory(3)
    bare.embedding = None
    store.apply(WriteBatch(NS, memories=[bare]))
    store.apply(WriteBatch("other", memories=[memory(4, ns="other")]))
    q = vec(1) * 0.6 + vec(1001) * 0.8
    q = q / np.linalg.norm(q)
    ids = ["m1", "m2", "m3", "m4", "m5", "nope"]
    memories, sims = store.get_scored(NS, ids, q)
    assert "m2" not in memories
    store.apply(WriteBatch(NS, memories=[odd]))
    memories, sims = store.get_scored(NS, ids, q)
    assert memories["m2"].keywords == odd.keywords
    assert memories["m2"].metadata == odd.metadata
    alone = store.get_memories(NS, ids)
    assert set(memories) == set(alone) == {"m1", "m2", "m3", "m5"}
    for i, c in memories.items():
        whole = alone[i].copy(embedding=None, context_embedding=None)
        assert replace(c, memory=None) == replace(Candidate.of(whole), memory=None)
        assert c.memory is None or c.memory == whole
    assert memories["m1"].source == "alice" and memories["m1"].type == "fact"
    assert memories["m1"].valid_until == first.valid_until
    assert memories["m5"].status is Status.ARCHIVED
    apart = store.similarities(NS, ids, q)
    assert set(sims) == set(apart) == {"m1", "m2", "m5"}
    for i, (on_content, on_context) in sims.items():
        assert on_content == pytest.approx(apart[i][0], abs=1e-6)
        assert (on_context is None) == (apart[i][1] is None)
    assert sims["m1"][1] == pytest.approx(float(vec(1001) @ q), abs=1e-5)
    assert store.get_scored(NS, [], q) == ({}, {})


def test_keyword_fields_follow_a_rewrite_after_a_search(store: MemoryStore) -> None:
    """A store may keep the fields a keyword search just read; a rewrite or a delete must not
    leave the old ones behind."""
    store.apply(WriteBatch(NS, memories=[memory(1, keywords="deploy fail"),
                                         memory(2, keywords="deploy tea")]))
    assert {i for i, _ in store.keyword_topk(NS, ["deploy"], 10)} == {"m1", "m2"}
    assert store.keyword_fields(NS, ["m1"]) == {"m1": ("deploy fail", "")}
    rewritten = memory(1, keywords="rollback done")
    rewritten.context_keywords = "deploy"
    store.apply(WriteBatch(NS, memories=[rewritten], delete_memories=["m2"]))
    assert store.keyword_fields(NS, ["m1", "m2"]) == {"m1": ("rollback done", "deploy")}


def test_edges_of_keeps_the_wanted_types_both_ways(store: MemoryStore) -> None:
    """One type, several, none (nothing), or all; edges in and out of the asked ids."""
    store.apply(WriteBatch(NS, memories=[memory(i) for i in range(4)],
                           edges=[edge("m0", "m1"), edge("m2", "m0", RelationType.CONTRADICTS),
                                  edge("m0", "m3", RelationType.CONTRADICTS),
                                  edge("m3", "m0", RelationType.REFERENCES),
                                  edge("m1", "m2", RelationType.CONTRADICTS)]))
    contra = {e.key for e in store.edges_of(NS, ["m0"], [RelationType.CONTRADICTS])}
    assert contra == {("m2", "m0", RelationType.CONTRADICTS),
                      ("m0", "m3", RelationType.CONTRADICTS)}
    two = {e.key for e in store.edges_of(NS, ["m0"], [RelationType.CAUSES,
                                                       RelationType.REFERENCES])}
    assert two == {("m0", "m1", RelationType.CAUSES), ("m3", "m0", RelationType.REFERENCES)}
    assert store.edges_of(NS, ["m0"], []) == []
    assert len(store.edges_of(NS, ["m0"])) == 4
    assert store.edges_of(NS, ["m0"], [RelationType.SUMMARIZES]) == []


def test_edges_neighbourhood_and_delete_cascade(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(i) for i in range(6)],
                           edges=[edge("m0", "m1"), edge("m1", "m2", RelationType.REFERENCES),
                                  edge("m2", "m3"),
                                  edge("m4", "m0", RelationType.SIMILAR_TO, score=0.8)]))
    keys = {e.key for e in store.neighbourhood(NS, ["m0"], 1)}
    assert keys == {("m0", "m1", RelationType.CAUSES), ("m4", "m0", RelationType.SIMILAR_TO)}
    two = {e.key for e in store.neighbourhood(NS, ["m0"], 2)}
    assert ("m1", "m2", RelationType.REFERENCES) in two
    assert ("m2", "m3", RelationType.CAUSES) not in two
    only = store.neighbourhood(NS, ["m0"], 2, types=[RelationType.CAUSES])
    assert {e.key for e in only} == {("m0", "m1", RelationType.CAUSES)}
    sim = [e for e in store.edges_of(NS, ["m4"]) if e.type is RelationType.SIMILAR_TO]
    assert sim[0].score == pytest.approx(0.8)
    store.apply(WriteBatch(NS, delete_memories=["m1"]))
    assert store.edges_of(NS, ["m1"]) == []
    assert {e.key for e in store.edges_of(NS, ["m0", "m2"])} == {
        ("m2", "m3", RelationType.CAUSES), ("m4", "m0", RelationType.SIMILAR_TO)}
    assert store.counts(NS).edges == {RelationType.CAUSES: 1, RelationType.SIMILAR_TO: 1}
    assert store.get_memories(NS, ["m1"]) == {}
    assert store.vector_topk(NS, vec(1), 1)[0][0] != "m1"
    store.apply(WriteBatch(NS, delete_edges=[("m4", "m0", RelationType.SIMILAR_TO)]))
    assert store.edges_of(NS, ["m4"]) == []


def test_neighbourhood_statement_returns_each_reachable_edge_once(store: MemoryStore) -> None:
    """The one-round-trip neighbourhood of the Cypher adapter: FalkorDB answered the old
    statement (a second MATCH on the bound relationship) with 7,619 rows for 19 edges, which
    made a depth-1 retrieval take a second and pushed depth 2 into the hop-by-hop fallback."""
    from graphmem.store.graph.store import CypherStore

    n = 30
    store.apply(WriteBatch(NS, memories=[memory(i) for i in range(n)],
                           edges=[edge(f"m{i}", f"m{i + 1}") for i in range(n - 1)]
                           + [edge(f"m{i}", f"m{i + 2}", RelationType.SIMILAR_TO, score=0.6)
                              for i in range(0, n - 2, 3)]))
    seeds = ["m10", "m11"]
    one = {e.key for e in store.neighbourhood(NS, seeds, 1)}
    assert one == {e.key for e in store.edges_of(NS, seeds)}
    if isinstance(store, CypherStore):
        for depth in (1, 2):
            rows = store._run("edge/neighbourhood", namespace=NS, seeds=seeds, depth=depth,
                              limit=10_000, types=None)
            keys = [(r["source_id"], r["target_id"], r["type"]) for r in rows]
            assert len(keys) == len(set(keys))  # each edge once
            reached = {e.key for e in store.neighbourhood(NS, seeds, depth)}
            assert {(a, b, RelationType(t)) for a, b, t in keys} == reached


def test_edge_upsert_is_idempotent(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1), memory(2)]))
    store.apply(WriteBatch(NS, edges=[edge("m1", "m2", RelationType.SIMILAR_TO, score=0.5)]))
    store.apply(WriteBatch(NS, edges=[edge("m1", "m2", RelationType.SIMILAR_TO, score=0.7)]))
    edges = store.edges_of(NS, ["m1"])
    assert len(edges) == 1 and edges[0].score == pytest.approx(0.7)
    assert store.counts(NS).edges == {RelationType.SIMILAR_TO: 1}


def test_find_by_hash_sees_active_only(store: MemoryStore) -> None:
    store.apply(WriteBatch(NS, memories=[memory(1), memory(2, status=Status.ARCHIVED)]))
    assert store.find_by_hash(NS, ["h1", "h2", "h9"]) == {"h1": "m1"}


def test_session_members_and_time_window(store: MemoryStore) -> None:
    same_time = [memory(i, session="s", minutes=0) for i in range(4)]
    other = [memory(10 + i, minutes=1 + i) for i in range(3)]
    store.apply(WriteBatch(NS, memories=[*same_time, *other]))
    members = store.session_members(NS, "s")
    assert [m for m, _ in members] == ["m0", "m1", "m2", "m3"]  # ties: insertion order
    before, after = store.time_window(NS, same_time[1], before=5, after=1, session_only=True)
    assert [m.id for m in before] == ["m0"]
    assert [m.id for m in after] == ["m2"]
    _, after_all = store.time_window(NS, same_time[3], before=0, after=5, session_only=False)
    assert [m.id for m in after_all] == ["m10", "m11", "m12"]


def test_counts_and_iteration(store: MemoryStore) -> None:
    ms = [memory(i, tier=Tier.FAST if i < 3 else Tier.SLOW) for i in range(7)]
    store.apply(WriteBatch(NS, memories=ms, edges=[edge("m0", "m1"), edge("m1", "m2")]))
    counts = store.counts(NS)
    assert counts.memories[(Tier.FAST, Status.ACTIVE, "memory")] == 3
    assert counts.memories[(Tier.SLOW, Status.ACTIVE, "memory")] == 4
    assert counts.edges == {RelationType.CAUSES: 2}
    pages = list(store.iter_memories(NS, page=3))
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [m.id for p in pages for m in p] == [f"m{i}" for i in range(7)]
    assert all(m.embedding is not None for p in pages for m in p)
    assert sum(len(p) for p in store.iter_edges(NS, page=1)) == 2


def test_lease_excludes_other_owners_until_expiry(store: MemoryStore) -> None:
    until = T0 + timedelta(minutes=5)
    assert store.acquire_lease("consolidation", "a", until, T0)
    assert not store.acquire_lease("consolidation", "b", until, T0 + timedelta(minutes=1))
    assert store.acquire_lease("consolidation", "a", until + timedelta(minutes=5), T0)
    assert store.acquire_lease("consolidation", "b", T0 + timedelta(hours=1),
                               T0 + timedelta(minutes=11))
    store.release_lease("consolidation", "b")
    assert store.acquire_lease("consolidation", "c", until, T0)


def test_patches_and_transitions_in_one_batch(store: MemoryStore) -> None:
    from graphmem.models import Transition, TransitionKind

    store.apply(WriteBatch(NS, memories=[memory(1, keywords="alpha"), memory(2)]))
    later = T0 + timedelta(hours=5)
    store.apply(WriteBatch(NS, patches=[
        ("m1", {"tier": Tier.FAST, "status": Status.ACTIVE, "importance": 0.25,
                "window_start": later, "window_count": 2, "pinned": True}),
        ("m2", {"status": Status.ARCHIVED})],
        transitions=[Transition("m1", TransitionKind.PROMOTION, Tier.MEDIUM, Tier.FAST,
                                "test", later),
                     Transition("m2", TransitionKind.EVICTION, Tier.MEDIUM, Tier.MEDIUM,
                                "full", T0, Status.ACTIVE, Status.ARCHIVED)]))
    got = store.get_memories(NS, ["m1", "m2"])
    m1 = got["m1"]
    assert (m1.tier, m1.importance, m1.window_start, m1.window_count, m1.pinned) == (
        Tier.FAST, 0.25, later, 2, True)
    assert m1.content == "memory 1" and got["m2"].status is Status.ARCHIVED
    # the indexes follow: tier / status filters see the patched values
    assert [i for i, _ in store.keyword_topk(NS, ["alpha"], 5, tiers=[Tier.FAST])] == ["m1"]
    assert store.vector_topk(NS, vec(2), 1)[0][0] == "m1"
    assert store.vector_topk(NS, vec(1), 1, tiers=[Tier.FAST])[0][0] == "m1"
    counts = {(k, a, b): (n, r) for k, a, b, n, r in
              store.transition_counts(NS, T0 + timedelta(hours=1))}
    assert counts == {("promotion", Tier.MEDIUM, Tier.FAST): (1, 1),
                      ("eviction", Tier.MEDIUM, Tier.MEDIUM): (1, 0)}
    history = store.transitions_of(NS, "m2")
    assert [(t.kind, t.to_status, t.reason) for t in history] == [
        (TransitionKind.EVICTION, Status.ARCHIVED, "full")]
    # the namespace's latest transitions, newest first, bounded, since a time
    assert [t.memory_id for t in store.recent_transitions(NS, 10)] == ["m1", "m2"]
    assert [t.memory_id for t in store.recent_transitions(NS, 1)] == ["m1"]
    assert [t.memory_id for t in store.recent_transitions(
        NS, 10, since=T0 + timedelta(hours=1))] == ["m1"]
    assert store.recent_transitions("other-ns", 10) == []
    with pytest.raises(StoreError):
        store.apply(WriteBatch(NS, patches=[("m1", {"content": "sneaky"})]))
    assert store.get_memories(NS, ["m1"])["m1"].content == "memory 1"
    active = [m.id for p in store.iter_memories(NS, embeddings=False,
                                                statuses=[Status.ACTIVE]) for m in p]
    assert active == ["m1"]


def _oracle(store: MemoryStore, terms: list[str]) -> list[tuple[int, float, dict[str, int]]]:
    """Keyword statistics counted from the stored memories themselves."""
    ms = [m for page in store.iter_memories(NS, embeddings=False) for m in page]
    out = []
    for field in ("keywords", "context_keywords"):
        toks = [getattr(m, field).split() for m in ms]
        toks = [t for t in toks if t]
        docs = len(toks)
        out.append((docs, sum(len(t) for t in toks) / docs if docs else 0.0,
                    {w: sum(1 for t in toks if w in t) for w in terms}))
    return out


def test_a_vector_changed_back_or_written_again_reads_back_once(store: MemoryStore) -> None:
    """A content edited and reverted (A -> B -> A), or an id deleted and written again,
    points at a vector node that already exists: it must not be duplicated (graph engines
    keep replaced vector nodes until they are vacuumed, ADR 0003)."""
    a = memory(1)
    store.apply(WriteBatch(NS, memories=[a]))
    store.apply(WriteBatch(NS, memories=[a.copy(embedding=vec(2))]))
    store.apply(WriteBatch(NS, memories=[a]))
    store.apply(WriteBatch(NS, delete_memories=["m1"]))
    store.apply(WriteBatch(NS, memories=[a]))
    rows = [m.id for page in store.iter_memories(NS) for m in page]
    assert rows == ["m1"]
    got = store.get_memories(NS, ["m1"], embeddings=True)["m1"]
    assert got.embedding is not None and np.allclose(got.embedding, vec(1), atol=1e-3)
    assert [i for i, _ in store.vector_topk(NS, vec(1), 5)] == ["m1"]


def test_keyword_statistics_follow_every_write(store: MemoryStore) -> None:
    """ADR 0016: the graph engines keep the statistics at write time; every store must give
    what a count over its memories gives, after upserts that change the terms, deletes,
    a delete beside an insert in one batch, an id deleted and written again (later and in
    one batch), repeated terms and context fields."""
    terms = ["deploy", "fail", "tea", "rollback", "none"]

    def check() -> None:
        got = store.keyword_stats(NS, terms)
        for (docs, avg, df), st in zip(_oracle(store, terms), got, strict=True):
            assert (st.docs, st.df) == (docs, df)
            assert st.avg_length == pytest.approx(avg)

    a, b, c = (memory(1, keywords="deploy fail deploy"), memory(2, keywords="deploy"),
               memory(3, keywords="tea"))
    c.context_keywords = "deploy tea"
    store.apply(WriteBatch(NS, memories=[a, b, c]))
    check()
    store.apply(WriteBatch(NS, memories=[a.copy(keywords="rollback fail",
                                              context_keywords="tea tea")]))
    check()
    store.apply(WriteBatch(NS, delete_memories=["m2"], memories=[memory(4, keywords="tea")]))
    check()
    store.apply(WriteBatch(NS, delete_memories=["m3"]))
    check()
    store.apply(WriteBatch(NS, memories=[memory(5, keywords="deploy rollback")]))
    check()
    store.apply(WriteBatch(NS, memories=[c.copy(keywords="deploy rollback")]))  # m3 again
    check()
    store.apply(WriteBatch(NS, delete_memories=["m3"], memories=[c.copy(keywords="tea")]))
    check()  # deleted and written again in one batch
    store.apply(WriteBatch(NS, patches=[("m1", {"importance": 0.9})]))  # terms untouched
    check()
    store.apply(WriteBatch(NS, delete_memories=["m1", "m3", "m4", "m5"]))
    check()
    assert store.keyword_stats(NS, terms)[0].docs == 0


def test_types_validity_and_supersession_round_trip(store: MemoryStore) -> None:
    a = memory(1).copy(type="decision", valid_from=T0 - timedelta(days=3),
                       valid_until=T0 + timedelta(days=3))
    store.apply(WriteBatch(NS, memories=[a, memory(2)]))
    got = store.get_memories(NS, ["m1", "m2"])
    assert (got["m1"].type, got["m1"].valid_from, got["m1"].valid_until) == (
        "decision", T0 - timedelta(days=3), T0 + timedelta(days=3))
    assert (got["m2"].type, got["m2"].valid_until, got["m2"].superseded_by) == (
        "observation", None, None)
    store.apply(WriteBatch(NS, patches=[("m2", {"valid_until": T0, "superseded_by": "m1"})]))
    m2 = store.get_memories(NS, ["m2"])["m2"]
    assert (m2.valid_until, m2.superseded_by) == (T0, "m1")
    page = [m for p in store.iter_memories(NS, embeddings=False) for m in p]
    assert {m.id: m.type for m in page} == {"m1": "decision", "m2": "observation"}
    assert m2.used_by == {}  # the agents that used a memory (shared-use promotion)
    store.apply(WriteBatch(NS, patches=[("m2", {"used_by": {"coder": 1.5e9, "qa": 1.6e9}})]))
    assert store.get_memories(NS, ["m2"])["m2"].used_by == {"coder": 1.5e9, "qa": 1.6e9}


def test_an_update_keeps_its_prior_content_until_the_memory_is_deleted(
        store: MemoryStore) -> None:
    from graphmem.models import Transition, TransitionKind

    store.apply(WriteBatch(NS, memories=[memory(1), memory(2)]))
    store.apply(WriteBatch(NS, memories=[memory(1).copy(content="memory one, edited")],
                           transitions=[Transition("m1", TransitionKind.UPDATE, Tier.MEDIUM,
                                                   Tier.MEDIUM, "changed content", T0,
                                                   detail="memory 1"),
                                        Transition("m2", TransitionKind.UPDATE, Tier.MEDIUM,
                                                   Tier.MEDIUM, "changed content", T0,
                                                   detail="memory 2")]))
    assert [(t.kind, t.detail) for t in store.transitions_of(NS, "m1")] == [
        (TransitionKind.UPDATE, "memory 1")]
    assert store.recent_transitions(NS, 5)[0].detail in ("memory 1", "memory 2")
    store.apply(WriteBatch(NS, delete_memories=["m1"]))
    # a deleted memory's prior contents go with it; its tier records and others' stay
    assert [(t.kind, t.detail) for t in store.transitions_of(NS, "m1")] == [
        (TransitionKind.UPDATE, None)]
    assert [t.detail for t in store.transitions_of(NS, "m2")] == ["memory 2"]


def test_list_page_filters_sorts_and_pages_without_gaps(store: MemoryStore) -> None:
    from graphmem.store.base import ListSpec

    ms = [memory(i).copy(type="decision" if i % 3 == 0 else "observation",
                         source="ann" if i % 2 else "bob", importance=(i % 4) / 4)
          for i in range(1, 13)]
    ms[4].status = Status.ARCHIVED  # m5
    store.apply(WriteBatch(NS, memories=ms))
    store.apply(WriteBatch("other", memories=[memory(1, ns="other")]))

    def ids(spec: ListSpec) -> list[str]:
        return [m.id for m in store.list_page(NS, spec)]

    active = [f"m{i}" for i in range(12, 0, -1) if i != 5]
    assert ids(ListSpec(limit=100)) == active  # newest event first by default
    assert ids(ListSpec(limit=100, descending=False)) == active[::-1]
    assert ids(ListSpec(types=("decision",))) == ["m12", "m9", "m6", "m3"]
    assert ids(ListSpec(source="bob", types=("observation",))) == ["m10", "m8", "m4", "m2"]
    assert ids(ListSpec(statuses=None, since=T0 + timedelta(minutes=4),
                        until=T0 + timedelta(minutes=6))) == ["m5", "m4"]
    assert ids(ListSpec(statuses=(Status.ARCHIVED,))) == ["m5"]
    # pages by (sort value, id): ties in importance are broken by id, nothing repeats
    for descending in (True, False):
        seen: list[str] = []
        after = None
        while True:
            page = store.list_page(NS, ListSpec(sort="importance", descending=descending,
                                                after=after, limit=4))
            if not page:
                break
            seen += [m.id for m in page]
            after = (page[-1].importance, page[-1].id)
        assert sorted(seen) == sorted(active) and len(seen) == len(active)
        keys = [(store.get_memories(NS, [i])[i].importance, i) for i in seen]
        assert keys == sorted(keys, reverse=descending)
    assert store.list_page(NS, ListSpec(limit=0)) == []
    with pytest.raises(StoreError):
        store.list_page(NS, ListSpec(sort="content"))


def test_runs_are_saved_and_listed(store: MemoryStore) -> None:
    a = {"id": "run-a", "namespace": "ns", "status": "running", "created_at": "2026-01-01T00:00"}
    b = {"id": "run-b", "namespace": None, "status": "applied", "created_at": "2026-01-02T00:00",
         "plan": [{"cluster": 1, "members": ["m1", "m2"]}]}
    store.save_run(a)
    store.save_run(b)
    store.save_run({**a, "status": "applied", "done": ["c1"]})
    assert store.get_run("run-a") == {**a, "status": "applied", "done": ["c1"]}
    assert store.get_run("nope") is None
    assert [r["id"] for r in store.list_runs()] == ["run-b", "run-a"]
    assert store.list_runs()[0]["plan"][0]["members"] == ["m1", "m2"]
    assert store.run_counts() == {"applied": 2}


def test_ping(store: MemoryStore) -> None:
    store.ping()


def test_sqlite_caches_rebuilt_on_reopen(tmp_path: Path) -> None:
    s = open_sqlite(tmp_path)
    s.apply(WriteBatch(NS, memories=[memory(i) for i in range(5)],
                       edges=[edge("m0", "m1")]))
    s.close()
    s = open_sqlite(tmp_path)
    try:
        assert s.vector_topk(NS, vec(4), 1)[0][0] == "m4"
        assert {e.key for e in s.neighbourhood(NS, ["m0"], 1)} == {
            ("m0", "m1", RelationType.CAUSES)}
    finally:
        s.close()


def test_sqlite_refuses_newer_schema(tmp_path: Path) -> None:
    from graphmem.errors import SchemaVersionError

    s = open_sqlite(tmp_path)
    s.conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    s.close()
    with pytest.raises(SchemaVersionError):
        open_sqlite(tmp_path)


def test_sqlite_migration_hook_runs_missing_steps(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmem.store.sqlite import schema as sqlite_schema

    open_sqlite(tmp_path).close()
    ran: list[int] = []
    current = sqlite_schema.SCHEMA_VERSION
    monkeypatch.setitem(sqlite_schema.MIGRATIONS, current, lambda conn: ran.append(current))
    monkeypatch.setattr("graphmem.store.sqlite.store.migrate",
                        lambda conn: sqlite_schema.migrate(conn, current + 1))
    s = open_sqlite(tmp_path)
    try:
        assert ran == [current]
        assert sqlite_schema.current_version(s.conn) == current + 1
    finally:
        s.close()


def test_sqlite_v1_data_migrates_to_current(tmp_path: Path) -> None:
    """A folder written by schema 1 (before tier dynamics) opens, migrated, data intact."""
    import sqlite3

    from graphmem.store.sqlite import schema as sqlite_schema

    folder = tmp_path / "sqlite"
    folder.mkdir()
    conn = sqlite3.connect(folder / "graphmem.db", isolation_level=None)
    sqlite_schema.migrate(conn, 1)
    conn.execute(
        "INSERT INTO memories (id, namespace, content, kind, tier, base_importance, importance, "
        "created_at, updated_at, last_accessed_at, metadata, status, content_hash, keywords) "
        "VALUES ('old', 'contract', 'written by v1', 'memory', 'slow', 0.4, 0.4, 1, 1, 1, "
        "'{}', 'active', 'h', 'written v1')")
    conn.execute("INSERT INTO memory_fts (rowid, keywords, context_keywords, tags) "
                 "SELECT pk, keywords, '', '' FROM memories")
    conn.close()
    s = open_sqlite(tmp_path)
    try:
        assert sqlite_schema.current_version(s.conn) == sqlite_schema.SCHEMA_VERSION
        m = s.get_memories("contract", ["old"])["old"]
        assert (m.content, m.window_count, m.window_start) == ("written by v1", 0, None)
        assert (m.type, m.valid_from, m.valid_until, m.superseded_by) == (
            "observation", None, None, None)
        assert s.transition_counts("contract", T0) == []
    finally:
        s.close()


def test_sqlite_v5_data_gets_its_keyword_statistics_counted(tmp_path: Path) -> None:
    """Schema 6 keeps the BM25 statistics in tables (ADR 0018); a store written before has
    them counted once by the migration, the same as written from scratch."""
    from graphmem.store.sqlite import schema as sqlite_schema

    ms = [memory(i, keywords=["deploy fail migrat", "deploy", "tea coffe"][i % 3])
          for i in range(7)]
    ms[1].context_keywords = "deploy tea tea"
    s = open_sqlite(tmp_path)
    s.apply(WriteBatch(NS, memories=ms))
    s.apply(WriteBatch("other", memories=[memory(9, ns="other", keywords="deploy")]))
    want = s.keyword_stats(NS, ["deploy", "tea", "fail", "none"])
    assert (want[0].docs, want[0].df["deploy"], want[1].docs, want[1].df["tea"]) == (7, 5, 1, 1)
    s.conn.execute("DROP TABLE keyword_terms")
    s.conn.execute("DROP TABLE keyword_docs")
    s.conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    s.close()
    s = open_sqlite(tmp_path)
    try:
        assert sqlite_schema.current_version(s.conn) == sqlite_schema.SCHEMA_VERSION
        assert s.keyword_stats(NS, ["deploy", "tea", "fail", "none"]) == want
        assert s.keyword_stats("other", ["deploy"])[0].df == {"deploy": 1}
    finally:
        s.close()


def test_neo4j_seeds_come_from_its_vector_and_fulltext_indexes(
        request: pytest.FixtureRequest) -> None:
    """PROFILE of the two seed statements on a real Neo4j: the vector and full-text procedures
    serve them, no label scan of the vector or memory nodes does."""
    import os

    import neo4j

    from graphmem.cypher import load
    from tests.cypher.statements import parameters

    store = open_neo4j(request)
    try:
        store.apply(WriteBatch(NS, memories=[memory(i, keywords="deploy fail")
                                             for i in range(5)]))
        uri = request.getfixturevalue("neo4j_uri")
        auth = (os.environ.get("GRAPHMEM_NEO4J_USER", "neo4j"),
                os.environ.get("GRAPHMEM_NEO4J_PASSWORD", ""))
        cases = [
            (load("search/vector", "neo4j"), {
                "index": "content_vector", "fetch": 10, "vector": [float(x) for x in vec(1)],
                "namespace": NS, "statuses": ["active"], "tiers": None},
             "db.index.vector.queryNodes"),
            (load("search/keyword", "neo4j"), {
                "query": '"deploy"', "namespace": NS, "statuses": ["active"], "k": 5,
                "tiers": None}, "db.index.fulltext.queryNodes"),
        ]
        with neo4j.GraphDatabase.driver(uri, auth=auth) as driver, driver.session() as s:
            for statement, params, procedure in cases:
                params = {k: v for k, v in params.items() if k in parameters(statement)}
                summary = s.run("PROFILE " + statement.body, params).consume()
                steps = _plan_steps(summary.profile or {})
                operators = [op for op, _ in steps]
                details = [d for _, d in steps]
                assert any(op.startswith("ProcedureCall") for op in operators), operators
                assert any(procedure in d for d in details), details
                assert not any(op.startswith(("NodeByLabelScan", "AllNodesScan"))
                               for op in operators), operators
    finally:
        store.close()


def _plan_steps(plan: dict[str, Any]) -> list[tuple[str, str]]:
    """(operator, its arguments) of a Neo4j profile, depth first."""
    out = [(str(plan.get("operatorType", "")), str(plan.get("args", {})))]
    for child in plan.get("children") or []:
        out.extend(_plan_steps(child))
    return out


@pytest.mark.parametrize("writes", [12, pytest.param(200, marks=pytest.mark.slow)])
def test_neo4j_eight_replicas_writing_at_once_lose_and_duplicate_nothing(
        request: pytest.FixtureRequest, writes: int) -> None:
    """Eight facades on one Neo4j (as eight API replicas: no shared lock), ``writes`` each, at
    once: every write is there exactly once (8 x 200 takes ~4 minutes: marked slow)."""
    from concurrent.futures import ThreadPoolExecutor

    from graphmem import GraphMemory
    from tests.conftest import FakeEmbedder, _wipe_neo4j

    uri = request.getfixturevalue("neo4j_uri")
    _wipe_neo4j(uri)

    def replica(n: int) -> list[str]:
        with GraphMemory.open(uri, embedder=FakeEmbedder()) as mem:
            return [mem.store(f"replica {n} note {j}", namespace="busy",
                              session_id=f"r{n}").id for j in range(writes)]

    with ThreadPoolExecutor(8) as pool:
        ids = [i for batch in pool.map(replica, range(8)) for i in batch]
    assert len(ids) == len(set(ids)) == 8 * writes
    with GraphMemory.open(uri, embedder=FakeEmbedder()) as mem:
        stored = [m for page in mem.backend.iter_memories("busy", embeddings=False)
                  for m in page]
        assert len(stored) == 8 * writes and {m.id for m in stored} == set(ids)
        follows = [e for page in mem.backend.iter_edges("busy") for e in page
                   if e.type is RelationType.FOLLOWS]
        assert len(follows) == 8 * (writes - 1)  # each session chained exactly once


def test_neo4j_fresh_database_logs_no_warning_per_statement(
        request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture) -> None:
    """On an empty Neo4j, statements naming a property no node has yet (``seq``) made the
    driver log a warning for each one: an operator's log drowned in notices."""
    import logging

    from graphmem import GraphMemory
    from tests.conftest import Clock, FakeEmbedder, _wipe_neo4j

    uri = request.getfixturevalue("neo4j_uri")
    _wipe_neo4j(uri)
    caplog.set_level(logging.WARNING)
    with GraphMemory.open(uri, embedder=FakeEmbedder(), clock=Clock()) as mem:
        mem.store_many([{"content": f"turn {i}", "session_id": "s"} for i in range(3)],
                       namespace="quiet")
        mem.retrieve("turn", namespace="quiet")
    noisy = [r.getMessage()[:120] for r in caplog.records if r.name.startswith("neo4j")]
    assert noisy == []


def test_count_event_admits_up_to_the_limit_per_window(store: MemoryStore) -> None:
    """The counted window behind the tool-capture cap (issue 45): up to ``limit`` events
    per key and namespace; a refused event is not counted and does not move the window;
    the first event after the window ended opens a new one."""
    def count(key: str, seconds: float, ns: str = NS, limit: int = 2) -> bool:
        return store.count_event(ns, key, limit, 60, T0 + timedelta(seconds=seconds))

    assert [count("a", s) for s in (0, 10, 20, 59)] == [True, True, False, False]
    assert count("b", 20) and count("a", 20, ns="other")  # keys and namespaces apart
    assert count("a", 60) and count("a", 70)  # 60 s after the window opened: a new one
    assert not count("a", 119)
    assert count("a", 119, limit=3)  # the limit is the caller's, per call
    assert count("a", 125) and not count("a", 126, limit=1)
