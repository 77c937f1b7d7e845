"""One byte per dimension: resident copies of a large namespace's vectors for re-scoring
(ADR 0026).

A namespace past ``StoreConfig.mapped_rows_min`` keeps its float32 rows in mapped files
(ADR 0020), so a query reads the rows it re-scores from the page cache, or from disk when the
kernel has dropped them: a machine that pages out cold file pages (DAMON ``pageout`` on the
benchmark VM) sends a new query at 1M to disk for ~1,000 candidate rows a field and ~250
pool rows, ~150 us each. These copies live in the process's own memory instead (anonymous
pages: nothing pages them out without swap), 384 bytes a row a field (384 MB a field at 1M
against 1.5 GB of float32), and serve the re-scoring, the pool's cosines and the filtered
scans once filled.

A dimension's step is its largest absolute value in a sample of the rows, with a margin, over
127; a value past it is clipped. On unit vectors of 384 dimensions a cosine's error is a few
1e-4 (MiniLM at 1M: 0.00035 on average, 0.003 at most): enough for the pool's cosines, not
for the order of near-duplicates (the 10th and 11th neighbours of a question at 1M differ by
0.0002 at the median), so the rows within ``error`` of an answer's top 10 are re-scored with
their float32 rows (``VectorIndex``): ~20 rows a field where 1,000 were read.

Filled in the background from the float32 rows: a chunk is read and encoded without the
store's lock, then stored under it only into the rows that no write touched since the fill
began (a write encodes its own rows, under the lock, as soon as the copies exist). Until the
fill ends, the float32 rows answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphmem.store.ann.row_files import release

if TYPE_CHECKING:
    from graphmem.store.ann.vectors import VectorIndex

FIELDS = ("content", "context")
#: rows of a field whose largest values set the steps
SAMPLE = 65_536
MARGIN = 1.05  # steps a little wider than the sample's largest values
#: the error bound of a score, in standard deviations (``error``)
Z = 4.0


def steps_for(sample: np.ndarray) -> np.ndarray:
    """Per-dimension steps for ``sample``'s rows (float32, one per dimension).

    Example:
        >>> [round(float(x), 5) for x in steps_for(np.array([[0.5, -1.0], [0.25, 0.5]]))]
        [0.00413, 0.00827]
    """
    top = np.abs(np.asarray(sample, dtype=np.float32)).max(axis=0) if len(sample) else None
    if top is None:
        return np.full(np.asarray(sample).shape[1], 1 / 127, dtype=np.float32)
    top = np.where(top > 0, top, 1.0) * MARGIN
    return (top / 127).astype(np.float32)


class CompactRows:
    """The int8 copies of both fields of one index, their steps, and the fill's bookkeeping.

    Example:
        >>> rows = np.array([[0.6, 0.8], [1.0, 0.0]], np.float32)
        >>> c = CompactRows(2, 4, {f: steps_for(rows) for f in FIELDS})
        >>> c.store(0, {"content": c.encode("content", rows)})
        >>> [round(float(x), 2) for x in c.scores("content", np.array([0, 1]), np.array([1., 0.]))]
        [0.6, 1.0]
    """

    def __init__(self, dim: int, capacity: int, steps: dict[str, np.ndarray]) -> None:
        self.dim = dim
        self.steps = steps
        self.codes = {f: np.zeros((capacity, dim), dtype=np.int8) for f in FIELDS}
        #: rows a write encoded since the fill began: the fill leaves them alone
        self.written = np.zeros(capacity, dtype=bool)
        #: every row of the index is encoded: the copies answer
        self.ready = False

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.codes.values()) + self.written.nbytes

    def encode(self, field: str, vectors: np.ndarray) -> np.ndarray:
        scaled = np.asarray(vectors, dtype=np.float32) / self.steps[field]
        return np.clip(np.rint(scaled), -127, 127).astype(np.int8)

    def grow(self, need: int) -> None:
        """Room for ``need`` rows, by a quarter more at a time (not the float32 matrices'
        doubling: the copies are what the process holds, 384 bytes a row a field)."""
        old = len(self.written)
        if need <= old:
            return
        capacity = max(need, old + old // 4 + 1024)
        for f in FIELDS:
            grown = np.zeros((capacity, self.dim), dtype=np.int8)
            grown[:old] = self.codes[f]
            self.codes[f] = grown
        written = np.zeros(capacity, dtype=bool)
        written[:old] = self.written
        self.written = written

    # writes (under the store's lock) --------------------------------------------------------
    def put(self, rows: slice | int, field: str, vectors: np.ndarray) -> None:
        """A write's rows of one field (a row or a slice of them)."""
        self.grow(rows.stop if isinstance(rows, slice) else int(rows) + 1)
        self.codes[field][rows] = self.encode(field, vectors)
        self.written[rows] = True

    # the fill -------------------------------------------------------------------------------
    def store(self, start: int, encoded: dict[str, np.ndarray]) -> None:
        """Rows ``start..`` of a chunk encoded without the lock: kept only where no write
        encoded the row since the fill began (the chunk may have read it before that write),
        and only within the capacity (rows removed meanwhile are past the end anyway)."""
        for f, codes in encoded.items():
            end = min(start + len(codes), len(self.written))
            if end <= start:
                continue
            keep = ~self.written[start:end]
            self.codes[f][start:end][keep] = codes[:end - start][keep]

    # reads ----------------------------------------------------------------------------------
    def scores(self, field: str, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Approximate inner products of ``query`` with the given rows of ``field``."""
        scaled = np.asarray(query, dtype=np.float32) * self.steps[field]
        return self.codes[field][rows].astype(np.float32) @ scaled

    def error(self, field: str, query: np.ndarray) -> float:
        """A bound on a score's error for ``query``: ``Z`` standard deviations of the sum of
        the rounding errors (each uniform within half a step, independent)."""
        scaled = np.asarray(query, dtype=np.float32) * self.steps[field]
        return Z * float(np.sqrt(np.dot(scaled, scaled) / 12))

    def scan(self, field: str, n: int, query: np.ndarray) -> np.ndarray:
        """Approximate inner products with the first ``n`` rows, in blocks (no n x dim float
        copy at once)."""
        scaled = np.asarray(query, dtype=np.float32) * self.steps[field]
        out = np.empty(n, dtype=np.float32)
        for start in range(0, n, 65_536):
            block = self.codes[field][start:min(start + 65_536, n)]
            out[start:start + len(block)] = block.astype(np.float32) @ scaled
        return out


# the fill (``AnnKeeper``) -------------------------------------------------------------------
def steps_of(index: VectorIndex) -> dict[str, np.ndarray]:
    """Steps for an index's copies from up to ``SAMPLE`` rows of each field, read without the
    store's lock (a row torn by a concurrent write moves a step by little)."""
    arrays = index.arrays()
    take = slice(0, min(len(index), SAMPLE))
    content, has = arrays["content"][take], arrays["has_context"][take]
    context = arrays["context"][take][has] if has.any() else content
    return {"content": steps_for(content), "context": steps_for(context)}


def encode_chunk(index: VectorIndex, compact: CompactRows, start: int, end: int
                 ) -> dict[str, np.ndarray]:
    """Rows ``start..end`` of both fields encoded, read without the lock (``store`` keeps
    only the rows no write touched meanwhile); a mapped index's pages are let go."""
    arrays = index.arrays()  # a concurrent grow swaps the matrices: these stay readable
    out = {f: compact.encode(f, arrays[f][start:end]) for f in FIELDS}
    if index.mapped:
        for f in FIELDS:
            release(arrays[f])
    return out
