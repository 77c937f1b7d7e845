"""Shared fixtures. ``FakeEmbedder`` is only for tests that are about something else than
embedding quality; retrieval-quality tests use the real model (marker ``model``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from graphmem import GraphMemory
from graphmem.text import Analyzer


class FakeEmbedder:
    """Bag of stemmed words hashed into 384 dims: texts sharing words are similar."""

    dim = 384

    def __init__(self) -> None:
        self.analyzer = Analyzer()
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in self.analyzer.terms(text) or ["empty"]:
                h = int(hashlib.md5(term.encode()).hexdigest(), 16)
                out[row, h % self.dim] += 1.0 if (h >> 20) % 2 else -1.0
            norm = np.linalg.norm(out[row])
            out[row] /= norm if norm else 1.0
        return out


class Clock:
    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def mem(tmp_path: Path, clock: Clock, fake_embedder: FakeEmbedder) -> Iterator[GraphMemory]:
    with GraphMemory.open(tmp_path / "data", clock=clock, embedder=fake_embedder) as m:
        yield m


@pytest.fixture(scope="session")
def real_embedder():  # type: ignore[no-untyped-def]
    from graphmem.embedding import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()
