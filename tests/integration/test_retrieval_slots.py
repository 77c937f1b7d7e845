"""Retrievals computing at once are held to ``retrieval.concurrency`` (ADR 0051): on the
embedded store, by default, to the CPUs; a graph server's retrievals wait on round trips and
are not held; a hot-cache hit never waits for a slot. The held ones compute on a pool of
that many threads in the order they came (ADR 0057): a caller that finished one cannot
take the next turn ahead of those waiting."""

from __future__ import annotations

import sys
import threading
import time
from itertools import pairwise
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
    rank = retriever.ranking.rank
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

    retriever.ranking.rank = slow_rank  # type: ignore[method-assign]
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
        assert mem._retriever._bound == usable_cpus()
        assert _most_at_once(mem, usable_cpus() + 3) == usable_cpus()


def test_a_graph_servers_retrievals_are_not_held() -> None:
    assert retrieval._bound(None, cpu_bound=False) == 0
    assert retrieval._bound(None, cpu_bound=True) == usable_cpus()


def _occupied(mem: GraphMemory) -> threading.Event:
    """Every thread of the retrieval pool busy until the returned event is set."""
    release, started = threading.Event(), threading.Barrier(mem._retriever._bound + 1)

    def hold() -> None:
        started.wait(5)
        release.wait(10)

    pool = mem._retriever._computing_pool()
    assert pool is not None
    for _ in range(mem._retriever._bound):
        pool.submit(hold)
    started.wait(5)
    return release


def test_a_cache_hit_does_not_wait_for_a_slot(tmp_path: Path) -> None:
    with _open(tmp_path, concurrency=1) as mem:
        first = mem.retrieve("deploy 3 host", namespace="ops")
        release = _occupied(mem)  # every slot busy
        try:
            done: list[Any] = []
            t = threading.Thread(target=lambda: done.append(
                mem.retrieve("deploy 3 host", namespace="ops")))
            t.start()
            t.join(5)
            assert done and [r.memory.id for r in done[0]] == [r.memory.id for r in first]
        finally:
            release.set()


def test_retrievals_take_their_turns_in_the_order_they_came(tmp_path: Path) -> None:
    """Four callers each ask ten new questions one after the other, one slot: every caller
    waits its turn behind the others. With a semaphore (ADR 0051 as first built), a caller
    that had just finished took the slot again before the waiters woke, and one caller
    could run many times in a row while the others waited."""
    with _open(tmp_path, concurrency=1) as mem:
        retriever = mem._retriever
        rank = retriever.ranking.rank
        turns: list[str] = []

        def slow_rank(q: Any, *args: Any, **kw: Any) -> Any:
            turns.append(q.text.split()[0])  # the caller's name
            time.sleep(0.01)  # the others wake and queue their next question meanwhile
            return rank(q, *args, **kw)

        retriever.ranking.rank = slow_rank  # type: ignore[method-assign]

        ready = threading.Barrier(4)  # a busy machine starts threads late: all in, then ask

        def caller(n: int) -> None:
            ready.wait()
            for i in range(10):
                mem.retrieve(f"caller{n} deploy host {i}", namespace="ops")

        # a thread gives the GIL up only when it blocks, as a busy server's often cannot:
        # a caller that finished goes on to ask again before a woken waiter may run
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1.0)
        try:
            threads = [threading.Thread(target=caller, args=(n,)) for n in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:
            sys.setswitchinterval(interval)
    assert sorted(set(turns)) == [f"caller{n}" for n in range(4)] and len(turns) == 40
    longest, run = 1, 1
    for a, b in pairwise(turns):
        run = run + 1 if a == b else 1
        longest = max(longest, run)
    # the first turns go to whoever came first; after that, each caller waits behind the
    # others' queued questions, so no caller runs three times in a row
    assert longest <= 2, turns
    # ... and, once every caller has asked (the first round goes as they came), in the same
    # rotation: each caller's next question waits behind the three the others had queued (a
    # semaphore served them in whatever order they woke)
    assert turns[8:] == turns[4:-4], turns


def test_a_retrieval_after_close_is_refused_and_makes_no_pool(tmp_path: Path) -> None:
    from graphmem.errors import GraphMemError

    mem = _open(tmp_path, concurrency=2)
    mem.retrieve("deploy 1 host", namespace="ops")
    assert mem._retriever._pool is not None
    mem.close()
    assert mem._retriever._pool is None
    with pytest.raises(GraphMemError):
        mem.retrieve("deploy 2 host", namespace="ops")
    assert mem._retriever._pool is None  # no threads left behind by a late caller
