"""Test doubles for code that uses graphmem: embedders without a model and a clock that moves
only when told. Pass them to ``GraphMemory.open(..., embedder=..., clock=...)``.

Example:
    >>> import tempfile
    >>> from graphmem import GraphMemory
    >>> clock = Clock()
    >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=FakeEmbedder(), clock=clock) as mem:
    ...     m = mem.store("the deploy failed twice", namespace="ops")
    ...     clock.advance(days=1)
    ...     mem.retrieve("deploy failed", namespace="ops")[0].memory.id == m.id
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np

from graphmem.rules.text import Analyzer


class RandomEmbedder:
    """Seeded random unit vectors per text: no model cost, stable across calls.

    Example:
        >>> e = RandomEmbedder()
        >>> bool(np.allclose(e.embed(["x"]), e.embed(["x"])))
        True
    """

    dim = 384

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


class FakeEmbedder:
    """Bag of stemmed words hashed into 384 dims: texts sharing words are similar (for tests
    about something else than embedding quality). ``calls`` counts model calls.

    Example:
        >>> e = FakeEmbedder()
        >>> a, b, c = e.embed(["deploy failed", "the deploy failed", "lunch at noon"])
        >>> bool(a @ b > 0.9 > a @ c), e.calls
        (True, 1)
    """

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
    """A clock that stands still until ``advance``d (default start: 2026-01-01 12:00 UTC).

    Example:
        >>> clock = Clock()
        >>> clock.advance(hours=2)
        >>> clock().isoformat()
        '2026-01-01T14:00:00+00:00'
    """

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)
