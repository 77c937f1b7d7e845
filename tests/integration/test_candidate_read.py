"""Retrieval ranks light candidates and reads whole only the memories it returns (ADR 0041):
the results hold the whole records, as before, and a memory deleted between the two reads
drops out instead of failing the search."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.models import Candidate
from graphmem.store.sqlite.store import SQLiteStore

NS = "ops"


@pytest.fixture
def filled(mem: GraphMemory) -> list[str]:
    ids = [mem.store(f"deploy {i} failed on host {i % 7} with error code {i}", namespace=NS,
                     metadata={"n": i}, source="alice" if i % 2 else "bob",
                     session_id=f"s{i % 3}").id for i in range(40)]
    return ids


def test_only_the_returned_memories_are_read_whole(mem: GraphMemory, filled: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store = mem.backend
    asked: list[list[str]] = []
    ranked: list[int] = []
    whole, scored = store.get_memories, store.get_scored

    def get_memories(ns: str, ids: Any, **kw: Any) -> Any:
        asked.append(list(ids))
        return whole(ns, ids, **kw)

    def get_scored(ns: str, ids: Any, vector: Any) -> Any:
        found, sims = scored(ns, ids, vector)
        assert all(isinstance(c, Candidate) for c in found.values())
        ranked.append(len(found))
        return found, sims

    monkeypatch.setattr(store, "get_memories", get_memories)
    monkeypatch.setattr(store, "get_scored", get_scored)
    results = mem.retrieve("why did the deploy fail on host 3", namespace=NS, limit=4,
                           record_access=False)
    if not asked:  # a server's adapter reads whole records in its one round trip
        assert not isinstance(store, SQLiteStore)
        return
    assert len(results) == 4 and ranked and ranked[0] > 4
    assert [sorted(a) for a in asked] == [sorted(r.memory.id for r in results)]
    for r in results:  # the whole record, as a read of it gives
        assert r.memory == whole(NS, [r.memory.id])[r.memory.id]
        assert r.memory.content.startswith("deploy ") and r.memory.metadata


def test_a_memory_deleted_after_ranking_drops_out(mem: GraphMemory, filled: list[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    query = "why did the deploy fail on host 3"
    before = [r.memory.id for r in mem.retrieve(query, namespace=NS, limit=5,
                                                record_access=False)]
    store = mem.backend
    whole, scored = store.get_memories, store.get_scored

    def light(ns: str, ids: Any, vector: Any) -> Any:  # as the embedded store answers
        found, sims = scored(ns, ids, vector)
        return {i: replace(c, memory=None) for i, c in found.items()}, sims

    def gone(ns: str, ids: Any, **kw: Any) -> Any:  # the first result deleted meanwhile
        return {i: m for i, m in whole(ns, ids, **kw).items() if i != before[0]}

    monkeypatch.setattr(store, "get_scored", light)
    monkeypatch.setattr(store, "get_memories", gone)
    mem.core.generation[NS] += 1  # as a write would: the hot cache does not answer
    after = [r.memory.id for r in mem.retrieve(query, namespace=NS, limit=5, record_access=False)]
    assert before[0] not in after and after == [i for i in before if i != before[0]]


def test_a_record_from_before_reinforced_at_ranks_from_its_last_access(tmp_path: Any) -> None:
    """A row an older graphmem wrote (no ``reinforced_at``) gives the candidate
    the fallbacks the whole record gets: the decay age counts from the last access."""
    import numpy as np

    from graphmem.models import Memory
    from graphmem.store.base import WriteBatch

    store = SQLiteStore(tmp_path, dim=4)
    store.open()
    try:
        vec = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
        store.apply(WriteBatch(NS, memories=[
            Memory(id="old", namespace=NS, content="x", embedding=vec, keywords="deploy"),
            Memory(id="new", namespace=NS, content="y", embedding=vec, keywords="deploy")]))
        store.conn.execute("UPDATE memories SET reinforced_at = NULL, "
                           "last_accessed_at = 1700000000 WHERE id = 'old'")
        found, _ = store.get_scored(NS, ["old", "new"], vec)
        whole = store.get_memories(NS, ["old", "new"])
        for i in ("old", "new"):
            assert replace(found[i], memory=None) == replace(Candidate.of(whole[i]),
                                                             memory=None)
        assert found["old"].reinforced_at.timestamp() == 1700000000
    finally:
        store.close()



@pytest.mark.parametrize("kind, expected", [("memory", "observation"), ("summary", "summary")])
def test_a_record_from_before_memory_types_is_an_observation_or_a_summary(
        kind: str, expected: str) -> None:
    """A record without ``type`` (a graph engine's node or an export from before memory
    types; SQLite's migration filled the column) decodes as an observation, or as a
    summary when it is one, whole and as a candidate alike (ADR 0013)."""
    from graphmem.models import Kind, Memory
    from graphmem.store import codec

    flat = codec.flatten(Memory(id="m1", namespace=NS, content="x", kind=Kind(kind),
                                type="decision"))
    flat["type"] = None
    assert codec.unflatten(flat).type == expected
    assert codec.candidate_row([flat[n] for n in codec.CANDIDATE_FIELDS]).type == expected
