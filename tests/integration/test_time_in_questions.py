"""Time in questions (issue 49) on every store: a time the query names lifts the memories of
that time above same-words memories of other times (term ``time``, its reason in words);
relative words read against ``now=``; a memory's relative mentions ("yesterday") resolved
against its own ``created_at`` at write time and kept through every store, update, export
and import."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

from graphmem import GraphMemory
from graphmem.config import GraphMemConfig, RetrievalConfig, RetrievalWeights

NS = "trips"


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, 12, tzinfo=UTC)


def _hikes(mem: GraphMemory) -> dict[str, str]:
    """The same outing at three times among other memories; July's says more besides (the
    others match the question's words more closely)."""
    items = [
        ("march", "hiking with the team: Lake Tahoe", _day(2023, 3, 8)),
        ("july", "hiking with the team: Mount Tamalpais, a long climb and a picnic after",
         _day(2023, 7, 12)),
        ("october", "hiking with the team: Big Sur", _day(2023, 10, 20)),
    ]
    other = ["the billing deploy failed on a locked table", "bought a new espresso machine",
             "Anna joined the platform team", "renewed the TLS certificates",
             "read a book about distributed systems", "the cat knocked over the plant",
             "planned the quarterly roadmap", "fixed the flaky login test"]
    mem.store_many([{"content": c, "created_at": _day(2023, 1 + i, 3)}
                    for i, c in enumerate(other)], namespace=NS)
    stored = mem.store_many([{"content": c, "created_at": t} for _, c, t in items],
                            namespace=NS)
    return {name: m.id for (name, _, _), m in zip(items, stored, strict=True)}


def test_a_named_month_lifts_its_memory_above_same_words_of_other_months(
        mem: GraphMemory) -> None:
    ids = _hikes(mem)
    q = "where did we go hiking with the team in July 2023?"
    results = mem.retrieve(q, namespace=NS, record_access=False)
    assert results[0].id == ids["july"]
    top = results[0]
    assert top.terms["time"] == 1.0 and top.reasons["time"] == "inside July 2023"
    others = {r.id: r for r in results[1:]}
    assert others[ids["march"]].terms["time"] < 0.01  # four months away: faded
    # the question without its month ranks the wordier memories first: the time decided
    plain = mem.retrieve("where did we go hiking with the team?", namespace=NS,
                         record_access=False)
    assert plain[0].id != ids["july"] and "time" not in plain[0].terms


def test_without_the_time_weight_the_month_does_not_decide(tmp_path, clock,  # type: ignore[no-untyped-def]
                                                           fake_embedder) -> None:
    """The same question with ``weights.time`` 0 (the ranking before issue 49): the wordier
    March memory wins, so the test above is decided by the prior."""
    config = GraphMemConfig(retrieval=RetrievalConfig(weights=RetrievalWeights(time=0.0)))
    with GraphMemory.open(tmp_path / "d", config=config, clock=clock,
                          embedder=fake_embedder) as mem:
        ids = _hikes(mem)
        results = mem.retrieve("where did we go hiking with the team in July 2023?",
                               namespace=NS, record_access=False)
        assert results[0].id != ids["july"] and "time" not in results[0].terms


def test_now_moves_a_relative_window(mem: GraphMemory) -> None:
    may = mem.store("deployed the billing service to production", namespace=NS,
                    created_at=_day(2023, 5, 10))
    august = mem.store("billing service deployed to production", namespace=NS,
                       created_at=_day(2023, 8, 23))
    q = "what did we deploy to production last week?"
    after_august = mem.retrieve(q, namespace=NS, now=_day(2023, 8, 30), record_access=False)
    after_may = mem.retrieve(q, namespace=NS, now=_day(2023, 5, 17), record_access=False)
    assert [r.id for r in after_august][:1] == [august.id]
    assert [r.id for r in after_may][:1] == [may.id]
    assert after_may[0].reasons["time"].startswith("inside ")
    # the store's clock (2026) is the default reference: neither is inside its last week
    assert all(r.terms["time"] < 1.0 for r in mem.retrieve(q, namespace=NS,
                                                           record_access=False))


def test_yesterday_in_a_memory_resolves_against_its_created_at(mem: GraphMemory) -> None:
    m = mem.store("Yesterday I got back from Rio", namespace=NS,
                  created_at=datetime(2023, 8, 28, 18, tzinfo=UTC))
    day = datetime(2023, 8, 27, tzinfo=UTC)
    assert m.mentioned == ((day, day + timedelta(days=1)),)
    assert mem.get(m.id, namespace=NS).mentioned == m.mentioned  # read back from the store
    assert m.to_dict()["mentioned"] == [{"start": "2023-08-27T00:00:00+00:00",
                                         "end": "2023-08-28T00:00:00+00:00"}]
    # the question names the day of the trip, not the day it was written
    results = mem.retrieve("when did I get back from Rio on 27 August 2023?", namespace=NS,
                           record_access=False)
    assert results[0].id == m.id and results[0].reasons["time"].startswith("mentions a time")
    # new content, new mentions
    changed = mem.update(m.id, namespace=NS, content="I got back from Rio today")
    today = datetime(2023, 8, 28, tzinfo=UTC)
    assert mem.get(changed.id, namespace=NS).mentioned == ((today, today + timedelta(days=1)),)


def test_mentioned_times_survive_export_and_import(mem: GraphMemory, tmp_path, clock,  # type: ignore[no-untyped-def]
                                                   fake_embedder) -> None:
    m = mem.store("Last week we shipped the billing migration", namespace=NS,
                  created_at=_day(2023, 9, 6))
    assert m.mentioned  # the week of 28 August 2023
    out = io.StringIO()
    mem.export_jsonl(out, namespace=NS)
    with GraphMemory.open(tmp_path / "copy", clock=clock, embedder=fake_embedder) as other:
        other.import_records([json.loads(line) for line in out.getvalue().splitlines()],
                             namespace=NS)
        assert other.get(m.id, namespace=NS).mentioned == m.mentioned


def test_rest_and_the_client_take_now_and_explain_the_time(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Over HTTP: ``now`` (a datetime through the client, ISO 8601 on the wire) moves the
    window, the reason comes back in words, and a memory shows what it mentions."""
    from tests.api.test_rest import Server

    with Server(tmp_path) as server:
        c = server.client(["trips"])
        rio = c.store("Yesterday I got back from Rio", namespace=NS,
                      created_at="2023-08-28T18:00:00Z")
        c.store("I got back from Lisbon", namespace=NS, created_at="2023-05-02T18:00:00Z")
        assert [(a.date().isoformat(), b.date().isoformat()) for a, b in rio.mentioned] == [
            ("2023-08-27", "2023-08-28")]
        hits = c.retrieve("where did I get back from last week?", namespace=NS,
                          now=datetime(2023, 9, 1, tzinfo=UTC))
        assert hits[0].id == rio.id  # written on Monday the 28th, about Sunday the 27th
        assert hits[0].reasons["time"] == "mentions a time inside 2023-08-21 to 2023-08-27"
        bare = c.retrieve("where did I get back from last week?", namespace=NS,
                          now=datetime(2023, 9, 1, tzinfo=UTC), explain=False)
        assert bare[0].reasons == {} and bare[0].id == rio.id
