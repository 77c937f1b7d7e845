"""A large namespace's two vector searches run at once (ADR 0070): the context field's on a
spare thread of the retrieval pool while the computing thread searches the content field;
with no spare thread (all computing retrievals, or no pool) the computing thread searches
both itself, and never waits for a turn of its own."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.config import GraphMemConfig
from graphmem.store.ann.index import VectorIndex
from graphmem.store.sqlite.store import SQLiteStore
from tests.conftest import FakeEmbedder

QUESTIONS = ["deploy failed on host 3", "backup of the billing database", "rotate the keys"]


def _open(folder: Path, concurrency: int, ann_min: int = 50) -> GraphMemory:
    config = GraphMemConfig.model_validate({
        "retrieval": {"concurrency": concurrency},
        "tuning": {"ann_min": ann_min, "ann_build_in_background": False}})
    return GraphMemory.open(folder, config=config, embedder=FakeEmbedder())


def _fill(mem: GraphMemory) -> None:
    topics = ["deploy", "backup", "keys", "billing", "host"]
    mem.store_many([{"content": f"{topics[i % 5]} note {i} about {topics[(i * 3) % 5]} {i % 7}",
                     "session_id": f"s{i % 4}"} for i in range(160)], namespace="ops")


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """(field, thread name) of every vector search, in the order they began."""
    seen: list[tuple[str, str]] = []
    topk = VectorIndex.topk

    def recorded(self: VectorIndex, *args: Any, **kw: Any) -> Any:
        seen.append((kw.get("field", "content"), threading.current_thread().name))
        return topk(self, *args, **kw)

    monkeypatch.setattr(VectorIndex, "topk", recorded)
    yield seen


def _answers(mem: GraphMemory) -> list[list[str]]:
    """Each question's results in order, read without recording an access."""
    r = mem._retriever
    return [[x.memory.id for x in r.retrieve(r.query(q, "ops"), touch=False)]
            for q in QUESTIONS]


def test_the_context_field_is_searched_on_a_spare_thread(
        tmp_path: Path, searches: list[tuple[str, str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the content search waits (bounded) until the context search has begun: a tiny search
    # may otherwise end before a pool thread wakes, and the caller then rightly runs it itself
    begun, topk = threading.Semaphore(0), VectorIndex.topk

    def gated(self: VectorIndex, *args: Any, **kw: Any) -> Any:
        if kw.get("field", "content") == "context":
            begun.release()
        elif threading.current_thread().name.startswith("graphmem-retrieval"):
            begun.acquire(timeout=5)
        return topk(self, *args, **kw)

    with _open(tmp_path, concurrency=2) as mem:
        _fill(mem)
        monkeypatch.setattr(VectorIndex, "topk", gated)
        assert isinstance(mem.backend, SQLiteStore)
        assert mem.backend.ann_states()["ops"] in ("built", "loaded")  # faiss serves
        searches.clear()
        pooled = _answers(mem)
        threads = {field: {name for f, name in searches if f == field}
                   for field in ("content", "context")}
        assert all(name.startswith("graphmem-retrieval") for names in threads.values()
                   for name in names)
        # each question's two searches ran on two threads of the pool
        pairs = list(zip(searches[::2], searches[1::2], strict=True))
        assert len(pairs) == len(QUESTIONS)
        assert all({a[0], b[0]} == {"content", "context"} and a[1] != b[1] for a, b in pairs)
    monkeypatch.setattr(VectorIndex, "topk", topk)
    with _open(tmp_path, concurrency=0) as mem:  # the caller's thread alone: the same answers
        searches.clear()
        assert _answers(mem) == pooled
        assert {name for _, name in searches} == {threading.current_thread().name}


def test_without_a_spare_thread_the_computing_thread_searches_both(
        tmp_path: Path, searches: list[tuple[str, str]]) -> None:
    with _open(tmp_path, concurrency=1) as mem:  # one pool thread: it never has a spare
        _fill(mem)
        searches.clear()
        done = threading.Event()

        def ask() -> None:
            _answers(mem)
            done.set()
        threading.Thread(target=ask, daemon=True).start()
        assert done.wait(30), "a retrieval waited for a turn of its own"
        assert len({name for _, name in searches}) == 1


def test_a_small_namespace_searches_both_fields_on_one_thread(
        tmp_path: Path, searches: list[tuple[str, str]]) -> None:
    with _open(tmp_path, concurrency=2, ann_min=10_000) as mem:  # exact numpy: sub-millisecond
        _fill(mem)
        searches.clear()
        _answers(mem)
        assert len({name for _, name in searches}) == 1


def test_beside_runs_the_work_itself_when_no_thread_is_free(tmp_path: Path) -> None:
    with _open(tmp_path, concurrency=2) as mem:
        retriever = mem._retriever
        assert retriever.beside(lambda: threading.current_thread().name)() == \
            threading.current_thread().name  # no pool yet
        retriever._pool = ThreadPoolExecutor(1, thread_name_prefix="busy")
        release = threading.Event()
        retriever._pool.submit(release.wait)  # its one thread is busy
        wait = retriever.beside(lambda: threading.current_thread().name)
        assert wait() == threading.current_thread().name
        release.set()
        started = threading.Event()

        def name() -> str:
            started.set()
            return threading.current_thread().name
        wait = retriever.beside(name)
        assert started.wait(10)  # the free thread took it: the wait is for its result
        assert wait().startswith("busy")


def test_a_failing_search_returns_only_after_the_spare_threads_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's read guard is held around both searches: if the computing thread's search
    fails, the call still waits for the spare thread's before it gives the guard back."""
    begun, ended, topk = threading.Event(), threading.Event(), VectorIndex.topk

    def failing(self: VectorIndex, *args: Any, **kw: Any) -> Any:
        if kw.get("field", "content") == "context":
            begun.set()
            time.sleep(0.3)
            ended.set()
            return topk(self, *args, **kw)
        assert begun.wait(5)
        raise RuntimeError("the content search failed")

    with _open(tmp_path, concurrency=2) as mem:
        _fill(mem)
        monkeypatch.setattr(VectorIndex, "topk", failing)
        with pytest.raises(RuntimeError, match="content search failed"):
            _answers(mem)
        assert ended.is_set()  # the other search was back before the error came out
