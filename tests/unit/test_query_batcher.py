"""Concurrent query embeddings share model calls, each caller gets its own vector, errors
reach every caller of the failed batch, and a lone query is never held back."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from graphmem.engine.query_batcher import QueryBatcher
from graphmem.errors import EmbeddingError


class SlowEmbedder:
    """Each call takes 50 ms; the vector says which text it is for."""

    dim = 4

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        time.sleep(0.05)
        if self.fail_on in texts:
            raise EmbeddingError("the model failed")
        return np.array([[float(t.split()[-1]), 0, 0, 1] for t in texts], dtype=np.float32)


def run_concurrently(batcher: QueryBatcher, n: int) -> dict[int, object]:
    out: dict[int, object] = {}
    start = threading.Barrier(n)

    def ask(i: int) -> None:
        start.wait()
        try:
            out[i] = batcher.embed_one(f"query {i}")
        except EmbeddingError as exc:
            out[i] = exc

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return out


def test_concurrent_queries_share_calls_and_each_gets_its_own_vector() -> None:
    inner = SlowEmbedder()
    batcher = QueryBatcher(inner)
    out = run_concurrently(batcher, 12)
    assert all(float(out[i][0]) == i for i in range(12))  # type: ignore[index]
    assert sorted(t for call in inner.calls for t in call) == sorted(
        f"query {i}" for i in range(12))  # each text embedded once
    assert len(inner.calls) < 12 and max(len(c) for c in inner.calls) > 1


def test_a_batch_is_at_most_max_batch() -> None:
    inner = SlowEmbedder()
    out = run_concurrently(QueryBatcher(inner, max_batch=3), 10)
    assert len(out) == 10 and max(len(c) for c in inner.calls) <= 3


def test_an_error_reaches_every_caller_of_its_batch_and_no_other() -> None:
    inner = SlowEmbedder(fail_on="query 5")
    out = run_concurrently(QueryBatcher(inner), 8)
    failed = {i for i, v in out.items() if isinstance(v, EmbeddingError)}
    batch = next(c for c in inner.calls if "query 5" in c)
    assert failed == {int(t.split()[-1]) for t in batch}
    assert all(float(out[i][0]) == i for i in set(range(8)) - failed)  # type: ignore[index]


def test_a_lone_query_is_embedded_alone() -> None:
    inner = SlowEmbedder()
    batcher = QueryBatcher(inner)
    assert float(batcher.embed_one("query 7")[0]) == 7
    assert inner.calls == [["query 7"]]
    with pytest.raises(EmbeddingError):
        QueryBatcher(SlowEmbedder(fail_on="query 1")).embed_one("query 1")
