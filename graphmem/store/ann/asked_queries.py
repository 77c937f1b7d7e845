"""The product codes' candidates, checked against the questions a namespace is asked (ADR 0027).

The self-check at build (``ann_keeper.self_check``) probes the codes with the namespace's own
vectors. A question is harder: it is not a stored vector, and its neighbours sit further off.
On 1M MiniLM memories the probes found 1.000 of the exact top-10 with 250 candidates where
questions found 0.958 (0.990 with 500, 0.997 with 1,000).

So the store keeps the last ``SIZE`` question vectors of each coded namespace and, after
``SIZE`` questions and then each time their count has doubled, checks in the background that
the re-scored candidates still find ``ann_min_recall`` of their exact top-10; when they do not,
the candidates are doubled until they do (up to ``MAX_FETCH``). They are never lowered by
this check (a rebuild's self-check starts from the count learned here).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from graphmem.store.ann.vectors import VectorIndex

#: questions kept per namespace, and the first check's count
SIZE = 64
#: rows of the reference scan per read of the store's lock
BLOCK = 16_384
#: a check raises the candidates only when the questions' recall is this far below the
#: target (the sampling error of 64 questions x 10 at 0.98 is ~0.0055; random vectors at
#: 300k, on the target already, doubled on that noise and their p95 rose 11.6 -> 21.3 ms)
TOLERANCE = 0.01
#: once raising, a count passes when the questions' recall less this many standard errors
#: holds the target (ADR 0054; the build's self-check has the same margin, ADR 0052)
MARGIN_SE = 1.0


class AskedQueries:
    """A ring of the last ``size`` question vectors (thread-safe: reads record them).

    Example:
        >>> asked = AskedQueries(2, size=4)
        >>> [asked.add(np.array([i, 1.0], np.float32)) for i in (0, 1, 1, 2, 3, 4)]
        [False, False, False, False, True, False]
        >>> asked.take().tolist(), asked.seen
        ([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0], [4.0, 1.0]], 5)
    """

    def __init__(self, dim: int, size: int = SIZE) -> None:
        self._rows = np.zeros((size, dim), dtype=np.float32)
        self._lock = threading.Lock()
        self.seen = 0  # questions recorded
        self.checked_at = 0  # ``seen`` at the last check (0: none yet)

    def add(self, query: np.ndarray) -> bool:
        """Record one question; True when a check is due (``SIZE`` questions, then each
        doubling of the count since). A question the ring holds already (the same vector:
        asked again, or the hot cache's TTL passed) is not recorded again: the check's 64
        questions are 64 different ones."""
        with self._lock:
            filled = min(self.seen, len(self._rows))
            if filled and bool((self._rows[:filled] == query).all(axis=1).any()):
                return False
            self._rows[self.seen % len(self._rows)] = query
            self.seen += 1
            due = self.seen >= max(len(self._rows), 2 * self.checked_at)
            if due:
                self.checked_at = self.seen
            return due

    def take(self) -> np.ndarray:
        """The recorded questions, oldest first (fewer than ``size`` before the ring fills)."""
        with self._lock:
            size = len(self._rows)
            if self.seen < size:
                return self._rows[:self.seen].copy()
            start = self.seen % size
            return np.concatenate([self._rows[start:], self._rows[:start]])


def recall_at(queries: np.ndarray, exact: list[set[str]],
              answer: Callable[[np.ndarray, int], list[str]], count: int, k: int = 10) -> float:
    """Mean share of each question's exact top-k that ``answer(q, count)`` finds."""
    return _hits_at(queries, exact, answer, count, k)[0]


def _hits_at(queries: np.ndarray, exact: list[set[str]],
             answer: Callable[[np.ndarray, int], list[str]], count: int,
             k: int = 10) -> tuple[float, float]:
    """``recall_at`` and its standard error over the questions."""
    hits = [len(set(answer(q, count)[:k]) & want) / max(1, len(want))
            for q, want in zip(queries, exact, strict=True)]
    if not hits:
        return 1.0, 0.0
    return float(np.mean(hits)), float(np.std(hits) / np.sqrt(len(hits)))


def learn(queries: np.ndarray, exact: list[set[str]],
          answer: Callable[[np.ndarray, int], list[str]], start: int, ceiling: int,
          min_recall: float, tolerance: float = TOLERANCE) -> tuple[int, float]:
    """The candidates to keep and the recall they hold: ``start`` while its answers hold
    ``min_recall - tolerance`` of the exact top-10 for ``queries`` (64 questions estimate a
    recall within ~0.006: one just under ``min_recall`` is noise as often as not); else the
    fewest of ``start`` doubled (up to ``ceiling``) that hold ``min_recall`` by their mean
    less ``MARGIN_SE`` standard errors (ADR 0054, the build self-check's rule: a count that
    only samples over the bar does not pass).

    Example:
        >>> exact = [{"a"}]
        >>> learn(np.zeros((1, 2)), exact, lambda q, c: ["a"] if c >= 400 else ["b"], 100,
        ...       16_384, 0.98)
        (400, 1.0)
    """
    got = recall_at(queries, exact, answer, start)
    if got >= min_recall - tolerance:
        return start, got
    count, se = start, 0.0
    while got - MARGIN_SE * se < min_recall and count < ceiling:
        count = min(count * 2, ceiling)
        got, se = _hits_at(queries, exact, answer, count)
    return count, got


def reference(index: VectorIndex, queries: np.ndarray, k: int = 10, keep: int = 256,
              guard: Callable[[], AbstractContextManager[object]] = nullcontext,
              ) -> list[set[str]]:
    """The exact top-k ids of each query among the index's active content rows (the codes
    never answer it): blocks of rows scored by the int8 copies once filled (else the float32
    rows, exact already), the best ``keep`` of each query kept; of those, the rows within the
    copies' error of the k-th are re-scored with their float32 rows (~25 a question at 1M).
    ``guard``: a read of the store's lock, taken per block and per question (not for the
    whole scan: a write waits one block, ~15 ms; a delete that moves a row midway can
    shift a reference by that row)."""
    qs = np.asarray(queries, dtype=np.float32)
    m = len(qs)
    # the best ``keep`` rows of each question so far (a row per question), merged block by
    # block in a few whole-array steps: a loop per question held the GIL from the queries
    # being served; questions as rows keep each partition contiguous (as columns it was 1.2
    # of a 2.9 s check at 1M)
    rows = np.zeros((m, 0), dtype=np.int64)
    got = np.zeros((m, 0), dtype=np.float32)
    start = 0
    while True:
        with guard():
            n = len(index)
            if start >= n or m == 0:
                break
            end = min(n, start + BLOCK)
            scores = np.ascontiguousarray(index.scores_block(start, end, qs).T)
        take = min(keep, end - start)
        part = np.argpartition(-scores, take - 1, axis=1)[:, :take]
        rows = np.concatenate([rows, start + part], axis=1)
        got = np.concatenate([got, np.take_along_axis(scores, part, axis=1)], axis=1)
        if rows.shape[1] > keep:
            top = np.argpartition(-got, keep - 1, axis=1)[:, :keep]
            rows = np.take_along_axis(rows, top, axis=1)
            got = np.take_along_axis(got, top, axis=1)
        start = end
    order = np.argsort(-got, axis=1)
    best = [(np.take_along_axis(rows, order, axis=1)[j], np.take_along_axis(got, order, axis=1)[j])
            for j in range(m)]
    out: list[set[str]] = []
    for q, (rows, got) in zip(qs, best, strict=True):
        rows, got = rows[np.isfinite(got)], got[np.isfinite(got)]
        with guard():
            compact = index.compact
            if compact is not None and compact.ready and len(got) > k:
                rows = rows[got >= got[k - 1] - 2 * compact.error("content", q)]
            rows = rows[rows < len(index)]
            out.append({i for i, _ in index.exact_top(rows, q, k)})
    return out
