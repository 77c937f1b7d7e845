"""What agents remember (issue 12, ADR 0013) through the facade, on every adapter: memory
types, history, listing, event-time filters, streams, validity, consensus and dissent, tool
capture, the hot cache, delete_all."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem import GraphMemory
from graphmem.errors import ConflictError, NotFoundError, ValidationError
from graphmem.models import Tier
from tests.conftest import Clock

NS = "agents"


def test_types_enter_with_their_defaults_and_filter(mem: GraphMemory) -> None:
    tool = mem.store("agent ran pytest on the deploy branch", namespace=NS, type="tool_usage")
    done = mem.store("we decided to deploy on tuesdays", namespace=NS, type="decision")
    plain = mem.store("the deploy branch is green", namespace=NS)
    told = mem.store("deploy checklist pattern", namespace=NS, type="pattern", tier="fast",
                     importance=0.9)
    assert (tool.type, tool.tier, tool.importance) == ("tool_usage", Tier.FAST, 0.3)
    assert (done.type, done.tier, done.importance) == ("decision", Tier.MEDIUM, 0.7)
    assert (plain.type, plain.importance) == ("observation", 0.5)
    assert (told.tier, told.importance) == (Tier.FAST, 0.9)  # the caller's word wins
    assert mem.get(done.id, namespace=NS).type == "decision"
    hits = mem.retrieve("deploy", namespace=NS, filters={"type": ["decision", "pattern"]})
    assert {h.memory.id for h in hits} == {done.id, told.id}
    page = mem.list_page(namespace=NS, type="tool_usage")
    assert [m.id for m in page.items] == [tool.id] and page.next_cursor is None
    for bad in ("Decision", "a b", "", "x" * 41):
        with pytest.raises(ValidationError):
            mem.store("nothing is written", namespace=NS, type=bad)
    with pytest.raises(ValidationError, match="unknown memory field"):
        mem.store("nothing is written", namespace=NS, pin=True)  # pinned= is the field
    assert len(mem.list_page(namespace=NS, limit=100).items) == 4


def test_history_keeps_every_version_and_change(mem: GraphMemory, clock: Clock) -> None:
    m = mem.store("the release train leaves on Tuesday", namespace=NS)
    clock.advance(hours=1)
    mem.update(m.id, namespace=NS, content="the release train leaves on Wednesday")
    clock.advance(hours=1)
    mem.update(m.id, namespace=NS, importance=0.9, type="decision")
    clock.advance(hours=1)
    mem.update(m.id, namespace=NS, content="the release train leaves on Thursday")
    mem.update(m.id, namespace=NS, content="the release train leaves on Thursday")  # no-op
    h = mem.history(m.id, namespace=NS)
    assert [(e.event, e.content) for e in h] == [
        ("created", "the release train leaves on Tuesday"),
        ("update", "the release train leaves on Wednesday"),
        ("update", None),
        ("update", "the release train leaves on Thursday")]
    assert "importance" in h[2].reason and "type" in h[2].reason
    assert [e.at for e in h] == sorted(e.at for e in h)
    assert mem.get(m.id, namespace=NS).type == "decision"
    mem.delete(m.id, namespace=NS)
    with pytest.raises(NotFoundError):
        mem.history(m.id, namespace=NS)


def test_event_time_filters_streams_and_cursors(mem: GraphMemory, clock: Clock) -> None:
    now = clock()
    old = mem.store("postgres upgrade planned for spring", namespace=NS, source="dba",
                    created_at=now - timedelta(days=40))
    new = mem.store("postgres upgrade moved to autumn", namespace=NS, source="dba",
                    created_at=now - timedelta(days=2))
    other = mem.store("postgres upgrade needs a maintenance window", namespace=NS,
                      source="ops", created_at=now - timedelta(days=1))
    since = now - timedelta(days=10)
    assert {h.memory.id for h in mem.retrieve("postgres upgrade", namespace=NS,
                                              since=since)} == {new.id, other.id}
    assert {h.memory.id for h in mem.retrieve("postgres upgrade", namespace=NS,
                                              filters={"until": since})} == {old.id}
    first = mem.stream("dba", namespace=NS, limit=1)
    assert [m.id for m in first.items] == [old.id] and first.next_cursor
    second = mem.stream("dba", namespace=NS, limit=1, cursor=first.next_cursor)
    assert [m.id for m in second.items] == [new.id] and second.next_cursor is None
    assert [m.id for m in mem.stream("dba", namespace=NS, since=since).items] == [new.id]
    with pytest.raises(ValidationError, match="cursor"):
        mem.list_page(namespace=NS, sort="importance", cursor=first.next_cursor)
    with pytest.raises(ValidationError):
        mem.list_page(namespace=NS, sort="content")


def test_summarize_an_agents_stream(mem: GraphMemory, clock: Clock) -> None:
    for i, text in enumerate(["the build broke on the arm runners",
                              "the arm runners lacked the cuda toolkit",
                              "installed the toolkit and the build is green"]):
        mem.store(text, namespace=NS, source="ci-bot", created_at=clock() + timedelta(i))
    mem.store("lunch is at noon", namespace=NS, source="someone-else")
    s = mem.summarize(namespace=NS, agent="ci-bot")
    stream = [m.id for m in mem.stream("ci-bot", namespace=NS).items]
    assert list(s.ids) == stream and len(stream) == 3
    assert s.text.startswith("3 memories") and "runners" in s.text
    assert mem.summarize(namespace=NS, agent="nobody").ids == ()
    with pytest.raises(ValidationError):
        mem.summarize(namespace=NS)


def test_supersede_closes_validity_and_as_of_sees_the_past(mem: GraphMemory,
                                                          clock: Clock) -> None:
    t0 = clock()
    a = mem.store("the office wifi password is hunter2", namespace=NS,
                  created_at=t0 - timedelta(days=30))
    b = mem.store("the office wifi password is swordfish", namespace=NS,
                  created_at=t0 - timedelta(days=1))
    mem.relate(b.id, a.id, "CONTRADICTS", namespace=NS)
    closed = mem.supersede(a.id, b.id, namespace=NS)
    assert (closed.valid_until, closed.superseded_by) == (b.created_at, b.id)
    stored = mem.get(a.id, namespace=NS)
    assert (stored.valid_until, stored.superseded_by) == (b.created_at, b.id)
    kinds = {(r.type.value, r.source_id, r.target_id) for r in mem.relations(a.id,
                                                                              namespace=NS)}
    assert ("REFERENCES", b.id, a.id) in kinds
    assert not any(k[0] == "CONTRADICTS" for k in kinds)  # the dispute is resolved
    assert mem.history(a.id, namespace=NS)[-1].event == "supersede"
    hits = mem.retrieve("office wifi password", namespace=NS, record_access=False)
    assert [h.memory.id for h in hits] == [b.id, a.id]
    assert hits[1].terms.get("invalid") == 1.0 and "invalid" not in hits[0].terms
    then = mem.retrieve("office wifi password", namespace=NS, as_of=t0 - timedelta(days=10),
                        record_access=False)
    assert [h.memory.id for h in then] == [a.id]
    with pytest.raises(ConflictError):
        mem.supersede(a.id, b.id, namespace=NS)
    with pytest.raises(ValidationError):
        mem.store("bad period", namespace=NS, valid_from=t0, valid_until=t0)


def test_consensus_dissent_and_similar_topics(mem: GraphMemory) -> None:
    e = mem.store("benchmarks show postgres handles our write load", namespace=NS)
    c = mem.record_consensus("database choice for the ledger", "use postgres",
                             namespace=NS, participants=["claude", "gpt"], confidence=0.9,
                             evidence_ids=[e.id])
    d = mem.record_dissent("database choice for the ledger", "gemini",
                           "a document store fits the ledger better", namespace=NS,
                           against=c.id)
    mem.record_consensus("lunch venue", "the thai place", namespace=NS)
    assert (c.type, c.tier, c.metadata["participants"]) == ("consensus", Tier.SLOW,
                                                             "claude, gpt")
    assert (d.type, d.source) == ("dissent", "gemini")
    found = mem.find_similar("database choice for the ledger", namespace=NS, limit=3)
    assert found[0].consensus.id == c.id
    assert [m.id for m in found[0].dissent] == [d.id]
    assert all(r.consensus.type == "consensus" for r in found)
    assert [m.id for m in mem.dissent_for_topic("database choice for the ledger",
                                                namespace=NS)] == [d.id]
    edges = {(r.type.value, r.source_id, r.target_id) for r in mem.relations(c.id,
                                                                              namespace=NS)}
    assert {("REFERENCES", c.id, e.id), ("CONTRADICTS", d.id, c.id)} <= edges
    with pytest.raises(NotFoundError):
        mem.record_dissent("x", "gemini", "no", namespace=NS, against="missing")


def test_tool_capture_lists_and_per_agent_cap(tmp_path, clock: Clock,  # type: ignore[no-untyped-def]
                                              fake_embedder) -> None:
    from graphmem.config import CaptureConfig, GraphMemConfig

    config = GraphMemConfig(capture=CaptureConfig(tools=("Bash", "Edit"), skip_tools=("Edit",),
                                                  max_per_minute=2, max_chars=10))
    with GraphMemory.open(tmp_path, config=config, clock=clock, embedder=fake_embedder) as m:
        got = [m.capture_tool(agent="coder", tool="Bash", input=f"ls {i}" + "x" * 50,
                              output="a b", ok=True, namespace=NS) for i in range(3)]
        assert got[0] is not None and got[1] is not None and got[2] is None
        assert (got[0].type, got[0].tier, got[0].source) == ("tool_usage", Tier.FAST, "coder")
        assert "x" * 11 not in got[0].content and got[0].metadata["input_chars"] == 54
        assert m.capture_tool(agent="other", tool="Bash", input="pwd", output="/",
                              ok=False, namespace=NS) is not None  # the cap is per agent
        assert m.capture_tool(agent="coder", tool="Edit", input="f", output="", ok=True,
                              namespace=NS) is None
        assert m.capture_tool(agent="coder", tool="Read", input="f", output="", ok=True,
                              namespace=NS) is None
        assert m.stats(namespace=NS)["capture"] == {"captured": 3, "skipped": 2, "dropped": 1}
        clock.advance(seconds=61)
        assert m.capture_tool(agent="coder", tool="Bash", input="ls", output="", ok=True,
                              namespace=NS) is not None
        with pytest.raises(ValidationError):
            m.capture_tool(agent="", tool="Bash", input="", output="", ok=True, namespace=NS)
        assert len(m.list_page(namespace=NS, type="tool_usage").items) == 4


def test_hot_cache_serves_repeats_until_a_write(mem: GraphMemory, clock: Clock) -> None:
    mem.store("the cache test memory about kafka lag", namespace=NS)
    calls = mem.embedder.calls  # type: ignore[attr-defined]
    first = mem.retrieve("kafka lag", namespace=NS)
    again = mem.retrieve("kafka lag", namespace=NS)
    assert [h.id for h in again] == [h.id for h in first]
    assert mem.embedder.calls == calls + 1  # type: ignore[attr-defined]
    assert mem.stats(namespace=NS)["cache"]["hits"] == 1
    newer = mem.store("kafka lag alert fired again", namespace=NS)
    assert newer.id in {h.id for h in mem.retrieve("kafka lag", namespace=NS)}
    clock.advance(seconds=31)
    mem.retrieve("kafka lag", namespace=NS)
    assert mem.stats(namespace=NS)["cache"]["hits"] == 1  # expired: a miss


def test_delete_all_needs_the_namespace_confirmed(mem: GraphMemory) -> None:
    ids = [m.id for m in mem.store_many([f"note {i}" for i in range(5)], namespace=NS)]
    mem.store("elsewhere", namespace="kept")
    with pytest.raises(ValidationError):
        mem.delete_all(namespace=NS, confirm="agent")
    assert len(mem.list_page(namespace=NS).items) == 5
    assert mem.delete_all(namespace=NS, confirm=NS) == 5
    assert mem.list_page(namespace=NS).items == []
    with pytest.raises(NotFoundError):
        mem.get(ids[0], namespace=NS)
    assert len(mem.list_page(namespace="kept").items) == 1


def test_memory_used_by_several_agents_is_promoted(mem: GraphMemory, clock: Clock) -> None:
    shared = mem.store("the staging database password rotates monthly", namespace=NS,
                       source="ops-bot")
    assert shared.tier is Tier.MEDIUM
    for _ in range(2):  # one agent, used over and over (accesses stay below the window rule)
        mem.entries([shared.id], namespace=NS, agent="coder")
        clock.advance(hours=30)
    mem.feedback(shared.id, namespace=NS, useful=True, agent="reviewer")
    assert mem.get(shared.id, namespace=NS).tier is Tier.MEDIUM  # two agents so far
    clock.advance(days=8)  # outside the window: the first two no longer count
    mem.entries([shared.id], namespace=NS, agent="planner")
    got = mem.get(shared.id, namespace=NS)
    assert got.tier is Tier.MEDIUM and set(got.used_by) == {"planner"}
    clock.advance(hours=30)
    mem.feedback(shared.id, namespace=NS, outcome="failure", agent="tester")
    mem.entries([shared.id], namespace=NS)  # nobody named: not counted
    assert mem.get(shared.id, namespace=NS).tier is Tier.MEDIUM
    clock.advance(hours=30)
    mem.entries([shared.id], namespace=NS, agent="coder")
    got = mem.get(shared.id, namespace=NS)
    assert got.tier is Tier.FAST and got.used_by == {}  # counting starts again
    promoted = [e for e in mem.history(shared.id, namespace=NS) if e.event == "promotion"]
    assert [e.reason for e in promoted] == ["used by 3 agents within 168 h"]
    with pytest.raises(ValidationError):
        mem.entries([shared.id], namespace=NS, agent="x" * 300)
