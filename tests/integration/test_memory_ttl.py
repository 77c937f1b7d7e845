"""A memory's own TTL (issue 48) on every store, on an injected clock: past ``expires_at`` it is
left out of retrieve, the index search, the default listing and the timeline before any
maintenance ran, while ``get`` shows it ``expired``; maintenance then marks it expired with an
``expiry`` transition (reason "ttl"); it is restorable, ``update(ttl=)`` refreshes it, export
and import keep it, and a bad ttl is refused with nothing written."""

from __future__ import annotations

import io
import json
import math
import shutil
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.config import CacheConfig, GraphMemConfig
from graphmem.errors import ConflictError, ValidationError
from graphmem.models import Status, TransitionKind
from tests.conftest import Clock, FakeEmbedder

NS = "ttl"
BAD_TTLS = [0, -5, math.nan, math.inf, -math.inf, True, "60", 1e12]


def _three(mem: GraphMemory) -> tuple[str, str, str]:
    """In one session: a memory living a minute, one without a TTL, one living an hour."""
    short = mem.store("the staging deploy key rotates every minute", namespace=NS,
                      session_id="s1", ttl=60)
    plain = mem.store("the staging deploy runs on fridays", namespace=NS, session_id="s1")
    hour = mem.store("the staging deploy needs a change ticket", namespace=NS,
                     session_id="s1", ttl=3600)
    return short.id, plain.id, hour.id


def _found(mem: GraphMemory, query: str = "staging deploy") -> set[str]:
    return {r.id for r in mem.retrieve(query, namespace=NS, record_access=False)}


def test_past_its_ttl_a_memory_leaves_every_read_before_maintenance(
        mem: GraphMemory, clock: Clock) -> None:
    short, plain, hour = _three(mem)
    assert mem.get(short, namespace=NS).expires_at == clock.now + timedelta(seconds=60)
    assert mem.get(plain, namespace=NS).expires_at is None
    assert _found(mem) == {short, plain, hour}

    clock.advance(seconds=60)  # expires_at <= now: gone at the very second
    assert _found(mem) == {plain, hour}
    assert {e.id for e in mem.search_index("staging deploy", namespace=NS)} == {plain, hour}
    assert {m.id for m in mem.list_page(namespace=NS).items} == {plain, hour}
    assert [m.id for m in mem.list_page(namespace=NS, status="expired").items] == [short]
    assert {m.id for m in mem.list_page(namespace=NS, status=None).items} == {short, plain,
                                                                               hour}
    around = mem.timeline(plain, namespace=NS, before=5, after=5)
    assert [m.id for m in around] == [plain, hour]
    last = mem.store("the staging deploy window closes at noon", namespace=NS,
                     session_id="s1", ttl=1).id  # after the others in the session
    assert [m.id for m in mem.timeline(plain, namespace=NS)] == [plain, hour, last]
    clock.advance(seconds=1)
    assert [m.id for m in mem.timeline(hour, namespace=NS)] == [plain, hour]
    seen = mem.get(short, namespace=NS)
    assert seen.status is Status.EXPIRED and seen.to_dict()["status"] == "expired"
    assert mem.entries([short], namespace=NS, touch=False)[0].status is Status.EXPIRED
    assert {m.id for m in mem.list_memories(namespace=NS, status="expired")} == {short, last}
    assert short not in {m.id for m in mem.list_memories(namespace=NS)}
    assert mem.transitions(short, namespace=NS) == []  # nothing written: maintenance marks it

    clock.advance(hours=1)
    assert _found(mem) == {plain}


def test_maintenance_marks_it_expired_with_a_ttl_transition_and_restore_brings_it_back(
        mem: GraphMemory, clock: Clock) -> None:
    short, _, hour = _three(mem)
    clock.advance(seconds=61)
    report = mem.maintain(NS)
    assert report.counts()["expiry"] == 1
    [t] = [t for t in report.transitions if t.memory_id == short]
    assert (t.kind, t.reason, t.from_status, t.to_status) == (
        TransitionKind.EXPIRY, "ttl", Status.ACTIVE, Status.EXPIRED)
    assert mem.get(short, namespace=NS).status is Status.EXPIRED
    assert mem.get(hour, namespace=NS).status is Status.ACTIVE
    assert mem.maintain(NS).counts()["expiry"] == 0  # idempotent
    assert [x.kind for x in mem.transitions(short, namespace=NS)] == [TransitionKind.EXPIRY]
    assert short not in _found(mem)

    back = mem.restore(short, namespace=NS)  # no new ttl: it no longer expires
    assert back.status is Status.ACTIVE and back.expires_at is None
    assert mem.get(short, namespace=NS).expires_at is None
    assert short in _found(mem)
    clock.advance(hours=2)
    assert mem.maintain(NS).counts()["expiry"] == 1  # the hour one; the restored one stays
    assert mem.get(short, namespace=NS).status is Status.ACTIVE
    assert [x.kind for x in mem.transitions(short, namespace=NS)
            if x.kind in (TransitionKind.EXPIRY, TransitionKind.RESTORE)] == [
        TransitionKind.EXPIRY, TransitionKind.RESTORE]

    again = mem.restore(hour, namespace=NS, ttl=120)  # a new ttl: it expires again
    assert again.expires_at == clock.now + timedelta(seconds=120)
    assert hour in _found(mem)
    clock.advance(seconds=120)
    assert hour not in _found(mem)


