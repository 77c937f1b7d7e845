"""Candidate generation for a large namespace: product-quantised codes of one vector field,
scanned by faiss's fast-scan kernel.

Each vector is stored as ``dim / 2`` four-bit codes (two dimensions per sub-quantizer, 96
bytes for 384 dimensions against 1,536 for float32), and a query scores every code with
SIMD table lookups: 1M codes in ~5.4 ms on one core. The store asks for the best
``candidates`` codes and re-scores those rows with its float32 vectors, so the codes only
choose; on 384-d random vectors (no neighbourhoods, the worst case) 1,000 candidates hold the
exact top-10 at 1M (ADR 0019).

From ``IVF_MIN`` vectors the codes are split into ~sqrt(n) inverted lists by a coarse k-means
(faiss's IVF fast-scan, ADR 0031): a query asking for ``c`` candidates scans only the
``c / PER_PROBE`` lists nearest to it, so the scan no longer grows with the namespace (1M
MiniLM: 3.8 -> ~1 ms a field at the same recall). The candidate count stays the one knob the
self-checks double (more candidates: more lists probed).

Keys are the memories' SQLite row ids (``pk``). Codes are never removed one by one (faiss
rewrites the whole index for a removal: 0.7 s at 1M): a deleted or re-embedded row leaves a
*stale* code behind, which the store skips (its key is gone) or re-scores with the row's
current vector; the keeper rebuilds the index once stale codes pass a share of it.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

#: train the sub-quantizers on at most this many vectors
TRAIN_MAX = 65_536
#: k-means wants ~40 points per centroid (16 per sub-quantizer); a smaller namespace pads its
#: sample with random unit vectors (the re-scoring keeps results exact: few rows, all fetched)
TRAIN_MIN = 1024
#: a field with at least this many vectors gets inverted lists (below, one flat scan costs at
#: most ~2 ms and needs no coarse k-means; the scale check's 30k and 300k stay flat)
IVF_MIN = 500_000
#: candidates asked per list probed (1M MiniLM, 1,000 lists: 1,000 candidates from 128 lists
#: hold recall@10 0.991 after re-scoring in ~1 ms a field, against 3.8 ms for the flat scan).
#: Random vectors (no neighbourhoods) need every list: 8 per list reaches them all while the
#: self-check's doublings are still in reach (16 did not at 8,000 vectors)
PER_PROBE = 8


class CodeField:
    """The codes of one field (cosine on unit vectors: inner product), keyed by int64.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.standard_normal((300, 8)).astype(np.float32)
        >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
        >>> f = CodeField(dim=8)
        >>> f.train(x); f.add(np.arange(300) + 1, x)
        >>> int(f.search(x[7], 20)[0]), len(f)
        (8, 300)
    """

    def __init__(self, dim: int, *, index: Any = None) -> None:
        if dim % 2:
            raise ValueError(f"product codes take an even dimension, not {dim}")
        self.dim = dim
        #: once trained: a faiss.IndexIDMap over an IndexPQFastScan, or (``IVF_MIN`` rows
        #: and more) an IndexIVFPQFastScan, which keeps the keys itself
        self.index: Any = index
        self._quantizer: Any = None  # the IVF's coarse centroids, kept alive with it

    def __len__(self) -> int:
        return 0 if self.index is None else int(self.index.ntotal)

    def train(self, vectors: np.ndarray, *, seed: int = 0) -> None:
        """Train the sub-quantizers on a sample of ``vectors`` (all rows of the field)."""
        import faiss

        rng = np.random.default_rng(seed)
        n = len(vectors)
        take = np.sort(rng.choice(n, size=TRAIN_MAX, replace=False)) if n > TRAIN_MAX \
            else np.arange(n)
        sample = np.asarray(vectors[take], dtype=np.float32)
        if len(sample) < TRAIN_MIN:
            pad = rng.standard_normal((TRAIN_MIN - len(sample), self.dim)).astype(np.float32)
            pad /= np.linalg.norm(pad, axis=1, keepdims=True)
            sample = np.concatenate([sample, pad])
        if n >= IVF_MIN:
            self._quantizer = faiss.IndexFlatIP(self.dim)
            ivf = faiss.IndexIVFPQFastScan(self._quantizer, self.dim, lists_for(n),
                                           self.dim // 2, 4, faiss.METRIC_INNER_PRODUCT)
            ivf.cp.seed = seed
            ivf.train(np.ascontiguousarray(sample))
            self.index = ivf
            return
        base = faiss.IndexPQFastScan(self.dim, self.dim // 2, 4, faiss.METRIC_INNER_PRODUCT)
        base.train(np.ascontiguousarray(sample))
        self.index = faiss.IndexIDMap(base)  # faiss's wrapper keeps ``base`` alive with it

    @property
    def lists(self) -> int:
        """Inverted lists (0: one flat scan)."""
        return int(getattr(self.index, "nlist", 0) or 0)

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Append codes (a key already present gets a second one: the old is stale)."""
        keys = np.asarray(keys, dtype=np.int64)
        if keys.size == 0:
            return
        if self.index is None:
            raise ValueError("train the codes before adding to them")
        self.index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32), keys)

    def search(self, query: np.ndarray, count: int) -> np.ndarray:
        """Keys of the (up to) ``count`` best codes for one query, best first (a key may
        repeat: stale codes)."""
        return self.search_many(np.asarray(query, dtype=np.float32)[None, :], count)[0]

    def search_many(self, queries: np.ndarray, count: int) -> list[np.ndarray]:
        return [keys for keys, _ in self.search_many_scored(queries, count)]

    def search_many_scored(self, queries: np.ndarray, count: int
                           ) -> list[tuple[np.ndarray, np.ndarray]]:
        """(keys, the codes' approximate inner products) per query, best first."""
        if self.index is None or len(self) == 0 or count <= 0 or len(queries) == 0:
            empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
            return [empty for _ in range(len(queries))]
        x = np.ascontiguousarray(queries, dtype=np.float32)
        lists = self.lists
        if lists:
            import faiss

            # per call, not ``index.nprobe``: concurrent queries ask for different counts
            probe = faiss.SearchParametersIVF()
            probe.nprobe = min(lists, -(-count // PER_PROBE))
            scores, keys = self.index.search(x, min(count, len(self)), params=probe)
        else:
            scores, keys = self.index.search(x, min(count, len(self)))
        return [(k[k >= 0], d[k >= 0]) for k, d in zip(keys, scores, strict=True)]

    def save(self, path: Path) -> None:
        """Through a temporary file and ``os.replace``: a reader sees the whole index or the
        one before it."""
        import faiss

        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".faiss", dir=path.parent)
        os.close(fd)
        try:
            faiss.write_index(self.index, tmp)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(cls, path: Path, dim: int) -> CodeField:
        import faiss

        try:
            index = faiss.read_index(str(path))
        except RuntimeError as exc:  # faiss reports a damaged file as a RuntimeError
            raise ValueError(f"{path} is not a faiss index: {exc}") from exc
        if index.d != dim or not isinstance(index, faiss.IndexIDMap | faiss.IndexIVFPQFastScan):
            raise ValueError(f"{path} is not a {dim}-dimensional keyed code index")
        return cls(dim, index=index)


def lists_for(n: int) -> int:
    """Inverted lists for ``n`` vectors: ~sqrt(n), 64..4096 (k-means wants ~40 training
    points a list: ``TRAIN_MAX`` holds 64 for 1,024).

    Example:
        >>> lists_for(1_000_000), lists_for(500_000), lists_for(10**9)
        (1000, 707, 4096)
    """
    return int(min(4096, max(64, round(math.sqrt(n)))))
