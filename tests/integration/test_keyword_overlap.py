"""The keyword seeds are read while the query is embedded (ADR 0037), with the same answers."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphmem import GraphMemory
from graphmem.bench import synthetic
from graphmem.config import CacheConfig, GraphMemConfig, RetrievalConfig
from graphmem.errors import EmbeddingError, StoreError
from tests.conftest import Clock, FakeEmbedder

NS = "ops"


class WaitingEmbedder(FakeEmbedder):
    """Embeds a query only once the keyword seeds were read (or after ``patience``)."""

    def __init__(self, read: threading.Event, patience: float = 3.0) -> None:
        super().__init__()
        self.read, self.patience = read, patience
        self.saw_read: list[bool] = []
        self.fail = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 1 and texts[0].startswith("why"):
            self.saw_read.append(self.read.wait(self.patience))
            if self.fail:
                raise EmbeddingError("the model failed")
        return super().embed(texts)


def _open(path: Path, embedder: Any, *, overlap: bool = True) -> GraphMemory:
    config = GraphMemConfig(cache=CacheConfig(ttl_seconds=0),
                            retrieval=RetrievalConfig(overlap=overlap))
    return GraphMemory.open(str(path), config=config, embedder=embedder, clock=Clock())


def _spy(mem: GraphMemory, read: threading.Event, threads: list[str]) -> None:
    inner = mem.backend.keyword_candidates

    def keyword_candidates(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        try:
            return inner(*args, **kwargs)
        finally:
            read.set()

    mem.backend.keyword_candidates = keyword_candidates  # type: ignore[method-assign]


def _computing(thread: str) -> bool:
    """The thread that computes the retrieval: one of the retrieval pool's (ADR 0057; the
    embedded store holds retrievals to its CPUs), not the keyword helper's."""
    return thread.startswith("graphmem-retrieval")


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    with _open(tmp_path / "data", FakeEmbedder()) as mem:
        mem.store_many(synthetic.records(300), namespace=NS)
    return tmp_path / "data"


def test_the_seeds_are_read_while_the_query_is_embedded(filled: Path) -> None:
    read, threads = threading.Event(), list[str]()
    embedder = WaitingEmbedder(read)
    with _open(filled, embedder) as mem:
        _spy(mem, read, threads)
        found = mem.retrieve("why was the billing service slowed down", namespace=NS)
    assert found and embedder.saw_read == [True]
    assert threads and threads[0].startswith("graphmem-keywords")


def test_without_the_overlap_the_seeds_wait_for_the_vector(filled: Path) -> None:
    read, threads = threading.Event(), list[str]()
    embedder = WaitingEmbedder(read, patience=0.2)
    with _open(filled, embedder, overlap=False) as mem:
        _spy(mem, read, threads)
        mem.retrieve("why was the billing service slowed down", namespace=NS)
    assert embedder.saw_read == [False] and len(threads) == 1 and _computing(threads[0])


def test_among_other_retrievals_the_caller_reads_its_own_seeds(filled: Path) -> None:
    # ADR 0051: with another retrieval computing, the cores are busy: no hand-off
    read, threads = threading.Event(), list[str]()
    embedder = WaitingEmbedder(read, patience=0.2)
    with _open(filled, embedder) as mem:
        _spy(mem, read, threads)
        mem._retriever._active = 1  # another retrieval is computing
        found = mem.retrieve("why was the billing service slowed down", namespace=NS)
        assert mem._retriever._active == 1 and mem._retriever._helper is None
        mem._retriever._active = 0
        mem.retrieve("why did the deploy fail", namespace=NS)  # alone again: the helper
        assert mem._retriever._active == 0
    assert found and embedder.saw_read == [False, True]
    assert _computing(threads[0])
    assert threads[1].startswith("graphmem-keywords")


def test_the_answers_are_the_same_with_and_without_the_overlap(filled: Path) -> None:
    queries = synthetic.queries(25)
    answers = []
    for overlap in (True, False):
        with _open(filled, FakeEmbedder(), overlap=overlap) as mem:
            answers.append([[(r.memory.id, round(r.score, 9), dict(r.terms))
                             for r in mem.retrieve(q, namespace=NS, record_access=False,
                                                   depth=d, limit=20, **options)]
                            for q in queries for d in (0, 1, 2)
                            for options in ({}, {"tiers": ["fast", "medium"]},
                                            {"strategy": "comprehensive"})])
    assert answers[0] == answers[1] and any(answers[0])


def test_a_busy_helper_is_not_waited_for(filled: Path) -> None:
    read, threads = threading.Event(), list[str]()
    embedder = WaitingEmbedder(read, patience=0.2)
    with _open(filled, embedder) as mem:
        _spy(mem, read, threads)
        mem.retrieve("warm the helper up", namespace=NS)
        release = threading.Event()
        threading.Timer(2.0, release.set).start()  # a retrieval that waited would wait 2 s
        helper = mem._retriever._helper
        assert helper is not None
        blockers = [helper.submit(release.wait) for _ in range(2)]  # both its threads
        threads.clear()
        read.clear()
        try:
            found = mem.retrieve("why was the billing service slowed down", namespace=NS)
        finally:
            release.set()
        assert all(b.result() for b in blockers)
    assert found and embedder.saw_read == [False]  # nothing read while it was busy
    assert len(threads) == 1 and _computing(threads[0])  # then by the retrieval itself


def test_errors_on_either_side_reach_the_caller(filled: Path) -> None:
    read = threading.Event()
    embedder = WaitingEmbedder(read, patience=0.5)
    with _open(filled, embedder) as mem:
        embedder.fail = True
        with pytest.raises(EmbeddingError):
            mem.retrieve("why was the billing service slowed down", namespace=NS)
        embedder.fail = False

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise StoreError("the full-text index is gone")

        mem.backend.keyword_candidates = broken  # type: ignore[method-assign]
        with pytest.raises(StoreError, match="full-text"):
            mem.retrieve("why was the billing service slowed down", namespace=NS)


def test_close_stops_the_helper(filled: Path) -> None:
    mem = _open(filled, FakeEmbedder())
    mem.retrieve("why was the billing service slowed down", namespace=NS)
    helper = mem._retriever._helper
    threads = list(getattr(helper, "_threads", ()))
    assert threads and all(t.is_alive() for t in threads)
    mem.close()
    assert mem._retriever._helper is None and not any(t.is_alive() for t in threads)
