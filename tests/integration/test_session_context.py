"""The short-term session context (issue 48) on every store: keys and a capped message list
per session, expiring on the injected clock, isolated by session and namespace, purged by
maintenance; bad input rejected with nothing written."""

from __future__ import annotations

import math
import threading
from datetime import timedelta

import pytest

from graphmem import GraphMemory
from graphmem.errors import LimitExceededError, ValidationError
from tests.conftest import Clock

NS = "ops"


def test_set_get_list_replace_and_delete(mem: GraphMemory, clock: Clock) -> None:
    entry = mem.context_set("chat-1", "plan", {"step": 1, "files": ["a.py"]}, namespace=NS)
    assert entry.expires_at == clock.now + timedelta(hours=1)  # the operator's default
    mem.context_set("chat-1", "user", "ada", namespace=NS, ttl=60)
    mem.context_set("chat-1", "count", 3, namespace=NS)
    assert mem.context_get("chat-1", "plan", namespace=NS) == {"step": 1, "files": ["a.py"]}
    assert mem.context_list("chat-1", namespace=NS) == {
        "count": 3, "plan": {"step": 1, "files": ["a.py"]}, "user": "ada"}
    assert [e.key for e in mem.context_entries("chat-1", namespace=NS)] == [
        "count", "plan", "user"]
    # a replace takes the new value and the new expiry
    clock.advance(seconds=30)
    again = mem.context_set("chat-1", "user", {"name": "ada"}, namespace=NS, ttl=600)
    found = mem.context_entry("chat-1", "user", namespace=NS)
    assert found is not None and found.value == {"name": "ada"}
    assert found.expires_at == again.expires_at == clock.now + timedelta(seconds=600)
    assert mem.context_get("chat-1", "missing", namespace=NS) is None
    assert mem.context_delete("chat-1", "count", namespace=NS) == 1
    assert mem.context_delete("chat-1", "count", namespace=NS) == 0
    assert set(mem.context_list("chat-1", namespace=NS)) == {"plan", "user"}
    assert mem.context_delete("chat-1", namespace=NS) == 2  # the whole session's context
    assert mem.context_list("chat-1", namespace=NS) == {}


def test_entries_and_messages_expire_on_the_clock_and_maintenance_purges_them(
        mem: GraphMemory, clock: Clock) -> None:
    start = clock.now
    mem.context_set("s", "short", 1, namespace=NS, ttl=60)
    mem.context_set("s", "long", 2, namespace=NS, ttl=timedelta(hours=2))
    mem.message_add("s", {"role": "user", "content": "first"}, namespace=NS, ttl=60)
    mem.message_add("s", {"role": "assistant", "content": "second"}, namespace=NS)
    clock.advance(seconds=59)
    assert mem.context_list("s", namespace=NS) == {"short": 1, "long": 2}
    assert len(mem.messages("s", namespace=NS)) == 2
    clock.advance(seconds=1)  # expiry is exclusive: at expires_at it is gone
    assert mem.context_get("s", "short", namespace=NS) is None
    assert mem.context_list("s", namespace=NS) == {"long": 2}
    assert mem.messages("s", namespace=NS) == [{"role": "assistant", "content": "second"}]
    # read-time check only so far: the rows are still there for an earlier clock
    assert mem.backend.context_get(NS, "s", "short", start) is not None
    assert mem.maintain(dry_run=True).context_purged == 0
    assert mem.maintain().context_purged == 2  # one entry, one message
    assert mem.backend.context_get(NS, "s", "short", start) is None
    assert len(mem.backend.messages(NS, "s", start, 50)) == 1
    clock.advance(hours=2)
    assert mem.context_list("s", namespace=NS) == {} and mem.messages("s", namespace=NS) == []
    assert mem.maintain(NS).context_purged == 2
    assert mem.backend.context_list(NS, "s", start) == []
    assert mem.backend.messages(NS, "s", start, 50) == []
    # the session starts afresh after its log was purged
    mem.message_add("s", "again", namespace=NS)
    assert mem.messages("s", namespace=NS) == ["again"]


def test_the_message_list_is_capped_oldest_dropped(mem: GraphMemory) -> None:
    cap = mem.config.sessions.max_messages
    for i in range(cap + 3):
        mem.message_add("s", {"i": i}, namespace=NS)
    kept = mem.messages("s", namespace=NS)
    assert kept == [{"i": i} for i in range(3, cap + 3)]
    assert mem.messages("s", namespace=NS, limit=2) == [{"i": cap + 1}, {"i": cap + 2}]
    assert mem.messages_clear("s", namespace=NS) == cap
    assert mem.messages("s", namespace=NS) == []
    mem.message_add("s", "after the clear", namespace=NS)
    assert mem.messages("s", namespace=NS) == ["after the clear"]


