"""Each engine's full-text pool: retrieval asks the store's own unless configured (ADR 0038)."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.config import TuningConfig

NS = "ops"
WORDS = ["deploy", "rollback", "migration", "cache", "index", "queue", "billing", "login"]


def _asked(mem: GraphMemory) -> list[int]:
    asked: list[int] = []
    inner = mem.backend.keyword_candidates

    def spy(namespace: str, terms: Any, k: int, **kwargs: Any) -> Any:
        asked.append(k)
        return inner(namespace, terms, k, **kwargs)

    mem.backend.keyword_candidates = spy  # type: ignore[method-assign]
    return asked


def test_the_store_sets_the_pool_unless_the_config_does(mem: GraphMemory) -> None:
    want = {"SQLiteStore": 300, "CypherStore": 1000}[type(mem.backend).__name__]
    assert mem.backend.keyword_pool == want
    mem.store_many([{"content": f"the {w} failed on day {i}"}
                    for i, w in enumerate(WORDS * 3)], namespace=NS)
    asked = _asked(mem)
    mem.retrieve("why did the rollback fail", namespace=NS, record_access=False)
    assert asked == [want]
    mem._retriever.ranking.config = mem.config.model_copy(
        update={"tuning": TuningConfig(keyword_pool=120)})
    mem.retrieve("why did the login fail", namespace=NS, record_access=False)
    assert asked == [want, 120]


def test_a_pool_must_be_positive() -> None:
    with pytest.raises(ValueError):
        TuningConfig(keyword_pool=0)
    assert TuningConfig().keyword_pool is None
