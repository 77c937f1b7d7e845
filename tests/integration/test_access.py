"""Access bookkeeping under concurrency: no retrieval or full read loses an increment."""

from __future__ import annotations

import threading
from pathlib import Path

from graphmem import GraphMemory
from tests.conftest import Clock, FakeEmbedder

NS = "acc"


def _hammer(n_threads: int, rounds: int, fn: object) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(n_threads)

    def work() -> None:
        try:
            start.wait()
            for _ in range(rounds):
                fn()  # type: ignore[operator]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_concurrent_retrievals_and_reads_count_every_access(tmp_path: Path) -> None:
    """Counts used to be absolute values computed from the ranked records outside the write
    lock: two retrievals of one memory at once wrote the same count+1 (an access lost)."""
    clock = Clock()
    with GraphMemory.open(tmp_path, embedder=FakeEmbedder(), clock=clock) as mem:
        ids = [mem.store(f"the deploy runbook step {i}", namespace=NS).id for i in range(4)]
        threads, rounds = 8, 15
        _hammer(threads, rounds, lambda: mem.retrieve("deploy runbook", namespace=NS,
                                                      limit=4, depth=0))
        _hammer(threads, rounds, lambda: mem.entries(ids[:2], namespace=NS))
        counts = {m.id: m.access_count for m in mem.entries(ids, namespace=NS, touch=False)}
        for i in ids[:2]:
            assert counts[i] == 2 * threads * rounds, counts
        for i in ids[2:]:
            assert counts[i] == threads * rounds, counts
        # promoted once each, not once per racing retrieval
        for i in ids:
            kinds = [t.kind.value for t in mem.transitions(i, namespace=NS)]
            assert kinds.count("promotion") == 1, kinds  # the 24 h cooldown holds the rest


def test_a_retrieval_returns_the_memory_as_its_access_left_it(tmp_path: Path) -> None:
    with GraphMemory.open(tmp_path, embedder=FakeEmbedder(), clock=Clock()) as mem:
        m = mem.store("a memory about tea", namespace=NS)
        first = mem.retrieve("tea", namespace=NS, depth=0)[0].memory
        second = mem.retrieve("tea", namespace=NS, depth=0)[0].memory
        assert (first.id, first.access_count, second.access_count) == (m.id, 1, 2)
        assert mem.search_index("tea", namespace=NS)[0].id == m.id
        assert mem.get(m.id, namespace=NS).access_count == 2  # an index read is no access


def _deferred(tmp_path: Path, clock: Clock) -> GraphMemory:
    from graphmem.config import GraphMemConfig, RetrievalConfig

    return GraphMemory.open(tmp_path, embedder=FakeEmbedder(), clock=clock,
                            config=GraphMemConfig(retrieval=RetrievalConfig(defer_access=True)))


def test_deferred_accesses_count_every_retrieval_in_merged_batches(tmp_path: Path) -> None:
    """``retrieval.defer_access`` (the server's default): retrievals queue their accesses; the
    writer records all that queued meanwhile in one batch, one patch per memory, and still
    counts every access and promotes once."""
    clock = Clock()
    with _deferred(tmp_path, clock) as mem:
        ids = [mem.store(f"the deploy runbook step {i}", namespace=NS).id for i in range(4)]
        with mem._write_lock:  # the writer waits: everything below queues into one batch
            _hammer(8, 5, lambda: mem.retrieve("deploy runbook", namespace=NS, limit=4,
                                               depth=0))
            assert mem.entries(ids, namespace=NS, touch=False)[0].access_count == 0
        mem.core.settle()
        counts = {m.id: m.access_count for m in mem.entries(ids, namespace=NS, touch=False)}
        assert counts == dict.fromkeys(ids, 40)
        for i in ids:  # the access rule promotes once, the cooldown holds the rest
            kinds = [t.kind.value for t in mem.transitions(i, namespace=NS)]
            assert kinds.count("promotion") == 1, kinds


def test_a_deferred_access_is_recorded_at_its_retrieval_time(tmp_path: Path) -> None:
    clock = Clock()
    with _deferred(tmp_path, clock) as mem:
        m = mem.store("a memory about tea", namespace=NS)
        asked_at = clock()
        with mem._write_lock:
            mem.retrieve("tea", namespace=NS, depth=0)
            clock.advance(hours=5)  # before the writer can record it
        mem.core.settle()
        got = mem.entries([m.id], namespace=NS, touch=False)[0]
        assert (got.access_count, got.last_accessed_at) == (1, asked_at)


def test_queued_accesses_survive_close_and_maintenance_settles_them(tmp_path: Path) -> None:
    import time

    clock = Clock()
    mem = _deferred(tmp_path, clock)
    m = mem.store("a memory about tea", namespace=NS)
    closing = threading.Thread(target=mem.close)
    with mem._write_lock:  # the writer takes the first access and waits for the lock ...
        mem.retrieve("tea", namespace=NS, depth=0)
        while not mem._access._busy:
            time.sleep(0.001)
        mem.retrieve("tea", namespace=NS, depth=0)  # ... so the second is still queued
        closing.start()  # when close begins
        while not mem._access._closing:
            time.sleep(0.001)
    closing.join()  # close records the queue before the store closes
    with _deferred(tmp_path, clock) as mem:
        assert mem.entries([m.id], namespace=NS, touch=False)[0].access_count == 2
        settled: list[int] = []
        mem.core.pending.append(lambda: settled.append(1))
        mem.maintain(NS)
        mem.consolidate(NS, dry_run=True)
        assert settled == [1, 1]


def test_the_server_defers_and_the_library_does_not() -> None:
    from graphmem.api.settings import Settings
    from graphmem.config import GraphMemConfig

    assert Settings.from_env({}).memory_config().retrieval.defer_access is True
    assert GraphMemConfig().retrieval.defer_access is False


def test_the_deferred_writer_gathers_searches_into_one_batch_and_settle_hurries_it(
        tmp_path: Path, monkeypatch: object) -> None:
    """Searches queued within the gathering window share one read and one transaction; a
    caller that settles does not wait the window out."""
    import time

    import graphmem.engine.access as access

    monkeypatch.setattr(access, "GATHER_SECONDS", 30.0)  # type: ignore[attr-defined]
    with _deferred(tmp_path, Clock()) as mem:
        m = mem.store("a memory about tea", namespace=NS)
        applies: list[int] = []
        real = mem.core.store.apply

        def counted(batch: object) -> None:
            applies.append(1)
            real(batch)  # type: ignore[arg-type]

        mem.core.store.apply = counted  # type: ignore[method-assign]
        mem.retrieve("tea", namespace=NS, depth=0)
        time.sleep(0.2)  # the writer has woken for the first search (and would write it)
        for _ in range(3):
            mem.retrieve("tea", namespace=NS, depth=0)
        assert applies == []
        started = time.monotonic()
        mem.core.settle()
        assert time.monotonic() - started < 10  # not the 30 s window
        assert applies == [1]
        assert mem.entries([m.id], namespace=NS, touch=False)[0].access_count == 4
