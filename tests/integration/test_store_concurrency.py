"""The embedded store under concurrent use: reads go on while a write's transaction runs (they
see the snapshot before it), a write's update of the in-memory index waits for the reads
under way, and readers and writers together lose and corrupt nothing."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from graphmem.config import TuningConfig
from graphmem.models import Memory
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.store import SQLiteStore

DIM = 16
NS = "conc"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def vec(i: int) -> np.ndarray:
    v = np.random.default_rng(i).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def memory(i: int) -> Memory:
    return Memory(id=f"m{i}", namespace=NS, content=f"note {i}", created_at=T0, updated_at=T0,
                  last_accessed_at=T0, content_hash=f"h{i}", embedding=vec(i),
                  keywords=f"note w{i}", context_keywords="")


def open_store(folder: Path) -> SQLiteStore:
    store = SQLiteStore(folder, dim=DIM, tuning=TuningConfig(ann_min=0))
    store.open()
    return store


def write_held_open(store: SQLiteStore, m: Memory) -> tuple[threading.Thread, threading.Event]:
    """A thread writing ``m``, held inside its transaction (after the work) until the event
    returned is set."""
    in_transaction, finish = threading.Event(), threading.Event()
    write = store._write

    def slow(work: object) -> object:
        def held(conn: object) -> object:
            result = work(conn)  # type: ignore[operator]
            in_transaction.set()
            finish.wait(10)
            return result
        return write(held)

    store._write = slow  # type: ignore[method-assign, assignment]
    writer = threading.Thread(target=store.apply, args=(WriteBatch(NS, memories=[m]),))
    writer.start()
    assert in_transaction.wait(10)
    return writer, finish


def test_reads_go_on_during_a_write_transaction_and_see_the_snapshot_before_it(
        tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=[memory(1)]))
        writer, finish = write_held_open(store, memory(2))
        got: list[str] = []
        hits: list[str] = []

        def read() -> None:
            got.extend(store.get_memories(NS, ["m1", "m2"]))
            hits.extend(i for i, _ in store.vector_topk(NS, vec(2), 1))

        reader = threading.Thread(target=read)
        reader.start()
        reader.join(5)
        assert not reader.is_alive()  # the read did not wait for the write
        assert got == ["m1"] and hits == ["m1"]
        finish.set()
        writer.join(5)
        assert set(store.get_memories(NS, ["m1", "m2"])) == {"m1", "m2"}
        assert store.vector_topk(NS, vec(2), 1)[0][0] == "m2"
    finally:
        store.close()


def test_a_write_updates_the_index_only_when_the_reads_under_way_are_done(
        tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=[memory(1)]))
        store.vector_topk(NS, vec(1), 1)  # the namespace's vectors are loaded on first use
        inside, leave = threading.Event(), threading.Event()

        def long_read() -> None:
            with store._guard():
                inside.set()
                leave.wait(10)

        reader = threading.Thread(target=long_read)
        reader.start()
        assert inside.wait(5)
        writer = threading.Thread(target=store.apply,
                                  args=(WriteBatch(NS, memories=[memory(2)]),))
        writer.start()
        time.sleep(0.1)
        assert writer.is_alive() and "m2" not in store._vectors[NS].row_of  # waits for the read
        leave.set()
        for t in (reader, writer):
            t.join(5)
        assert "m2" in store._vectors[NS].row_of
    finally:
        store.close()


def test_a_namespace_is_loaded_once_on_first_use_and_never_served_half_loaded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening reads no vectors; concurrent first readers wait for the one load, and all see
    the whole namespace (ADR 0068)."""
    from graphmem.store.ann import load as ann_load

    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=[memory(i) for i in range(50)]))
    store.close()
    loads: list[str] = []
    real = ann_load.load

    def slow(*args: object, **kwargs: object) -> object:
        loads.append(str(args[1]))
        time.sleep(0.2)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ann_load, "load", slow)
    store = open_store(tmp_path)
    try:
        assert store._vectors == {} and loads == []
        answers: list[list[str]] = []
        threads = [threading.Thread(target=lambda: answers.append(
            [i for i, _ in store.vector_topk(NS, vec(7), 50)])) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert loads == [NS] and len(answers) == 4
        assert all(len(a) == 50 and a[0] == "m7" for a in answers)
    finally:
        store.close()


def test_readers_and_writers_together_lose_nothing(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    errors: list[BaseException] = []
    writers, per_writer = 3, 40
    done = threading.Event()

    def write(w: int) -> None:
        try:
            for j in range(per_writer):
                store.apply(WriteBatch(NS, memories=[memory(1000 * w + j)]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def read(r: int) -> None:
        try:
            while not done.is_set():
                hits = store.vector_topk(NS, vec(r), 5)
                got = store.get_memories(NS, [i for i, _ in hits])
                assert set(got) == {i for i, _ in hits}  # the index never runs ahead of SQLite
                store.keyword_candidates(NS, ["note"], 10)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    try:
        readers = [threading.Thread(target=read, args=(r,)) for r in range(4)]
        ws = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in [*readers, *ws]:
            t.start()
        for t in ws:
            t.join(60)
        done.set()
        for t in readers:
            t.join(60)
        assert not errors, errors
        assert len(store._vectors[NS]) == writers * per_writer
        assert store.counts(NS).memories and sum(store.counts(NS).memories.values()) == \
            writers * per_writer
    finally:
        store.close()


def test_the_full_text_index_is_merged_as_writes_pile_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write leaves FTS5 a segment that every query reads; once enough rows were
    written since the last merge (a quarter of the store, at least ``_FTS_MERGE_MIN``), the
    write merges the index - and the keyword search answers as before."""
    import graphmem.store.sqlite.store as sqlite_module

    monkeypatch.setattr(sqlite_module, "_FTS_MERGE_MIN", 30)
    store = open_store(tmp_path)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        for i in range(0, 28, 4):
            store.apply(WriteBatch(NS, memories=[memory(j) for j in range(i, i + 4)]))
        assert not any("optimize" in s for s in statements)  # 28 rows written: not yet
        before = store.keyword_candidates(NS, ["w3", "note"], 50)
        store.apply(WriteBatch(NS, memories=[memory(j) for j in range(28, 32)]))
        assert sum("'optimize'" in s for s in statements) == 1
        assert store._fts_written == 0
        after = store.keyword_candidates(NS, ["w3", "note"], 50)
        assert {i for i, _, _ in after} == {i for i, _, _ in before} | {
            f"m{j}" for j in range(28, 32)}
    finally:
        store.close()


def test_maintenance_and_a_bulk_session_leave_the_full_text_index_merged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import graphmem.store.sqlite.store as sqlite_module

    monkeypatch.setattr(sqlite_module, "_FTS_MERGE_AT_CLOSE", 8)
    store = open_store(tmp_path)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    store.apply(WriteBatch(NS, memories=[memory(1)]))
    assert store.compact(1) == 0 and sum("'optimize'" in s for s in statements) == 1
    assert store.compact(1) == 0 and sum("'optimize'" in s for s in statements) == 1  # no news
    store.apply(WriteBatch(NS, memories=[memory(j) for j in range(2, 5)]))
    store.close()  # 3 rows written since: below the bulk mark, closed as it is
    assert sum("'optimize'" in s for s in statements) == 1
    store = open_store(tmp_path)
    statements.clear()
    store.conn.set_trace_callback(statements.append)
    store.apply(WriteBatch(NS, memories=[memory(j) for j in range(10, 20)]))
    store.close()
    assert sum("'optimize'" in s for s in statements) == 1


def test_keyword_candidates_skip_the_ranking_when_every_match_fits(tmp_path: Path) -> None:
    """FTS5's bm25() counts every row of every phrase, the namespace's tags included (the
    whole namespace), before it ranks: retrieval's candidates skip it when all the matches
    fit in ``k`` (the same set, in another order), and rank only when more match (ADR 0022)."""
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=[memory(i) for i in range(12)]))
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)  # the read borrows it (ADR 0023)
        fit = store.keyword_candidates(NS, ["w1", "w2", "w3"], 5)
        assert sorted(i for i, _, _ in fit) == ["m1", "m2", "m3"]
        assert not any("bm25(" in s for s in statements)
        over = store.keyword_candidates(NS, ["note"], 5)
        assert [i for i, _, _ in over] == [i for i, _ in store.keyword_topk(NS, ["note"], 5)]
        assert any("bm25(" in s for s in statements)
    finally:
        store.close()


def test_short_reads_borrow_the_store_connection_unless_a_write_holds_it(
        tmp_path: Path) -> None:
    """A commit empties the page cache of every other connection, so a retrieval's short
    reads run on the store's own connection (its cache stays warm) when no write holds it;
    while a write does, they run on the reading thread's connection without waiting, and
    see the snapshot before the write (ADR 0023). Long scans never borrow."""
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=[memory(i) for i in range(3)]))
        on_store: list[str] = []
        store.conn.set_trace_callback(on_store.append)
        store.apply(WriteBatch(NS, patches=[("m1", {"access_count": 1})]))  # bookkeeping
        on_store.clear()
        assert set(store.get_memories(NS, ["m1", "m2"])) == {"m1", "m2"}
        store.edges_of(NS, ["m1"])
        store.keyword_candidates(NS, ["w1"], 5)
        store.keyword_stats(NS, ["w1"])
        for table in ("FROM memories", "FROM edges", "memory_fts MATCH", "FROM keyword_terms"):
            assert any(table in s for s in on_store), table
        on_store.clear()
        store.counts(NS)  # a scan of the namespace: on the thread's own connection
        assert not any("count(*)" in s for s in on_store)

        writer, finish = write_held_open(store, memory(7))
        on_store.clear()
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.extend(store.get_memories(NS, ["m7"])))
        reader.start()
        reader.join(5)
        assert not reader.is_alive() and got == []  # no wait, and not the write's own view
        assert not any("FROM memories" in s for s in on_store)
        finish.set()
        writer.join(5)
        assert set(store.get_memories(NS, ["m7"])) == {"m7"}
    finally:
        store.close()