def test_restore_before_maintenance_and_of_an_active_memory(mem: GraphMemory,
                                                           clock: Clock) -> None:
    short, plain, _ = _three(mem)
    with pytest.raises(ConflictError):
        mem.restore(plain, namespace=NS)
    with pytest.raises(ConflictError):  # its TTL has not run out: it is active
        mem.restore(short, namespace=NS)
    clock.advance(minutes=2)
    back = mem.restore(short, namespace=NS)  # run out, not yet marked: restorable all the same
    assert back.status is Status.ACTIVE and back.expires_at is None
    [t] = mem.transitions(short, namespace=NS)
    assert (t.kind, t.from_status, t.reason) == (TransitionKind.RESTORE, Status.EXPIRED,
                                                 "restored from expired (ttl)")
    assert short in _found(mem)
    assert mem.maintain(NS).counts()["expiry"] == 0


def test_update_ttl_refreshes_the_expiry(mem: GraphMemory, clock: Clock) -> None:
    short, plain, _ = _three(mem)
    clock.advance(seconds=50)
    refreshed = mem.update(short, namespace=NS, ttl=60)
    assert refreshed.expires_at == clock.now + timedelta(seconds=60)
    assert mem.transitions(short, namespace=NS) == []  # bookkeeping, not a change of content
    clock.advance(seconds=30)  # 80 s after it was written, 30 s after the refresh
    assert short in _found(mem)
    given = mem.update(plain, namespace=NS, ttl=10, topic="deploys")  # with another change
    assert given.expires_at == clock.now + timedelta(seconds=10) and given.topic == "deploys"
    clock.advance(seconds=31)
    assert _found(mem) & {short, plain} == set()
    assert mem.maintain(NS).counts()["expiry"] == 2


def test_update_names_only_the_fields_it_does_not_know(mem: GraphMemory) -> None:
    short, _, _ = _three(mem)
    with pytest.raises(ValidationError) as refused:
        mem.update(short, namespace=NS, ttl=60, colour="red")
    assert str(refused.value) == "unknown field(s): colour"
    assert mem.get(short, namespace=NS).expires_at is not None  # and nothing changed


def test_storing_an_exact_twin_again_sets_its_ttl_as_the_last_write_says(
        mem: GraphMemory, clock: Clock) -> None:
    first = mem.store("the cache holds sessions for an hour", namespace=NS, ttl=60)
    again = mem.store("the cache holds sessions for an hour", namespace=NS)
    assert again.id == first.id and again.expires_at is None
    clock.advance(minutes=5)
    assert first.id in _found(mem, "cache sessions")
    renewed = mem.store("the cache holds sessions for an hour", namespace=NS, ttl=30)
    assert renewed.expires_at == clock.now + timedelta(seconds=30)
    assert mem.get(first.id, namespace=NS).expires_at == renewed.expires_at


@pytest.mark.parametrize("bad", BAD_TTLS, ids=repr)
def test_a_bad_ttl_is_refused_and_nothing_is_written(tmp_path: Path, clock: Clock,
                                                     fake_embedder: FakeEmbedder,
                                                     bad: Any) -> None:
    with GraphMemory.open(tmp_path, clock=clock, embedder=fake_embedder) as mem:
        kept = mem.store("kept", namespace=NS, ttl=60)
        with pytest.raises(ValidationError):
            mem.store("a note", namespace=NS, ttl=bad)
        with pytest.raises(ValidationError):
            mem.store_many([{"content": "fine"}, {"content": "bad", "ttl": bad}], namespace=NS)
        with pytest.raises(ValidationError):
            mem.update(kept.id, namespace=NS, ttl=bad)
        with pytest.raises(ValidationError):
            mem.update(kept.id, namespace=NS, ttl=bad, topic="changed")
        clock.advance(seconds=61)
        with pytest.raises(ValidationError):
            mem.restore(kept.id, namespace=NS, ttl=bad)
        assert [m.id for m in mem.list_page(namespace=NS, status=None).items] == [kept.id]
        after = mem.get(kept.id, namespace=NS)
        assert after.status is Status.EXPIRED and after.topic is None
        assert after.expires_at == kept.expires_at
        assert mem.transitions(namespace=NS) == []


