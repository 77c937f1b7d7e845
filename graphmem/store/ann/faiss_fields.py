"""The faiss index of a large namespace's field: one ``index_factory`` string whose search
returns ``K_FACTOR`` candidates per result asked, for the caller to re-score with the float
rows it already holds (``index.py``); filters as an ``IDSelectorBitmap``.

Positions in the index are the rows' *keys* (``VectorIndex``): a key is given once and never
reused, so a deleted or re-embedded row leaves its old position behind, which no selector
lets through; the index is rebuilt when such positions pile up (ADR 0068).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: inverted lists of 8-bit codes (ADR 0068 has the choice, on MiniLM vectors); no float
#: refine stage: it would hold a second copy of the rows the caller re-scores with
FACTORY = "IVF{lists},SQ8"
#: candidates returned per result asked, for the float re-scoring
K_FACTOR = 8
#: inverted lists probed per query: a fixed number, so a search's cost grows as sqrt(n), not
#: as n (ADR 0068, second amendment)
PROBES = 16
#: the coarse k-means and SQ8 ranges are trained on at most this many rows
TRAIN_MAX = 65_536
#: OpenMP's own thread count (the CPUs this process may use), read before ``search`` first
#: sets the calling thread's
_omp_threads: list[int] = []


def lists_for(n: int) -> int:
    """~sqrt(n) inverted lists, at most a fortieth of the rows (k-means wants ~40 a list).

    Example:
        >>> lists_for(100_000), lists_for(1_000_000), lists_for(10)
        (316, 1000, 1)
    """
    return max(1, min(round(math.sqrt(n)), n // 40, 4096))


def build(vectors: np.ndarray, seed: int = 0) -> Any:
    """An index over ``vectors`` (position = row), trained on a sample of them."""
    import faiss

    n, dim = vectors.shape
    lists = lists_for(n)
    index = faiss.index_factory(dim, FACTORY.format(lists=lists), faiss.METRIC_INNER_PRODUCT)
    take = np.sort(np.random.default_rng(seed).choice(n, TRAIN_MAX, replace=False)) \
        if n > TRAIN_MAX else slice(None)
    index.train(np.ascontiguousarray(vectors[take], dtype=np.float32))
    for start in range(0, n, 65_536):
        index.add(np.ascontiguousarray(vectors[start:start + 65_536], dtype=np.float32))
    return index


def selector(keys: np.ndarray, size: int) -> tuple[Any, np.ndarray]:
    """A selector letting ``keys`` through (and the bitmap it reads: keep both alive)."""
    import faiss

    bits = np.zeros(size, dtype=bool)
    bits[keys] = True
    packed = np.packbits(bits, bitorder="little")
    return faiss.IDSelectorBitmap(len(packed), faiss.swig_ptr(packed)), packed


def search(index: Any, queries: np.ndarray, k: int, sel: Any) -> np.ndarray:
    """Keys of the best ``k * K_FACTOR`` positions by the codes that ``sel`` lets through,
    per query (-1: none)."""
    import faiss

    # this thread's: one query gains less than OpenMP's wake-up; a write's batch of queries
    # spreads over the cores (ADR 0068)
    if not _omp_threads:
        _omp_threads.append(faiss.omp_get_max_threads())
    faiss.omp_set_num_threads(1 if len(queries) == 1 else _omp_threads[0])
    ivf = faiss.SearchParametersIVF()
    ivf.sel, ivf.nprobe = sel, min(int(faiss.extract_index_ivf(index).nlist), PROBES)
    _, keys = index.search(np.ascontiguousarray(queries, dtype=np.float32), k * K_FACTOR,
                           params=ivf)
    return np.asarray(keys)
