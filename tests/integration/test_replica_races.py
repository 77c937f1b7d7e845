"""Replicas never lose an acknowledged write (issue 45): writers with connections of their own
on one graph database - as API replicas are - race on the same explicit id, the same content,
overlapping batches and one session. Every acknowledged write is readable afterwards with its
own content; the losers get a ConflictError (409) or a reinforcement; no twins.

Here each writer is a ``GraphMemory`` of its own in a thread (its own driver and its own
in-process lock, so nothing but the database orders them); ``test_replica_processes.py``
races ``graphmem serve`` processes."""

from __future__ import annotations

import itertools
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.config import GraphMemConfig, StoreConfig
from graphmem.errors import ConflictError
from tests.conftest import FakeEmbedder, fresh_graph

WRITERS = 4
ROUNDS = 3
NS = "race"


@pytest.fixture(params=["falkordb", "neo4j"])
def writers(request: pytest.FixtureRequest) -> Iterator[list[GraphMemory]]:
    target, graph = fresh_graph(request, request.param)
    config = GraphMemConfig(store=StoreConfig(falkordb_graph=graph) if graph else StoreConfig())
    mems = [GraphMemory.open(target, config=config, embedder=FakeEmbedder())
            for _ in range(WRITERS)]
    yield mems
    for m in mems:
        m.close()


def race(mems: list[GraphMemory], work: Callable[[int, GraphMemory], Any]) -> list[Any]:
    """Every writer runs ``work(i, mem)`` at the same moment; results (or exceptions)."""
    gate = threading.Barrier(len(mems))
    out: list[Any] = [None] * len(mems)

    def go(i: int) -> None:
        gate.wait()
        try:
            out[i] = work(i, mems[i])
        except Exception as exc:  # the test reads what each writer got
            out[i] = exc

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(mems))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def test_one_explicit_id_one_winner(writers: list[GraphMemory]) -> None:
    for r in range(ROUNDS):
        rid = f"race-{r}-{uuid.uuid4().hex[:8]}"
        def claim(i: int, m: GraphMemory, rid: str = rid) -> Any:
            return m.store(f"writer {i} claims {rid}", namespace=NS, id=rid)

        got = race(writers, claim)
        won = [i for i, g in enumerate(got) if not isinstance(g, Exception)]
        assert len(won) == 1, got
        assert all(isinstance(g, ConflictError) for g in got if isinstance(g, Exception)), got
        stored = writers[0].get(rid, namespace=NS)
        assert stored.content == f"writer {won[0]} claims {rid}"  # the acknowledged one
        assert [s.event for s in writers[0].history(rid, namespace=NS)] == ["created"]


def test_the_same_content_is_one_memory(writers: list[GraphMemory]) -> None:
    for r in range(ROUNDS):
        text = f"round {r} {uuid.uuid4().hex} the cache service note"
        def twin(i: int, m: GraphMemory, text: str = text) -> Any:
            return m.store(text, namespace=NS, importance=0.1 + i / 10)

        got = race(writers, twin)
        assert not [g for g in got if isinstance(g, Exception)], got
        assert len({g.id for g in got}) == 1, got  # every writer was answered with the one
        same = [m for m in writers[0].list_memories(namespace=NS, limit=1000)
                if m.content == text]
        assert len(same) == 1
        # racing reinforcements each merge what they read: the importance is one a writer
        # gave (the highest when they do not overlap; README, "Replicas")
        given = {round(0.1 + i / 10, 6) for i in range(WRITERS)}
        assert round(same[0].base_importance, 6) in given


def test_overlapping_batches_make_no_twins(writers: list[GraphMemory]) -> None:
    shared = [f"shared fact {k} {uuid.uuid4().hex}" for k in range(4)]
    got = race(writers, lambda i, m: m.store_many(
        [*shared, f"only writer {i} says this {uuid.uuid4().hex}"], namespace=NS))
    assert not [g for g in got if isinstance(g, Exception)], got
    for k, text in enumerate(shared):
        assert len({batch[k].id for batch in got}) == 1
        assert [m.content for m in writers[0].list_memories(namespace=NS, limit=1000)
                ].count(text) == 1
    own = {batch[-1].id for batch in got}
    assert len(own) == WRITERS and all(writers[0].get(i, namespace=NS) for i in own)


def test_relations_written_twice_at_once_are_one_edge(writers: list[GraphMemory]) -> None:
    a = writers[0].store("the deploy failed", namespace=NS)
    b = writers[0].store("the migration locked the users table", namespace=NS)
    for _ in range(ROUNDS):
        race(writers, lambda i, m: m.relate(b.id, a.id, "CAUSES", namespace=NS))
        edges = [e for e in writers[0].relations(a.id, namespace=NS, types=["CAUSES"])]
        assert len(edges) == 1, edges


def test_one_session_spliced_by_several_writers_stays_one_chain(
        writers: list[GraphMemory]) -> None:
    from datetime import UTC, datetime, timedelta

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for r in range(ROUNDS):
        sid = f"s{r}"
        def turn(i: int, m: GraphMemory, sid: str = sid) -> Any:
            return m.store(f"turn {i} of session {sid} {uuid.uuid4().hex}", namespace=NS,
                           session_id=sid, created_at=t0 + timedelta(minutes=i))

        got = race(writers, turn)
        assert not [g for g in got if isinstance(g, Exception)], got
        order = [g.id for g in got]  # created_at order is writer order
        follows = {(e.source_id, e.target_id) for m in order
                   for e in writers[0].relations(m, namespace=NS, types=["FOLLOWS"])}
        assert follows == set(itertools.pairwise(order)), (order, follows)