def test_an_unknown_ttl_field_name_is_still_refused(tmp_path: Path, clock: Clock,
                                                    fake_embedder: FakeEmbedder) -> None:
    with GraphMemory.open(tmp_path, clock=clock, embedder=fake_embedder) as mem:
        with pytest.raises(ValidationError, match="ttl_seconds"):
            mem.store("a note", namespace=NS, ttl_seconds=60)
        with pytest.raises(ValidationError):
            mem.update(mem.store("b", namespace=NS).id, namespace=NS, ttl_seconds=60)


def test_export_and_import_keep_the_expiry(mem: GraphMemory, tmp_path: Path, clock: Clock,
                                           fake_embedder: FakeEmbedder) -> None:
    short, plain, hour = _three(mem)
    out = io.StringIO()
    mem.export_jsonl(out, namespace=NS)
    records = [r for r in map(__import__("json").loads, out.getvalue().splitlines())]
    assert {r["id"]: r["expires_at"] for r in records if r["record"] == "memory"}[plain] is None
    with GraphMemory.open(tmp_path / "copy", clock=clock, embedder=fake_embedder) as other:
        other.import_records(records, namespace=NS)
        for id_ in (short, plain, hour):
            assert other.get(id_, namespace=NS).expires_at == mem.get(id_,
                                                                      namespace=NS).expires_at
        clock.advance(seconds=61)
        assert _found(other) == {plain, hour}


def test_a_cached_answer_never_outlives_a_ttl(tmp_path: Path, clock: Clock,
                                              fake_embedder: FakeEmbedder) -> None:
    """The hot cache keeps an answer while no write touched the namespace: a TTL that runs
    out meanwhile is no write, and the answer is computed again."""
    config = GraphMemConfig(cache=CacheConfig(ttl_seconds=3600))
    with GraphMemory.open(tmp_path, clock=clock, embedder=fake_embedder,
                          config=config) as mem:
        short, plain, hour = _three(mem)
        assert _found(mem) == {short, plain, hour}
        clock.advance(seconds=30)
        assert _found(mem) == {short, plain, hour}
        assert mem.activity(namespace=NS)["cache"]["hits"] == 1
        clock.advance(seconds=30)
        assert _found(mem) == {plain, hour}


def test_a_store_marked_older_than_schema_12_migrates_again(tmp_path: Path, clock: Clock,
                                                           fake_embedder: FakeEmbedder) -> None:
    """Schema 12 adds the column only where it is missing: a folder whose mark says 11 but
    that has it already (a test of migrations, a crash after the step) opens cleanly."""
    from graphmem.store.sqlite import schema as sqlite_schema

    with GraphMemory.open(tmp_path, clock=clock, embedder=fake_embedder) as mem:
        kept = mem.store("a memory with a ttl", namespace=NS, ttl=60)
    conn = sqlite3.connect(tmp_path / "graphmem.db")
    conn.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with GraphMemory.open(tmp_path, clock=clock, embedder=fake_embedder) as mem:
        assert mem.get(kept.id, namespace=NS).expires_at == kept.expires_at
    conn = sqlite3.connect(tmp_path / "graphmem.db")
    try:
        assert sqlite_schema.current_version(conn) == sqlite_schema.SCHEMA_VERSION >= 12
    finally:
        conn.close()


def test_the_cli_shows_an_expired_memory_and_restores_it_with_a_new_ttl(
        tmp_path: Path, clock: Clock, fake_embedder: FakeEmbedder) -> None:
    """The CLI runs on the real clock, months after the test clock's start: a memory written
    with a minute to live is long expired for it (no wall-clock assert: only differences of
    times graphmem wrote together)."""
    gm = (shutil.which("graphmem", path=str(Path(sys.executable).parent))
          or shutil.which("graphmem"))
    assert gm
    with GraphMemory.open(tmp_path, clock=clock, embedder=fake_embedder) as mem:
        m = mem.store("the on-call phone is in the drawer", namespace=NS, ttl=60)

    def run(*args: str, ok: bool = True) -> str:
        out = subprocess.run([gm, *args, "-n", NS, "--data", str(tmp_path)],
                             capture_output=True, text=True, timeout=120)
        assert (out.returncode == 0) is ok, out.stderr
        return out.stdout + out.stderr

    shown = json.loads(run("show", "--json", m.id))["memory"]
    assert m.expires_at is not None
    assert shown["status"] == "expired" and shown["expires_at"] == m.expires_at.isoformat()
    assert "--ttl goes with restore only" in run("mark", m.id, "pin", "--ttl", "5", ok=False)
    back = json.loads(run("mark", "--json", m.id, "restore", "--ttl", "3600"))
    assert back["status"] == "active"
    expires, restored = (datetime.fromisoformat(back[k]) for k in ("expires_at", "updated_at"))
    assert expires - restored == timedelta(hours=1)