def test_concurrent_appends_keep_exactly_the_cap(mem: GraphMemory, clock: Clock) -> None:
    """The trim runs in the append's own transaction: racing writers never leave more."""
    cap, errors = 5, []
    later = clock.now + timedelta(hours=1)

    def append(worker: int) -> None:
        try:
            for i in range(8):
                mem.backend.message_append(NS, "race", f'"{worker}-{i}"', cap, clock.now, later)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=append, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    rows = mem.backend.messages(NS, "race", clock.now, 100)
    assert len(rows) == cap and len({r[0] for r in rows}) == cap
    # each worker's messages keep their own order among the survivors
    for w in range(4):
        mine = [int(r[0].strip('"').split("-")[1]) for r in rows
                if r[0].startswith(f'"{w}-')]
        assert mine == sorted(mine)


def test_sessions_and_namespaces_are_isolated(mem: GraphMemory) -> None:
    mem.context_set("s1", "k", "ops s1", namespace=NS)
    mem.context_set("s2", "k", "ops s2", namespace=NS)
    mem.context_set("s1", "k", "other s1", namespace="other")
    mem.message_add("s1", "hello ops", namespace=NS)
    mem.message_add("s1", "hello other", namespace="other")
    assert mem.context_get("s1", "k", namespace=NS) == "ops s1"
    assert mem.context_get("s2", "k", namespace=NS) == "ops s2"
    assert mem.context_get("s1", "k", namespace="other") == "other s1"
    assert mem.messages("s1", namespace=NS) == ["hello ops"]
    assert mem.messages("s2", namespace=NS) == []
    assert mem.context_delete("s1", namespace=NS) == 1
    assert mem.messages_clear("s1", namespace=NS) == 1
    assert mem.context_get("s1", "k", namespace="other") == "other s1"
    assert mem.context_get("s2", "k", namespace=NS) == "ops s2"
    assert mem.messages("s1", namespace="other") == ["hello other"]
    assert "other" not in mem.namespaces() or mem.counts(namespace="other").memories == {}


@pytest.mark.parametrize(("call", "error"), [
    (lambda m: m.context_set("bad session", "k", 1, namespace=NS), ValidationError),
    (lambda m: m.context_set("s", "", 1, namespace=NS), ValidationError),
    (lambda m: m.context_set("s", "a/b", 1, namespace=NS), ValidationError),
    (lambda m: m.context_set("s", "k" * 129, 1, namespace=NS), ValidationError),
    (lambda m: m.context_set("s", "k", 1, namespace="bad ns"), ValidationError),
    (lambda m: m.context_set("s", "k", 1, namespace=NS, ttl=0), ValidationError),
    (lambda m: m.context_set("s", "k", 1, namespace=NS, ttl=-5), ValidationError),
    (lambda m: m.context_set("s", "k", 1, namespace=NS, ttl=True), ValidationError),
    (lambda m: m.context_set("s", "k", 1, namespace=NS, ttl=math.nan), ValidationError),
    (lambda m: m.context_set("s", "k", 1, namespace=NS, ttl="60"), ValidationError),
    (lambda m: m.context_set("s", "k", 1, namespace=NS, ttl=31 * 86400), LimitExceededError),
    (lambda m: m.context_set("s", "k", "x" * 40_000, namespace=NS), LimitExceededError),
    (lambda m: m.context_set("s", "k", "é" * 16_400, namespace=NS), LimitExceededError),
    (lambda m: m.context_set("s", "k", {1, 2}, namespace=NS), ValidationError),
    (lambda m: m.context_set("s", "k", math.inf, namespace=NS), ValidationError),
    (lambda m: m.context_set("s", "k", "\ud800", namespace=NS), ValidationError),
    (lambda m: m.message_add("s", "x" * 40_000, namespace=NS), LimitExceededError),
    (lambda m: m.message_add("s", object(), namespace=NS), ValidationError),
    (lambda m: m.message_add("s", "hi", namespace=NS, ttl=-1), ValidationError),
    (lambda m: m.message_add("s/1", "hi", namespace=NS), ValidationError),
])
def test_bad_input_is_rejected_and_writes_nothing(mem: GraphMemory, call, error) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error):
        call(mem)
    assert mem.context_list("s", namespace=NS) == {} and mem.messages("s", namespace=NS) == []
    with pytest.raises(LimitExceededError):
        mem.messages("s", namespace=NS, limit=0)


def test_the_value_bound_counts_utf8_bytes(mem: GraphMemory) -> None:
    bound = mem.config.sessions.max_value_bytes
    at_bound = "é" * ((bound - 2) // 2)  # two quotes and two bytes a character
    mem.context_set("s", "k", at_bound, namespace=NS)
    assert mem.context_get("s", "k", namespace=NS) == at_bound
