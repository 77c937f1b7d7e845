"""Approximate nearest neighbours for a large namespace: usearch HNSW over one vector field.

Keys are the memories' SQLite row ids (``pk``: stable for a memory's life, reused never), so
an index saved beside the database file needs no id map. Vectors are kept as float16 (cosine
to the float32 ones > 0.9999); the store re-scores the candidates with its float32 rows, so
the index only chooses them. Saved through a temporary file and ``os.replace``: a reader sees
a whole index or the previous one. ADR 0012 has the parameters and their measurements.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import numpy as np


def _load_usearch() -> None:
    """onnxruntime's first import kills the process (SIGSEGV in its native module's loader)
    when another thread is inside usearch at that moment: reproduced 3 of 3 with usearch
    2.26.6 and onnxruntime 1.31.1 (a server warming its embedder while a graph is being
    built). So onnxruntime, when installed, is loaded before usearch ever runs."""
    with contextlib.suppress(ImportError):  # the torch backend alone: nothing to order
        import onnxruntime  # noqa: F401


class HnswField:
    """One field's HNSW graph (cosine), keyed by int64.

    Example:
        >>> import numpy as np
        >>> f = HnswField(dim=2)
        >>> f.add(np.array([7, 9]), np.array([[1, 0], [0, 1]], np.float32))
        >>> f.search(np.array([0.9, 0.1], np.float32), 1)[0].tolist(), len(f)
        ([7], 2)
        >>> f.remove(np.array([7])); len(f)
        1
    """

    def __init__(self, dim: int, *, connectivity: int = 16, ef_add: int = 128,
                 ef_search: int = 128, index: object | None = None) -> None:
        _load_usearch()
        from usearch.index import Index

        self.dim = dim
        self.ef_search = ef_search
        self.index: Index = index if index is not None else Index(  # type: ignore[assignment]
            ndim=dim, metric="cos", dtype="f16", connectivity=connectivity,
            expansion_add=ef_add, expansion_search=ef_search)

    def __len__(self) -> int:
        return len(self.index)

    def add(self, keys: np.ndarray, vectors: np.ndarray, *, threads: int = 1) -> None:
        """Insert or replace: a key already present is removed first."""
        keys = np.asarray(keys, dtype=np.uint64)
        if keys.size == 0:
            return
        present = np.asarray(self.index.contains(keys), dtype=bool).reshape(-1)
        if present.any():
            self.index.remove(keys[present])
        self.index.add(keys, np.asarray(vectors, dtype=np.float32), threads=threads)

    def remove(self, keys: np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.uint64)
        if keys.size:
            present = np.asarray(self.index.contains(keys), dtype=bool).reshape(-1)
            if present.any():
                self.index.remove(keys[present])

    def contains(self, key: int) -> bool:
        return bool(self.index.contains(int(key)))

    def vector(self, key: int) -> np.ndarray | None:
        got = self.index.get(int(key))
        return None if got is None else np.asarray(got, dtype=np.float32).reshape(-1)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, cosine similarities) of up to k nearest, best first."""
        if len(self.index) == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        ef = max(self.ef_search, k)
        if self.index.expansion_search != ef:  # usearch declares the setter apart: mypy
            self.index.expansion_search = ef  # type: ignore[misc]
        m = self.index.search(np.asarray(query, dtype=np.float32), k)
        keys = np.asarray(m.keys, dtype=np.int64)
        return keys, 1.0 - np.asarray(m.distances, dtype=np.float32)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".usearch", dir=path.parent)
        os.close(fd)
        try:
            self.index.save(tmp)
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(cls, path: Path, dim: int, *, ef_search: int = 128) -> HnswField:
        _load_usearch()
        from usearch.index import Index

        index = Index.restore(str(path))
        if index is None or index.ndim != dim:
            raise ValueError(f"{path} is not a {dim}-dimensional usearch index")
        return cls(dim, ef_search=ef_search, index=index)
