"""The write path through the facade: validation, dedupe, relations, sessions, update, delete."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from graphmem import GraphMemory, RelationType, Tier
from graphmem.errors import (
    ConflictError,
    InvalidContentError,
    InvalidImportanceError,
    InvalidNamespaceError,
    InvalidRelationError,
    LimitExceededError,
    NotFoundError,
    ValidationError,
)
from graphmem.models import EdgeSource
from tests.conftest import Clock, FakeEmbedder

NS = "agent"


def total(mem: GraphMemory, ns: str = NS) -> int:
    return mem.stats(namespace=ns)["memories"]


def follows(mem: GraphMemory, ids: list[str]) -> set[tuple[str, str]]:
    return {(e.source_id, e.target_id) for i in ids
            for e in mem.relations(i, namespace=NS, types=["FOLLOWS"])}


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"content": ""}, InvalidContentError),
        ({"content": "   \n"}, InvalidContentError),
        ({"content": "x" * 32_001}, InvalidContentError),
        ({"content": "ok", "importance": 1.5}, InvalidImportanceError),
        ({"content": "ok", "importance": -0.1}, InvalidImportanceError),
        ({"content": "ok", "importance": float("nan")}, InvalidImportanceError),
        ({"content": "ok", "tier": "lukewarm"}, ValidationError),
        ({"content": "ok", "metadata": {"nested": {"a": 1}}}, ValidationError),
        ({"content": "ok", "relations": [("LIKES", "x")]}, InvalidRelationError),
        ({"content": "ok", "relations": [("FOLLOWS", "x")]}, InvalidRelationError),
        ({"content": "ok", "relations": [("CAUSES", "no-such-id")]}, NotFoundError),
        ({"content": "ok", "namespace": "bad namespace!"}, InvalidNamespaceError),
    ],
)
def test_bad_input_is_a_typed_error_and_writes_nothing(mem: GraphMemory, kwargs: dict,
                                                       error: type[Exception]) -> None:
    mem.store("an existing memory", namespace=NS)
    kwargs = {"namespace": NS, **kwargs}
    with pytest.raises(error):
        mem.store(**kwargs)
    assert total(mem) == 1


def test_one_bad_item_fails_the_whole_batch(mem: GraphMemory) -> None:
    with pytest.raises(InvalidContentError):
        mem.store_many([{"content": "good one"}, {"content": ""}, "also good"], namespace=NS)
    assert total(mem) == 0


def test_batch_size_is_bounded(tmp_path, fake_embedder) -> None:  # type: ignore[no-untyped-def]
    from graphmem.config import GraphMemConfig, WriteConfig

    cfg = GraphMemConfig(write=WriteConfig(max_batch=2))
    with GraphMemory.open(tmp_path, config=cfg, embedder=fake_embedder) as m, \
            pytest.raises(LimitExceededError):
        m.store_many(["a", "b", "c"], namespace=NS)


def test_tier_from_importance_unless_given(mem: GraphMemory) -> None:
    assert mem.store("hot", namespace=NS, importance=0.9).tier is Tier.FAST
    assert mem.store("warm", namespace=NS, importance=0.6).tier is Tier.MEDIUM
    assert mem.store("cool", namespace=NS, importance=0.35).tier is Tier.SLOW
    assert mem.store("cold", namespace=NS, importance=0.1).tier is Tier.GLACIAL
    assert mem.store("forced", namespace=NS, importance=0.1, tier="fast").tier is Tier.FAST


def test_exact_duplicate_reinforces_instead_of_twin(mem: GraphMemory, clock: Clock) -> None:
    a = mem.store("Alice likes green tea", namespace=NS, importance=0.4,
                  metadata={"k": "v"})
    clock.advance(hours=5)
    b = mem.store("  Alice likes   green tea ", namespace=NS, importance=0.7,
                  metadata={"k2": 2})
    assert b.id == a.id
    got = mem.get(a.id, namespace=NS)
    assert got.base_importance == 0.7
    assert got.last_accessed_at == clock.now  # decay age reset
    assert got.metadata == {"k": "v", "k2": 2}
    assert total(mem) == 1
    # duplicates inside one batch collapse too; another namespace keeps its own copy
    out = mem.store_many(["same text", "same text"], namespace=NS)
    assert out[0].id == out[1].id
    assert mem.store("Alice likes green tea", namespace="other").id != a.id


def test_relations_at_write_time_and_later(mem: GraphMemory) -> None:
    a = mem.store("the deploy failed", namespace=NS)
    b = mem.store("checkout timed out", namespace=NS,
                  relations=[{"type": "CAUSES", "target": a.id, "direction": "in"}])
    c = mem.store("runbook for deploys", namespace=NS, relations=[("references", a.id)])
    rels = {(e.source_id, e.type.value, e.target_id) for e in mem.relations(a.id, namespace=NS)}
    assert rels == {(a.id, "CAUSES", b.id), (c.id, "REFERENCES", a.id)}
    r = mem.relate(b.id, c.id, "CONTRADICTS", namespace=NS)
    assert r.source is EdgeSource.EXPLICIT
    mem.unrelate(b.id, c.id, "CONTRADICTS", namespace=NS)
    with pytest.raises(NotFoundError):
        mem.unrelate(b.id, c.id, "CONTRADICTS", namespace=NS)
    with pytest.raises(InvalidRelationError):
        mem.relate(a.id, a.id, "CAUSES", namespace=NS)


def test_relation_across_namespaces_looks_like_missing(mem: GraphMemory) -> None:
    mine = mem.store("mine", namespace=NS)
    theirs = mem.store("theirs", namespace="tenant-b")
    with pytest.raises(NotFoundError) as err:
        mem.relate(mine.id, theirs.id, "CAUSES", namespace=NS)
    assert "not found in namespace 'agent'" in str(err.value)
    with pytest.raises(NotFoundError):
        mem.get(theirs.id, namespace=NS)
    assert mem.relations(theirs.id, namespace="tenant-b") == []


def test_batch_relations_may_point_inside_the_batch(mem: GraphMemory) -> None:
    out = mem.store_many([{"id": "cause-1", "content": "disk full"},
                          {"content": "db crashed", "relations": [("CAUSES", "cause-1")]}],
                         namespace=NS)
    assert out[0].id == "cause-1"
    assert [e.target_id for e in mem.relations(out[1].id, namespace=NS)] == ["cause-1"]
    with pytest.raises(ConflictError):
        mem.store("again", namespace=NS, id="cause-1")


def test_similar_to_edges_are_automatic_above_threshold(mem: GraphMemory) -> None:
    a = mem.store("postgres migration locked the invoices table", namespace=NS)
    b = mem.store("postgres migration locked the invoices table again today", namespace=NS)
    c = mem.store("Alice likes tea", namespace=NS)
    sims = [e for e in mem.relations(b.id, namespace=NS) if e.type is RelationType.SIMILAR_TO]
    assert [(e.source_id, e.target_id) for e in sims] == [(b.id, a.id)]
    assert sims[0].source is EdgeSource.AUTO and 0.75 <= (sims[0].score or 0.0) <= 1.0
    assert mem.relations(c.id, namespace=NS) == []


def test_follows_chain_in_session_order(mem: GraphMemory, clock: Clock) -> None:
    t = clock.now
    first = mem.store_many([{"content": f"turn {i} text", "session_id": "s1",
                             "created_at": t + timedelta(minutes=i)} for i in (0, 2)],
                           namespace=NS)
    later = mem.store("turn 4 text", namespace=NS, session_id="s1",
                      created_at=t + timedelta(minutes=4))
    middle = mem.store("turn 1 text", namespace=NS, session_id="s1",
                       created_at=t + timedelta(minutes=1))
    ids = [first[0].id, middle.id, first[1].id, later.id]
    assert follows(mem, ids) == {(ids[0], ids[1]), (ids[1], ids[2]), (ids[2], ids[3])}
    # the spliced memory's context is its predecessor + itself; its successor's changed too
    succ = mem.get(first[1].id, namespace=NS)
    assert succ.context_keywords.split()[:6] == ["turn", "1", "text", "turn", "2", "text"]
    assert mem.get(first[0].id, namespace=NS).context_keywords == ""  # first turn: no context
    # delete re-links the chain
    mem.delete(middle.id, namespace=NS)
    assert follows(mem, [ids[0], ids[2], ids[3]]) == {(ids[0], ids[2]), (ids[2], ids[3])}
    assert mem.timeline(ids[2], namespace=NS, before=5, after=5)[0].id == ids[0]


def test_update_reembeds_and_reindexes(mem: GraphMemory, fake_embedder) -> None:  # type: ignore[no-untyped-def]
    a = mem.store("the cache is cold", namespace=NS, importance=0.5)
    calls = fake_embedder.calls
    m = mem.update(a.id, namespace=NS, content="the cache is warm now", importance=0.9,
                   metadata={"checked": True})
    assert fake_embedder.calls > calls
    assert m.content == "the cache is warm now" and m.base_importance == 0.9
    assert [r.memory.id for r in mem.retrieve("warm", namespace=NS)] == [a.id]
    assert mem.retrieve("cold", namespace=NS, min_similarity=0.99) == []
    with pytest.raises(InvalidContentError):
        mem.update(a.id, namespace=NS, content="")
    assert mem.get(a.id, namespace=NS).content == "the cache is warm now"


def test_delete_is_explicit_and_removes_edges(mem: GraphMemory) -> None:
    a = mem.store("alpha", namespace=NS)
    b = mem.store("beta", namespace=NS, relations=[("CAUSES", a.id)])
    mem.delete(a.id, namespace=NS)
    with pytest.raises(NotFoundError):
        mem.get(a.id, namespace=NS)
    assert mem.relations(b.id, namespace=NS) == []
    with pytest.raises(NotFoundError):
        mem.delete(a.id, namespace=NS)
    with pytest.raises(NotFoundError):
        mem.delete(b.id, namespace="other")
    assert total(mem) == 1


def test_context_vector_is_the_weighted_sum_of_the_two_memories(
        mem: GraphMemory, fake_embedder: FakeEmbedder, clock: Clock) -> None:
    """ADR 0015: one embedding per written memory; the context vector comes from the
    predecessor's stored vector and the memory's own, also across batches."""
    from graphmem.engine.writes import PREDECESSOR_WEIGHT, context_text, mean_vector

    first = mem.store("the nightly backup job failed at 02:00", namespace=NS, session_id="s")
    clock.advance(minutes=1)
    calls = fake_embedder.calls
    second = mem.store("disk quota on the backup volume was exhausted", namespace=NS,
                       session_id="s")
    assert fake_embedder.calls == calls + 1  # the memory's own text only
    a, b = (mem.backend.get_memories(NS, [m.id], embeddings=True)[m.id]
            for m in (first, second))
    assert b.context_embedding is not None and a.embedding is not None
    assert b.embedding is not None
    expected = mean_vector(a.embedding, b.embedding)
    assert np.allclose(b.context_embedding, expected, atol=1e-5)
    joined = fake_embedder.embed([context_text(a.content, b.content)])[0]
    assert not np.allclose(b.context_embedding, joined, atol=1e-3)
    assert PREDECESSOR_WEIGHT == 2.0  # the value ADR 0015 measured


def test_context_vector_from_the_joined_text_when_asked(tmp_path, fake_embedder,  # type: ignore[no-untyped-def]
                                                        clock: Clock) -> None:
    from graphmem.config import GraphMemConfig, WriteConfig
    from graphmem.engine.writes import context_text

    cfg = GraphMemConfig(write=WriteConfig(context_embedding="text"))
    with GraphMemory.open(tmp_path, config=cfg, clock=clock, embedder=fake_embedder) as mem:
        first = mem.store("the nightly backup job failed", namespace=NS, session_id="s")
        calls = fake_embedder.calls
        second = mem.store("the backup volume was full", namespace=NS, session_id="s")
        assert fake_embedder.calls == calls + 2  # the memory, then "predecessor + memory"
        got = mem.backend.get_memories(NS, [second.id], embeddings=True)[second.id]
        assert got.context_embedding is not None
        joined = fake_embedder.embed([context_text(first.content, second.content)])[0]
        assert np.allclose(got.context_embedding, joined, atol=1e-5)
