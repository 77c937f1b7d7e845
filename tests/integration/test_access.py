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
            assert kinds.count("promote") <= 3, kinds


def test_a_retrieval_returns_the_memory_as_its_access_left_it(tmp_path: Path) -> None:
    with GraphMemory.open(tmp_path, embedder=FakeEmbedder(), clock=Clock()) as mem:
        m = mem.store("a memory about tea", namespace=NS)
        first = mem.retrieve("tea", namespace=NS, depth=0)[0].memory
        second = mem.retrieve("tea", namespace=NS, depth=0)[0].memory
        assert (first.id, first.access_count, second.access_count) == (m.id, 1, 2)
        assert mem.search_index("tea", namespace=NS)[0].id == m.id
        assert mem.get(m.id, namespace=NS).access_count == 2  # an index read is no access
