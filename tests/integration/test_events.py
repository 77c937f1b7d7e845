"""Live memory events in one process (issue 48): each kind of change is an event of its
namespace, a listener resumes after an id from the retained window (and is told when it
cannot), a slow listener's overflow is counted while the writer goes on, consolidation runs
report their states."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from graphmem import GraphMemory
from graphmem.config import ConsolidationConfig, GraphMemConfig
from graphmem.engine.events import EventLog, MemoryEvent
from graphmem.errors import LimitExceededError, ValidationError
from tests.conftest import Clock, FakeEmbedder

NS, OTHER = "ops", "hr"


@pytest.fixture
def smem(tmp_path: Path, clock: Clock) -> Iterator[GraphMemory]:
    """The embedded store alone: what a listener is told does not depend on the engine
    (the ``mem`` test runs on all three)."""
    with GraphMemory.open(tmp_path / "data", clock=clock, embedder=FakeEmbedder(),
                          config=GraphMemConfig(consolidation=ConsolidationConfig(
                              max_recall_loss=1.0))) as m:
        yield m


def _small_log(mem: GraphMemory, clock: Clock, *, retain: int = 10_000,
               max_listeners: int = 1000) -> EventLog:
    log = EventLog(clock=clock, retain=retain, max_listeners=max_listeners)
    object.__setattr__(mem.core, "events", log)  # a window small enough to run out of
    return log


def _kinds(events: list[MemoryEvent]) -> list[tuple[str, str | None]]:
    return [(e.type, e.memory_id) for e in events]


def test_each_kind_of_change_is_an_event_of_its_namespace(mem: GraphMemory,
                                                          clock: Clock) -> None:
    with mem.events(NS) as feed:
        a = mem.store("the deploy failed because the migration locked a table", namespace=NS)
        b = mem.store("checkout timed out", namespace=NS, session_id="s1")
        c = mem.store("checkout was retried", namespace=NS, session_id="s1")
        mem.store("a secret of another team", namespace=OTHER)
        mem.store("the deploy failed because the migration locked a table", namespace=NS)
        mem.update(b.id, namespace=NS, content="checkout timed out twice")
        mem.relate(a.id, b.id, "CAUSES", namespace=NS)
        mem.unrelate(a.id, b.id, "CAUSES", namespace=NS)
        mem.pin(a.id, namespace=NS)
        mem.unpin(a.id, namespace=NS)
        mem.feedback(b.id, namespace=NS, useful=True)
        mem.delete(c.id, namespace=NS)
        got = feed.take()
    assert _kinds(got) == [
        ("stored", a.id), ("stored", b.id), ("stored", c.id),  # c's predecessor b: no event
        ("reinforced", a.id), ("updated", b.id), ("related", a.id), ("unrelated", a.id),
        ("pinned", a.id), ("unpinned", a.id), ("reinforced", b.id), ("deleted", c.id)]
    assert {e.namespace for e in got} == {NS}
    assert got[0].data["preview"].startswith("the deploy failed") and \
        got[0].data["tier"] == a.tier.value and got[0].data["status"] == "active"
    assert got[4].data["preview"] == "checkout timed out twice"
    assert got[5].data == {"source_id": a.id, "target_id": b.id, "relation": "CAUSES"}
    assert all(e.at == clock.now for e in got)  # the injected clock
    ids = [mem.core.events.parse(e.id) or 0 for e in got]
    assert ids == sorted(ids) and len(set(ids)) == len(ids) and 0 not in ids


def test_tier_changes_and_a_restore_are_events(smem: GraphMemory, clock: Clock) -> None:
    m = smem.store("the release train leaves on Thursdays", namespace=NS, tier="fast")
    with smem.events(NS) as feed:
        clock.advance(days=30)
        smem.maintain(NS)
        moved = feed.take()
    assert moved and {(e.type, e.memory_id) for e in moved} == {("demoted", m.id)}
    assert moved[0].data["from_tier"] == "fast" and moved[0].data["tier"] != "fast"
    assert moved[-1].data["tier"] == smem.get(m.id, namespace=NS).tier.value
    assert "not accessed" in moved[0].data["reason"]


def test_consolidation_run_states_are_events(smem: GraphMemory, clock: Clock) -> None:
    from tests.integration.test_consolidation import fill

    fill(smem, clock, critical=False)
    with smem.events(NS) as feed, smem.events(OTHER) as other:
        dry = smem.consolidate(namespace=NS, dry_run=True)
        run = smem.consolidate(namespace=NS)
        assert run.report
        member = smem.list_memories(namespace=NS, status="archived")[0]
        smem.restore(member.id, namespace=NS)
        smem.rollback(run.id)
        got = feed.take()
        assert other.take() == []
    states = [(e.data["run_id"], e.data["status"]) for e in got if e.type == "consolidation"]
    assert states == [(dry.id, "dry_run"), (run.id, "running"), (run.id, "applied"),
                      (run.id, "rolled_back")]
    summaries = [e for e in got if e.type == "stored"]
    archived = [e for e in got if e.type in ("archived", "expired")]
    assert summaries and all(e.data["kind"] == "summary" for e in summaries)
    restored = [e.memory_id for e in got if e.type == "restored"]
    assert archived and restored[0] == member.id  # by hand, then by the rollback:
    assert sorted(map(str, restored[1:])) == sorted(str(e.memory_id) for e in archived)
    at = {e.data["status"]: i for i, e in enumerate(got) if e.type == "consolidation"}
    stored_at = [i for i, e in enumerate(got) if e.type == "stored"]
    deleted_at = [i for i, e in enumerate(got) if e.type == "deleted"]
    assert at["running"] < min(stored_at) and max(stored_at) < at["applied"]
    assert at["applied"] < min(deleted_at) and max(deleted_at) < at["rolled_back"]
    assert sorted(str(e.memory_id) for e in got if e.type == "deleted") == \
        sorted(str(e.memory_id) for e in summaries)


def test_a_resume_after_an_id_gets_exactly_the_rest(smem: GraphMemory) -> None:
    with smem.events(NS) as feed:
        first = [smem.store(f"note {i}", namespace=NS).id for i in range(3)]
        seen = feed.take()
    assert [e.memory_id for e in seen] == first
    later = [smem.store(f"later note {i}", namespace=NS).id for i in range(4)]
    smem.store("elsewhere", namespace=OTHER)
    with smem.events(NS, after=seen[-1].id) as again:
        assert [e.memory_id for e in again.take()] == later


def test_a_resume_older_than_the_window_says_so(smem: GraphMemory, clock: Clock) -> None:
    _small_log(smem, clock, retain=5)
    with smem.events(NS) as feed:
        smem.store("first note", namespace=NS)
        anchor = feed.take()[-1].id
    later = [smem.store(f"note {i}", namespace=NS).id for i in range(7)]
    with smem.events(NS, after=anchor) as again:
        got = again.take()
    assert got[0].type == "missed" and "retained window" in got[0].data["reason"]
    assert [e.memory_id for e in got[1:]] == later[-5:]
    # a resume from the notice's id is told nothing more, and misses nothing it could get
    with smem.events(NS, after=got[0].id) as third:
        assert [e.memory_id for e in third.take()] == later[-5:]


def test_an_id_of_another_process_or_no_id_at_all(smem: GraphMemory) -> None:
    smem.store("a note", namespace=NS)
    with smem.events(NS, after="0ther0-12") as feed:
        got = feed.take()
    assert [e.type for e in got] == ["missed", "stored"]
    assert "another replica" in got[0].data["reason"]
    for bad in ("not-an-id", "x", "e-1e5", "a-" + "9" * 30):
        with pytest.raises(ValidationError):
            smem.events(NS, after=bad)
    assert smem.core.events.listening() == 0  # a refused listener is not kept


def test_a_slow_listener_overflows_and_the_writer_goes_on(smem: GraphMemory,
                                                          clock: Clock) -> None:
    _small_log(smem, clock, retain=15)
    with smem.events(NS, queue=2) as slow, smem.events(NS) as fast:
        ids = [smem.store(f"note {i}", namespace=NS).id for i in range(20)]  # nobody reads
        assert slow.dropped == 18  # counted, not waited for
        assert [e.memory_id for e in fast.take()] == ids  # another listener is unaffected
        got = slow.take()
    assert [e.memory_id for e in got[:2]] == ids[:2]
    notice = got[2]
    assert notice.type == "overflow" and notice.data["dropped"] == 18
    assert notice.data["lost"] is True  # three of them left the window of 15 meanwhile
    assert [e.memory_id for e in got[3:]] == ids[5:]


def test_an_overflow_within_the_window_loses_nothing(smem: GraphMemory) -> None:
    with smem.events(NS, queue=3) as slow:
        ids = [smem.store(f"note {i}", namespace=NS).id for i in range(10)]
        got = slow.take()
    assert [e.type for e in got].count("overflow") == 1 and "lost" not in got[3].data
    assert [e.memory_id for e in got if e.type == "stored"] == ids


def test_listeners_are_bounded_and_end_when_the_memory_closes(tmp_path: Path,
                                                               clock: Clock) -> None:
    mem = GraphMemory.open(tmp_path / "data", clock=clock, embedder=FakeEmbedder())
    _small_log(mem, clock, max_listeners=2)
    subs = [mem.events(NS), mem.events(OTHER)]
    with pytest.raises(LimitExceededError):
        mem.events(NS)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(e.type for e in subs[0]))
    reader.start()
    mem.store("one more", namespace=NS)
    mem.close()
    reader.join(timeout=30)
    assert not reader.is_alive() and seen == ["stored"]
    assert mem.core.events.listening() == 0


def test_bookkeeping_alone_is_no_event(smem: GraphMemory, clock: Clock) -> None:
    m = smem.store("the cache was cold after the deploy", namespace=NS)
    with smem.events(NS) as feed:
        smem.retrieve("cold cache", namespace=NS)  # an access: bookkeeping
        smem.entries([m.id], namespace=NS)
        clock.advance(hours=1)
        smem.feedback(m.id, namespace=NS, useful=False)  # no reinforcement either
        assert feed.take() == []


class _Ticking(Clock):
    """A clock that moves a millisecond each time it is read, as time does during a write
    (the write stamps its records when it begins, its events are published at its end)."""

    def __call__(self) -> datetime:
        self.advance(milliseconds=1)
        return self.now


def test_a_twin_is_reinforced_while_time_moves(tmp_path: Path) -> None:
    clock = _Ticking()
    with GraphMemory.open(tmp_path / "data", clock=clock, embedder=FakeEmbedder()) as mem:
        m = mem.store("the nightly backup failed: disk full", namespace=NS)
        with mem.events(NS) as feed:
            mem.store("the nightly backup failed: disk full", namespace=NS)
            clock.advance(days=1)
            mem.store_many([{"content": "the nightly backup failed: disk full"},
                            {"content": "a new note beside its twin"}], namespace=NS)
            got = feed.take()
    assert [e.type for e in got] == ["reinforced", "reinforced", "stored"]
    assert {e.memory_id for e in got[:2]} == {m.id}
