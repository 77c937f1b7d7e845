"""Retrievals computing at once are held to ``retrieval.concurrency`` (ADR 0051): on the
embedded store, by default, to the CPUs; a graph server's retrievals wait on round trips and
are not held; a hot-cache hit never waits for a slot."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.config import GraphMemConfig
from graphmem.engine import retrieval
from graphmem.engine.threads import usable_cpus
from tests.conftest import FakeEmbedder


def _open(tmp_path: Path, **retrieval_cfg: Any) -> GraphMemory:
    config = GraphMemConfig.model_validate({"retrieval": retrieval_cfg})
    mem = GraphMemory.open(tmp_path / "data", config=config, embedder=FakeEmbedder())
    mem.store_many([{"content": f"deploy {i} failed on host {i % 5}"} for i in range(40)],
                   namespace="ops")
    return mem


def _most_at_once(mem: GraphMemory, callers: int) -> int:
    """Run ``callers`` different retrievals together; how many were ranking at one moment."""
    retriever = mem._retriever
    rank = retriever._rank
    lock, active, most = threading.Lock(), [0], [0]

    def slow_rank(*args: Any, **kw: Any) -> Any:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        try:
            time.sleep(0.05)  # long enough for every caller to have arrived
            return rank(*args, **kw)
        finally:
            with lock:
                active[0] -= 1

    retriever._rank = slow_rank  # type: ignore[method-assign]
    threads = [threading.Thread(target=mem.retrieve, args=(f"deploy {i} host", ),
                                kwargs={"namespace": "ops"}) for i in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return most[0]


@pytest.mark.parametrize("bound", [1, 2])
def test_no_more_retrievals_compute_at_once_than_the_bound(tmp_path: Path, bound: int) -> None:
    with _open(tmp_path, concurrency=bound) as mem:
        assert _most_at_once(mem, 6) == bound


def test_zero_means_no_bound(tmp_path: Path) -> None:
    with _open(tmp_path, concurrency=0) as mem:
        assert _most_at_once(mem, 6) > 2


def test_the_default_holds_the_embedded_store_to_the_cpus(tmp_path: Path) -> None:
    with _open(tmp_path) as mem:
        slots = mem._retriever._slots
        assert slots is not None
        got = [slots.acquire(blocking=False) for _ in range(usable_cpus() + 1)]
        assert got == [True] * usable_cpus() + [False]


def test_a_graph_servers_retrievals_are_not_held() -> None:
    assert retrieval._slots(None, cpu_bound=False) is None
    assert retrieval._slots(None, cpu_bound=True) is not None


def test_a_cache_hit_does_not_wait_for_a_slot(tmp_path: Path) -> None:
    with _open(tmp_path, concurrency=1) as mem:
        first = mem.retrieve("deploy 3 host", namespace="ops")
        slots = mem._retriever._slots
        assert slots is not None and slots.acquire(blocking=False)  # every slot busy
        try:
            done: list[Any] = []
            t = threading.Thread(target=lambda: done.append(
                mem.retrieve("deploy 3 host", namespace="ops")))
            t.start()
            t.join(5)
            assert done and [r.memory.id for r in done[0]] == [r.memory.id for r in first]
        finally:
            slots.release()
