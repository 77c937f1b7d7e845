"""Retrieval pipeline behaviour through the facade (fake embedder: mechanics, not quality)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.errors import LimitExceededError, NotFoundError, ValidationError
from graphmem.models import RetrievalResult, Status
from graphmem.store.base import WriteBatch
from tests.conftest import Clock

NS = "ops"


@pytest.fixture
def incident(mem: GraphMemory) -> dict[str, str]:
    ids = {}
    ids["deploy"] = mem.store("deploy failed migration locked users table", namespace=NS,
                              importance=0.7).id
    ids["fix"] = mem.store("split work into small batches", namespace=NS, importance=0.6).id
    ids["tea"] = mem.store("Alice prefers tea over coffee", namespace=NS, importance=0.4).id
    mem.relate(ids["deploy"], ids["fix"], "CAUSES", namespace=NS)
    return ids


def ids_of(results: list[RetrievalResult]) -> list[str]:
    return [r.memory.id for r in results]


def test_walk_brings_the_caused_memory_with_its_path(mem: GraphMemory,
                                                     incident: dict[str, str]) -> None:
    results = mem.retrieve("why did the deploy fail", namespace=NS, limit=3)
    assert ids_of(results)[0] == incident["deploy"]
    fix = next(r for r in results if r.memory.id == incident["fix"])
    assert str(fix.path) == f"seed {incident['deploy'][:8]} -[CAUSES]-> {incident['fix'][:8]}"
    assert fix.terms["walk"] > 0 and fix.terms["keyword"] == 0
    assert incident["tea"] not in ids_of(results)  # below min_similarity, no keyword, unlinked
    assert incident["fix"] not in ids_of(
        mem.retrieve("why did the deploy fail", namespace=NS, depth=0))


def test_results_carry_every_term(mem: GraphMemory, incident: dict[str, str]) -> None:
    r = mem.retrieve("deploy failed", namespace=NS)[0]
    assert set(r.terms) >= {"semantic", "keyword", "importance", "recency", "graph",
                            "popularity", "relevance", "walk", "follows", "tier", "source"}
    assert r.path.is_seed and str(r.path) == "seed"
    assert r.to_dict()["path"]["text"] == "seed"


def test_disputed_flag(mem: GraphMemory) -> None:
    a = mem.store("billing runs on postgres 15", namespace=NS)
    b = mem.store("billing runs on postgres 14", namespace=NS)
    c = mem.store("billing invoices are monthly", namespace=NS)
    mem.relate(b.id, a.id, "CONTRADICTS", namespace=NS)
    got = {r.memory.id: r for r in mem.retrieve("billing postgres", namespace=NS)}
    assert got[a.id].disputed and got[a.id].disputed_by == (b.id,)
    assert got[b.id].disputed
    assert not got[c.id].disputed


def test_tier_filter_and_archived_are_excluded(mem: GraphMemory) -> None:
    hot = mem.store("cache warmup plan", namespace=NS, importance=0.9)
    cold = mem.store("cache eviction plan", namespace=NS, importance=0.1)
    old = mem.store("cache sizing plan", namespace=NS, importance=0.5)
    assert ids_of(mem.retrieve("cache plan", namespace=NS, tiers=["glacial"])) == [cold.id]
    archived = mem.get(old.id, namespace=NS).copy(status=Status.ARCHIVED)
    archived.embedding = None
    mem.backend.apply(WriteBatch(NS, memories=[archived]))
    got = ids_of(mem.retrieve("cache plan", namespace=NS))
    assert old.id not in got and {hot.id, cold.id} <= set(got)


def test_strategies(mem: GraphMemory) -> None:
    mem.store("plan for the cache cluster rollout", namespace=NS, importance=0.1)  # glacial
    fast = mem.store("cache", namespace=NS, importance=0.9)  # fast, weaker match
    ff = mem.retrieve("plan for the cache cluster rollout", namespace=NS,
                      strategy="fast_first")
    assert ff[0].memory.id == fast.id
    comp = mem.retrieve("plan for the cache cluster rollout", namespace=NS,
                        strategy="comprehensive")
    assert comp[0].memory.id != fast.id
    assert all(r.terms["tier"] == 0 for r in comp)
    weighted = mem.retrieve("cache", namespace=NS, strategy="weighted")
    tier_terms = {r.memory.id: r.terms["tier"] for r in weighted}
    slow_id = next(i for i in tier_terms if i != fast.id)  # glacial, promoted by now
    assert tier_terms[fast.id] > tier_terms[slow_id] > 0
    with pytest.raises(ValidationError):
        mem.retrieve("cache", namespace=NS, strategy="random")


def test_access_bookkeeping(mem: GraphMemory, clock: Clock, incident: dict[str, str]) -> None:
    clock.advance(hours=2)
    results = mem.retrieve("deploy failed", namespace=NS, limit=2)
    assert results[0].memory.access_count == 1
    stored = mem.get(results[0].memory.id, namespace=NS)
    assert stored.access_count == 1 and stored.last_accessed_at == clock.now
    mem.search_index("deploy failed", namespace=NS)
    assert mem.get(results[0].memory.id, namespace=NS).access_count == 1  # previews: no


def test_filters(mem: GraphMemory) -> None:
    a = mem.store("rollout notes", namespace=NS, source="alice", metadata={"team": "web"})
    b = mem.store("rollout notes v2", namespace=NS, source="bob", metadata={"team": "db"})
    assert ids_of(mem.retrieve("rollout notes", namespace=NS,
                               filters={"source": "bob"})) == [b.id]
    assert ids_of(mem.retrieve("rollout notes", namespace=NS,
                               filters={"metadata": {"team": "web"}})) == [a.id]
    with pytest.raises(ValidationError):
        mem.retrieve("rollout", namespace=NS, filters={"colour": "red"})


def test_named_source_is_boosted(mem: GraphMemory) -> None:
    a = mem.store("I went hiking last weekend", namespace=NS, source="Caroline")
    b = mem.store("I went hiking last weekend too", namespace=NS, source="Melanie")
    got = {r.memory.id: r for r in mem.retrieve("where did Melanie go hiking", namespace=NS)}
    assert got[b.id].terms["source"] == 1.0 and got[a.id].terms["source"] == 0.0


def test_follows_neighbours_share_relevance(mem: GraphMemory, clock: Clock) -> None:
    t = clock.now
    turns = mem.store_many(
        [{"content": text, "session_id": "chat", "created_at": t + timedelta(minutes=i)}
         for i, text in enumerate(["what should we name the dog",
                                   "maybe Biscuit", "lunch was good"])], namespace=NS)
    got = {r.memory.id: r for r in mem.retrieve("dog name", namespace=NS, min_similarity=-1)}
    assert got[turns[1].id].terms["follows"] > 0
    assert got[turns[1].id].terms["follows"] > got[turns[2].id].terms["follows"]


def test_bounds_and_bad_queries(mem: GraphMemory, incident: dict[str, str]) -> None:
    bounds: list[dict[str, Any]] = [{"limit": 0}, {"limit": 101}, {"depth": 3}, {"depth": -1}]
    for kwargs in bounds:
        with pytest.raises(LimitExceededError):
            mem.retrieve("deploy", namespace=NS, **kwargs)
    with pytest.raises(ValidationError):
        mem.retrieve("   ", namespace=NS)
    with pytest.raises(ValidationError):
        mem.retrieve("deploy", namespace=NS, min_similarity=2)
    assert mem.retrieve("deploy", namespace="empty-namespace") == []


def test_namespaces_never_mix(mem: GraphMemory, incident: dict[str, str]) -> None:
    mem.store("deploy failed in the other tenant", namespace="tenant-b")
    got = mem.retrieve("deploy failed", namespace=NS)
    assert all(r.memory.namespace == NS for r in got)


def test_progressive_disclosure(mem: GraphMemory, clock: Clock) -> None:
    long_text = "incident review: " + "the queue backed up and retries amplified load " * 5
    anchor = None
    ids = []
    for i in range(5):
        m = mem.store(f"{long_text} step {i}" if i == 2 else f"standup note {i}",
                      namespace=NS, session_id="day1",
                      created_at=clock.now + timedelta(minutes=i))
        ids.append(m.id)
        if i == 2:
            anchor = m
    assert anchor is not None
    index = mem.search_index("queue backed up retries", namespace=NS, limit=3)
    top = index[0]
    assert top.id == anchor.id and len(top.preview) <= 80 and top.preview.endswith("…")
    assert top.token_estimate == (len(anchor.content) + 3) // 4
    window = mem.timeline(anchor.id, namespace=NS, before=1, after=2)
    assert [m.id for m in window] == ids[1:5]
    full = mem.entries([ids[4], anchor.id], namespace=NS)
    assert [m.id for m in full] == [ids[4], anchor.id] and full[1].content == anchor.content
    with pytest.raises(NotFoundError):
        mem.entries([anchor.id, "nope"], namespace=NS)


def test_keyword_seeds_take_the_newest_matches_only_over_the_postings_budget(
        tmp_path: Any, fake_embedder: Any) -> None:
    """A term in more memories than ``seed_postings`` would make the full-text engine score
    every posting (time linear in the namespace): the store is asked for its newest matches
    then, and only then (ADR 0011)."""
    from graphmem.config import GraphMemConfig, TuningConfig

    config = GraphMemConfig(tuning=TuningConfig(seed_postings=3))
    mem = GraphMemory.open(str(tmp_path / "d"), embedder=fake_embedder, config=config)
    try:
        for i in range(5):
            mem.store(f"deploy number {i} went out", namespace=NS)
        mem.store("rollback of the deploy", namespace=NS)
        asked: list[tuple[list[str], bool, int]] = []
        real = mem.backend.keyword_candidates

        def spy(ns: str, terms: Any, k: int, **kw: Any) -> Any:
            asked.append((list(terms), kw["newest"], k))
            return real(ns, terms, k, **kw)

        mem.backend.keyword_candidates = spy  # type: ignore[method-assign,assignment]
        mem.retrieve("rollback deploy", namespace=NS)
        mem.retrieve("deploy", namespace=NS)
        pool = mem.backend.keyword_pool  # the store's own (ADR 0038)
        assert asked == [(["rollback"], False, pool), (["deploy"], True, 200)]
        got = mem.retrieve("deploy", namespace=NS, depth=0)
        assert got and all("deploy" in r.memory.content for r in got if r.terms["keyword"])
    finally:
        mem.close()
