"""The hot cache (seed 003): an agent that asks the same question twice within a few seconds
gets the answer from memory. Two caches, per process: query embeddings by text (the model is
the dearest step; an embedding never goes stale), and ranked results by the whole query,
served only while the namespace has seen no write since (``Core.generation``) and younger
than ``CacheConfig.ttl_seconds``. Hits and misses are counted per namespace for ``stats`` and
``/metrics``. Thread-safe: a server's retrievals use it at once."""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime
from typing import Any

import numpy as np

from graphmem.config import CacheConfig
from graphmem.models import RetrievalResult


class HotCache:
    """Results and query embeddings of recent retrievals, least recently used first out.

    Example:
        >>> from datetime import UTC, datetime
        >>> cache = HotCache(CacheConfig(), clock=lambda: datetime(2026, 1, 1, tzinfo=UTC))
        >>> cache.put(("ops", "q"), 0, [])
        >>> cache.get("ops", ("ops", "q"), 0), cache.get("ops", ("ops", "q"), 1)
        ([], None)
        >>> cache.hits["ops"], cache.misses["ops"]
        (1, 1)
    """

    def __init__(self, config: CacheConfig, clock: Callable[[], datetime]) -> None:
        self.config = config
        self.clock = clock
        self._results: OrderedDict[Hashable, tuple[int, datetime, list[RetrievalResult]]] = \
            OrderedDict()
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.config.ttl_seconds > 0

    def get(self, ns: str, key: Hashable, generation: int) -> list[RetrievalResult] | None:
        """Copies of the cached results of ``key`` while fresh, else None (a miss)."""
        if not self.enabled:
            return None
        with self._lock:
            entry = self._results.get(key)
            if entry is not None:
                gen, at, results = entry
                age = (self.clock() - at).total_seconds()
                if gen == generation and 0 <= age <= self.config.ttl_seconds:
                    self._results.move_to_end(key)
                    self.hits[ns] += 1
                    return [_copy(r) for r in results]
                del self._results[key]
            self.misses[ns] += 1
        return None

    def put(self, key: Hashable, generation: int, results: list[RetrievalResult]) -> None:
        if not self.enabled:
            return
        entry = (generation, self.clock(), [_copy(r) for r in results])
        with self._lock:
            self._results[key] = entry
            self._results.move_to_end(key)
            while len(self._results) > self.config.max_entries:
                self._results.popitem(last=False)

    def embedding(self, text: str, embed: Callable[[str], np.ndarray]) -> np.ndarray:
        """The query's embedding, computed once per text while it stays in the cache."""
        if not self.enabled:
            return embed(text)
        with self._lock:
            vec = self._vectors.get(text)
            if vec is not None:
                self._vectors.move_to_end(text)
                return vec
        vec = embed(text)  # outside the lock: other queries embed meanwhile (batched)
        with self._lock:
            self._vectors[text] = vec
            while len(self._vectors) > self.config.max_entries:
                self._vectors.popitem(last=False)
        return vec

    def stats(self, ns: str) -> dict[str, Any]:
        hits, misses = self.hits[ns], self.misses[ns]
        return {"hits": hits, "misses": misses,
                "hit_rate": hits / (hits + misses) if hits + misses else 0.0,
                "ttl_seconds": self.config.ttl_seconds}


def _copy(r: RetrievalResult) -> RetrievalResult:
    return RetrievalResult(r.memory.copy(), r.score, dict(r.terms), r.path, r.disputed,
                           r.disputed_by)
