"""The build's self-check passes a candidate count only when its probes' recall clears the bar
by a standard error (ADR 0052): a count that samples just over the bar is not kept."""

from __future__ import annotations

import numpy as np
import pytest

from graphmem.store.ann import keeper as ann_keeper
from graphmem.store.ann.keeper import self_check

N, DIM, FIRST = 2000, 16, 100


class Field:
    """Candidates for each probe: every row, except that at the first count ``degraded``
    probes miss their nearest neighbour (a recall of 0.9 for them, 1.0 for the rest)."""

    def __init__(self, content: np.ndarray, pks: np.ndarray, degraded: set[int]) -> None:
        self.content, self.pks, self.degraded = content, pks, degraded

    def search_many(self, queries: np.ndarray, count: int) -> list[np.ndarray]:
        out = []
        for q in queries:
            i = int(np.argmax(self.content @ q))  # the probe itself
            keys = self.pks
            if count == FIRST and i in self.degraded:
                scores = self.content @ q
                scores[i] = -np.inf
                keys = np.delete(self.pks, int(np.argmax(scores)))
            out.append(keys)
        return out


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray, list[int]]:
    rng = np.random.default_rng(3)
    content = rng.standard_normal((N, DIM)).astype(np.float32)
    content /= np.linalg.norm(content, axis=1, keepdims=True)
    probes = np.random.default_rng(N).choice(N, size=min(ann_keeper._CHECK, N), replace=False)
    return content, np.arange(N, dtype=np.int64) + 1, probes.tolist()


def test_a_count_whose_probes_only_sample_over_the_bar_is_not_kept(
        data: tuple[np.ndarray, np.ndarray, list[int]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    content, pks, probes = data
    assert len(probes) == 512
    field = Field(content, pks, set(probes[:7]))  # mean 1 - 0.7/512 = 0.99863
    bar = 0.9985  # under the mean, over the mean less its standard error (0.99812)
    assert self_check(field, pks, content, FIRST, bar) == 2 * FIRST  # type: ignore[arg-type]
    monkeypatch.setattr(ann_keeper, "_MARGIN_SE", 0.0)  # the mean alone: the first count
    assert self_check(field, pks, content, FIRST, bar) == FIRST  # type: ignore[arg-type]


def test_a_count_clearly_over_the_bar_is_kept(
        data: tuple[np.ndarray, np.ndarray, list[int]]) -> None:
    content, pks, probes = data
    field = Field(content, pks, set(probes[:7]))
    assert self_check(field, pks, content, FIRST, 0.998) == FIRST  # type: ignore[arg-type]
