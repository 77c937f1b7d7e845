"""In-memory vector index of one namespace: normalised float32 rows, growable.

Kept in step with every committed write by the SQLite adapter and rebuilt from SQLite at open.
Each row also carries its tier and status codes so top-k can filter without a database trip,
and its SQLite row id (``pk``), which keys the product codes (``graphmem.store.ann.pq_codes``)
that choose top-k candidates in a large namespace: the candidates are re-scored with the
float32 rows, so an answer is exact whenever the codes put the true top-k among them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from graphmem.models import TIER_ORDER, Status, Tier
from graphmem.store.ann.asked_queries import AskedQueries
from graphmem.store.ann.compact_rows import CompactRows
from graphmem.store.ann.pq_codes import CodeField
from graphmem.store.ann.row_files import release

_STATUS_ORDER = (Status.ACTIVE, Status.ARCHIVED, Status.EXPIRED)
TIER_CODE = {t: i for i, t in enumerate(TIER_ORDER)}
STATUS_CODE = {s: i for i, s in enumerate(_STATUS_ORDER)}
#: the most candidates asked of the codes; a filter that would need more (it allows less
#: than candidates / MAX_FETCH of the rows) is answered by the exact scan of those rows
MAX_FETCH = 16_384
#: candidates re-scored per query until the keeper's self-check sets the count
CANDIDATES = 1000
#: a batched search with ``min_score`` (SIMILAR_TO on writes) asks this many candidates first
#: and re-scores those whose code score is within ``MARGIN`` of it (the codes' error on a
#: 384-d unit vector: ~0.02); when every candidate asked is that close, more are asked
MANY_FETCH, MARGIN = 64, 0.1
#: the first this many of an answer are exact when the int8 copies score it (``_top``)
REFINE = 10
#: a namespace of at least this many rows searches its two fields at once (faiss and BLAS
#: release the GIL); below it a thread hand-off costs more than the second search
PARALLEL_MIN = 20_000
_pool: ThreadPoolExecutor | None = None
#: a mapped index (``row_files``) releases its mappings of the row files once this many bytes
#: of pages were touched since (a page per row read, ``MADV_RANDOM``): random queries would
#: otherwise map the whole files into the process's resident memory (3 GB at 1M); the pages
#: stay in the page cache, a later read maps its page again (a minor fault). 512 MB was
#: measured too: REST at 100k within noise (163-169 against 163 searches/s), but at 1M RSS
#: 1.1 -> 2.2 GB and a peak of 2.7 GB (the count is approximate: a row may span two pages)
RESIDENT_BUDGET = 256 * 2**20
#: (field, capacity, the matrix it replaces or None) -> a zeroed or carried-over matrix
Allocator = Callable[[str, int, "np.ndarray | None"], np.ndarray]
_SMALL = ("_has_context", "_tier", "_status", "_pk")


def in_memory(dim: int) -> Allocator:
    """Matrices in the process's own memory (a namespace below ``mapped_rows_min``)."""
    def alloc(field: str, capacity: int, old: np.ndarray | None) -> np.ndarray:
        grown = np.zeros((capacity, dim), dtype=np.float32)
        if old is not None:
            grown[:len(old)] = old
        return grown
    return alloc


def among(values: np.ndarray, codes: list[int]) -> np.ndarray:
    """``np.isin(values, codes)`` for a filter's few codes: a comparison per code. np.isin
    picks its method in Python on every call; in the codes' re-scoring of each field it was
    ~4% of a REST search's time under the GIL.

    Example:
        >>> among(np.array([0, 1, 2, 1], dtype=np.int8), [1, 2]).tolist()
        [False, True, True, True]
    """
    if len(codes) == 1:
        return np.asarray(values == codes[0])
    mask = np.zeros(values.shape, dtype=bool)
    for code in codes:
        mask |= values == code
    return mask


class VectorIndex:
    """Normalised float32 vectors of one store in memory, two fields (content, context),
    with each row's tier and status, for exact top-k.

    Example:
        >>> import numpy as np
        >>> from graphmem.models import Status, Tier
        >>> index = VectorIndex(dim=2)
        >>> index.upsert("a", np.array([1, 0], np.float32), None, Tier.FAST, Status.ACTIVE)
        >>> index.upsert("b", np.array([0, 1], np.float32), None, Tier.SLOW, Status.ACTIVE)
        >>> [i for i, _ in index.topk(np.array([0.9, 0.1], np.float32), 1)]
        ['a']
    """

    def __init__(self, dim: int, capacity: int = 1024, *,
                 alloc: Allocator | None = None) -> None:
        self.dim = dim
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self._alloc = alloc or in_memory(dim)
        #: the rows are file-backed (``row_files``): the store saves them at close
        self.mapped = alloc is not None
        self._content = self._alloc("content", capacity, None)
        self._context = self._alloc("context", capacity, None)
        self._has_context = np.zeros(capacity, dtype=bool)
        self._tier = np.zeros(capacity, dtype=np.int8)
        self._status = np.zeros(capacity, dtype=np.int8)
        self._pk = np.zeros(capacity, dtype=np.int64)
        #: rows per (tier, status) code: the share a filter allows, without a scan
        self._states = np.zeros((len(TIER_CODE), len(STATUS_CODE)), dtype=np.int64)
        self.row_of_pk: dict[int, int] = {}
        #: the same as an array indexed by pk - base (-1: no row), for vectorised lookups of
        #: candidates; None when the pks are too sparse for it (the dict answers then)
        self._pk_rows: np.ndarray | None = np.full(0, -1, dtype=np.int64)
        self._pk_base = 0
        self._next_key = 1 << 62  # keys for rows given without a pk (tests, examples)
        #: field -> product codes, once they serve this namespace (``install``)
        self.ann: dict[str, CodeField] | None = None
        #: candidates re-scored per query when the codes serve
        self.candidates = CANDIDATES
        #: the least candidates the asked questions needed (``asked_queries``; ADR 0027)
        self.learned = 0
        #: the last questions asked of the codes, once they serve
        self.asked: AskedQueries | None = None
        #: pks written while codes are being built from a snapshot (``snapshot``)
        self.pending: set[int] | None = None
        #: a write changed the vectors since the codes were loaded or saved
        self.changed = False
        self._touched = 0  # rows read from mapped matrices since they were last released
        #: resident int8 copies of a mapped index's rows (``compact_rows``), once begun
        self.compact: CompactRows | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def _touch(self, rows: int) -> None:
        """Count rows read from the matrices; release a mapped index's pages past the
        budget (readers count concurrently: the budget is approximate)."""
        if not self.mapped:
            return
        self._touched += rows
        if self._touched * 4096 >= RESIDENT_BUDGET:
            self._touched = 0
            release(self._content)
            release(self._context)

    def _map_pks(self, pks: np.ndarray, rows: np.ndarray) -> None:
        """Record pk -> row (-1: gone) in the dense map, growing it to cover the pks."""
        if self._pk_rows is None or len(pks) == 0:
            return
        lo, hi = int(pks.min()), int(pks.max()) + 1
        base, size = self._pk_base, len(self._pk_rows)
        if size == 0:
            base = lo
        if lo < base or hi > base + size:
            new_lo, new_hi = min(lo, base), max(hi, base + size)
            if new_hi - new_lo > 4 * (len(self.ids) + len(pks)) + 65_536:
                self._pk_rows = None  # too sparse: the dict alone
                return
            grown = np.full(max(new_hi - new_lo, 2 * size), -1, dtype=np.int64)
            grown[base - new_lo:base - new_lo + size] = self._pk_rows
            self._pk_rows, self._pk_base = grown, new_lo
        self._pk_rows[pks - self._pk_base] = rows

    def _rows_of(self, keys: np.ndarray) -> np.ndarray:
        """The rows of candidate keys (-1: no row), vectorised when the dense map serves."""
        if self._pk_rows is None:
            get = self.row_of_pk.get
            return np.fromiter((get(k, -1) for k in keys.tolist()), dtype=np.int64,
                               count=len(keys))
        i = keys - self._pk_base
        ok = (i >= 0) & (i < len(self._pk_rows))
        rows = np.full(len(keys), -1, dtype=np.int64)
        rows[ok] = self._pk_rows[i[ok]]
        return rows

    def _grow(self, need: int) -> None:
        cap = self._content.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap * 2)
        self._content = self._alloc("content", new_cap, self._content)
        self._context = self._alloc("context", new_cap, self._context)
        for name in _SMALL:
            old = getattr(self, name)
            grown = np.zeros(new_cap, dtype=old.dtype)
            grown[:cap] = old
            setattr(self, name, grown)

    def map_rows(self, alloc: Allocator) -> None:
        """Move the two matrices to ``alloc``'s (files): the rows are copied once."""
        cap = self._content.shape[0]
        self._alloc, self.mapped = alloc, True
        self._content = alloc("content", cap, self._content)
        self._context = alloc("context", cap, self._context)

    def arrays(self) -> dict[str, Any]:
        """What ``row_files`` saves: the matrices, ids and the per-row columns."""
        return {"content": self._content, "context": self._context, "ids": self.ids,
                "pk": self._pk, "tier": self._tier, "status": self._status,
                "has_context": self._has_context}

    @classmethod
    def from_arrays(cls, dim: int, arrays: dict[str, Any], alloc: Allocator) -> VectorIndex:
        """An index over saved arrays (``row_files.load``): the matrices as mapped."""
        index = cls(dim, capacity=0)
        index._alloc, index.mapped = alloc, True
        n = len(arrays["ids"])
        index._content, index._context = arrays["content"], arrays["context"]
        cap = index._content.shape[0]
        for name in _SMALL:
            col = np.zeros(cap, dtype=getattr(index, name).dtype)
            col[:n] = arrays[name[1:]]
            setattr(index, name, col)
        index.ids = list(arrays["ids"])
        index.row_of = dict(zip(index.ids, range(n), strict=True))
        index.row_of_pk = dict(zip(index._pk[:n].tolist(), range(n), strict=True))
        index._map_pks(index._pk[:n], np.arange(n))
        counts = np.bincount(index._tier[:n].astype(np.intp) * len(STATUS_CODE)
                             + index._status[:n], minlength=index._states.size)
        index._states = counts.reshape(index._states.shape).astype(np.int64)
        return index

    def upsert(self, id_: str, content: np.ndarray | None, context: np.ndarray | None,
               tier: Tier, status: Status, *, pk: int | None = None) -> None:
        row = self.row_of.get(id_)
        if row is None:
            if content is None:
                return  # nothing to index
            row = len(self.ids)
            self._grow(row + 1)
            self.ids.append(id_)
            self.row_of[id_] = row
            if pk is None:
                pk, self._next_key = self._next_key, self._next_key + 1
            self._pk[row] = pk
            self.row_of_pk[pk] = row
            self._map_pks(np.array([pk]), np.array([row]))
        else:
            self._states[self._tier[row], self._status[row]] -= 1
        if content is not None:
            self._content[row] = content
        if context is not None:
            self._context[row] = context
            self._has_context[row] = True
        else:
            self._has_context[row] = False
        if self.compact is not None:
            self.compact.put(row, "content", self._content[row])
            self.compact.put(row, "context", self._context[row])
        self._tier[row] = TIER_CODE[tier]
        self._status[row] = STATUS_CODE[status]
        self._states[self._tier[row], self._status[row]] += 1
        self._ann_put(int(self._pk[row]), row)

    def extend(self, ids: Sequence[str], pks: Sequence[int], content: np.ndarray,
               context: np.ndarray, has_context: np.ndarray, tiers: np.ndarray,
               statuses: np.ndarray) -> None:
        """Append rows for ids not yet indexed, in bulk (opening a store): tiers and statuses
        as codes (``TIER_CODE``, ``STATUS_CODE``)."""
        start, m = len(self.ids), len(ids)
        if m == 0:
            return
        self._grow(start + m)
        rows = slice(start, start + m)
        self._content[rows] = content
        self._context[rows] = context
        self._has_context[rows] = has_context
        self._tier[rows] = tiers
        self._status[rows] = statuses
        self._pk[rows] = pks
        if self.compact is not None:
            self.compact.put(rows, "content", content)
            self.compact.put(rows, "context", context)
        np.add.at(self._states, (np.asarray(tiers, dtype=np.intp),
                                 np.asarray(statuses, dtype=np.intp)), 1)
        self.ids.extend(ids)
        self.row_of.update(zip(ids, range(start, start + m), strict=True))
        self.row_of_pk.update(zip(pks, range(start, start + m), strict=True))
        self._map_pks(np.asarray(pks, dtype=np.int64), np.arange(start, start + m))
        if self.ann is not None or self.pending is not None:
            for row in range(start, start + m):
                self._ann_put(int(self._pk[row]), row)
        self.changed = True

    def set_state(self, id_: str, tier: Tier, status: Status) -> None:
        row = self.row_of.get(id_)
        if row is not None:
            self._states[self._tier[row], self._status[row]] -= 1
            self._tier[row] = TIER_CODE[tier]
            self._status[row] = STATUS_CODE[status]
            self._states[self._tier[row], self._status[row]] += 1

    def remove(self, id_: str) -> None:
        row = self.row_of.pop(id_, None)
        if row is None:
            return
        pk = int(self._pk[row])
        del self.row_of_pk[pk]
        self._map_pks(np.array([pk]), np.array([-1]))
        self._states[self._tier[row], self._status[row]] -= 1
        last = len(self.ids) - 1
        if row != last:
            moved = self.ids[last]
            for arr in (self._content, self._context, self._has_context, self._tier,
                        self._status, self._pk):
                arr[row] = arr[last]
            if self.compact is not None:  # from the float32 row: the fill may not have
                self.compact.put(row, "content", self._content[row])  # reached ``last``
                self.compact.put(row, "context", self._context[row])
            self.ids[row] = moved
            self.row_of[moved] = row
            self.row_of_pk[int(self._pk[row])] = row
            self._map_pks(self._pk[row:row + 1].copy(), np.array([row]))
            if self.pending is not None:  # a build may have read the moved row mid-move
                self.pending.add(int(self._pk[row]))
        self.ids.pop()
        self._ann_put(pk, None)

    # product codes --------------------------------------------------------------------------
    def _ann_put(self, pk: int, row: int | None) -> None:
        """Bring the codes in step with one row (None: gone, its codes turn stale); note it
        for a running build."""
        self.changed = True
        if self.pending is not None:
            self.pending.add(pk)
        if self.ann is None or row is None:
            return
        key = np.array([pk])
        self.ann["content"].add(key, self._content[row:row + 1])
        if self._has_context[row]:
            self.ann["context"].add(key, self._context[row:row + 1])

    def snapshot(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Views of (pks, content, context, has_context) for a build off the store's lock (no
        copy: 3 GB at 1M); every pk whose row changes from now on is noted in ``pending`` and
        replayed by ``install``, so a row read mid-write is corrected."""
        n = len(self.ids)
        self.pending = set()
        return self._pk[:n], self._content[:n], self._context[:n], self._has_context[:n]

    def install(self, codes: dict[str, CodeField], candidates: int = CANDIDATES) -> None:
        """Choose top-k candidates with ``codes`` (built from a snapshot, or loaded): the
        writes noted since the snapshot are replayed into them first."""
        pending, self.pending = self.pending or set(), None
        self.ann = codes
        self.candidates = max(candidates, self.learned)
        if self.asked is None:
            self.asked = AskedQueries(self.dim)
        for pk in pending:
            self._ann_put(pk, self.row_of_pk.get(pk))

    def drop_ann(self) -> None:
        self.ann, self.pending, self.compact = None, None, None

    # resident int8 copies (``compact_rows``; filled by the keeper) --------------------------
    def begin_compact(self, steps: dict[str, np.ndarray]) -> None:
        """Under the store's lock: empty copies, kept in step by writes from now on."""
        self.compact = CompactRows(self.dim, len(self.ids) + len(self.ids) // 64 + 1024, steps)

    def _top(self, field: str, rows: np.ndarray, q: np.ndarray, k: int,
             approx: np.ndarray | None = None) -> list[tuple[str, float]]:
        """The top k of ``rows``: by the int8 copies once filled, with every row that could
        be among the first ``REFINE`` (its score within the copies' error of the
        ``REFINE``-th) re-scored with its float32 row; else by the float32 rows."""
        compact = self.compact
        if compact is None or not compact.ready:
            return self._best(rows, self._scores(field, rows, q, exact=True), k)
        scores = compact.scores(field, rows, q) if approx is None else approx
        m = min(REFINE, k, rows.size)
        bar = float(np.partition(scores, scores.size - m)[scores.size - m])
        near = np.flatnonzero(scores >= bar - 2 * compact.error(field, q))
        scores[near] = self._scores(field, rows[near], q, exact=True)
        return self._best(rows, scores, k)

    def _scores(self, field: str, rows: np.ndarray, q: np.ndarray,
                exact: bool = False) -> np.ndarray:
        """Inner products of ``q`` with ``rows`` of a field: from the resident int8 copies
        once filled (no float32 row read), else (or ``exact``) the float32 rows."""
        compact = self.compact
        if compact is not None and compact.ready and not exact:
            return compact.scores(field, rows, q)
        scores = (self._content if field == "content" else self._context)[rows] @ q
        self._touch(rows.size)  # after the read: a release past the budget drops its pages
        return scores

    def stale(self) -> int:
        """Codes that no longer stand for a row (deleted, or re-embedded since)."""
        if self.ann is None:
            return 0
        return (len(self.ann["content"]) - len(self.ids)
                + len(self.ann["context"]) - self.context_count())

    def pks(self) -> np.ndarray:
        return self._pk[:len(self.ids)].copy()

    def row_vectors(self, pk: int) -> tuple[np.ndarray, np.ndarray | None] | None:
        row = self.row_of_pk.get(pk)
        if row is None:
            return None
        return self._content[row], (self._context[row] if self._has_context[row] else None)

    def context_count(self) -> int:
        return int(self._has_context[:len(self.ids)].sum())

    def vectors(self, ids: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
        out: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        for id_ in ids:
            row = self.row_of.get(id_)
            if row is not None:
                ctx = self._context[row].copy() if self._has_context[row] else None
                out[id_] = (self._content[row].copy(), ctx)
        return out

    def pks_of(self, ids: Sequence[str]) -> list[int]:
        """The SQLite row ids of the indexed ``ids`` (the others are not here)."""
        row_of, pk = self.row_of, self._pk
        return [int(pk[row]) for id_ in ids if (row := row_of.get(id_)) is not None]

    def similarities(self, ids: Sequence[str], query: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]:
        """id -> (content cosine, context cosine or None) for the indexed ``ids``."""
        q = np.asarray(query, dtype=np.float32)
        row_of = self.row_of
        found = [(id_, row) for id_ in dict.fromkeys(ids)
                 if (row := row_of.get(id_)) is not None]
        if not found:
            return {}
        # one gather and product per field (a row at a time cost ~7 us per memory)
        rows = np.fromiter((row for _, row in found), dtype=np.int64, count=len(found))
        content = self._scores("content", rows, q).tolist()
        has = self._has_context[rows]
        context: list[float | None] = [None] * len(found)
        if has.any():
            with_ctx = np.flatnonzero(has)
            for j, score in zip(with_ctx.tolist(),
                                self._scores("context", rows[with_ctx], q).tolist(),
                                strict=True):
                context[j] = score
        return {id_: (content[j], context[j]) for j, (id_, _) in enumerate(found)}

    # top-k ----------------------------------------------------------------------------------
    def _codes(self, statuses: Collection[Status], tiers: Collection[Tier] | None) -> tuple[
            list[int], list[int] | None]:
        return ([STATUS_CODE[s] for s in statuses],
                None if tiers is None else [TIER_CODE[t] for t in tiers])

    def _allowed(self, status_codes: list[int], tier_codes: list[int] | None) -> int:
        """Rows the filters allow (from the per-state counts: no scan)."""
        tiers = slice(None) if tier_codes is None else tier_codes
        return int(self._states[tiers][:, status_codes].sum())

    def _mask(self, n: int, field: str, status_codes: list[int],
              tier_codes: list[int] | None) -> np.ndarray:
        mask = among(self._status[:n], status_codes)
        if tier_codes is not None:
            mask &= among(self._tier[:n], tier_codes)
        if field == "context":
            mask &= self._has_context[:n]
        return mask

    def _fetch(self, status_codes: list[int], tier_codes: list[int] | None,
               candidates: int | None = None) -> int | None:
        """Candidates to ask the codes for so that ``candidates`` of them are expected to pass
        the filters; None when the filters allow no more rows than that (score those rows
        exactly: as many re-scored, none missed) or it is past ``MAX_FETCH``."""
        n = len(self.ids)
        allowed = self._allowed(status_codes, tier_codes)
        if allowed == 0:
            return 0
        fetch = math.ceil((candidates or self.candidates) * n / allowed)
        return fetch if allowed > fetch and fetch <= MAX_FETCH else None

    def topk(self, query: np.ndarray, k: int, *, field: str = "content",
             tiers: Collection[Tier] | None = None,
             statuses: Collection[Status] = (Status.ACTIVE,),
             exact: bool = False, candidate_count: int | None = None
             ) -> list[tuple[str, float]]:
        """``candidate_count``: re-scored from the codes instead of ``self.candidates``."""
        n = len(self.ids)
        if n == 0 or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        status_codes, tier_codes = self._codes(statuses, tiers)
        if self.ann is not None and not exact:
            fetch = self._fetch(status_codes, tier_codes, candidate_count)
            if fetch == 0:
                return []
            if fetch is not None:
                keys = self.ann[field].search(q, fetch)
                return self._rescore(keys, q, k, field, status_codes, tier_codes)
        matrix = self._content if field == "content" else self._context
        mask = self._mask(n, field, status_codes, tier_codes)
        candidates = np.flatnonzero(mask)
        if candidates.size == 0:
            return []
        # few allowed rows: score those alone (a gather), not the whole matrix; ``exact``
        # (a reference for recall) scores the float32 rows, not the int8 copies
        if candidates.size * 4 < n:
            return (self._best(candidates, self._scores(field, candidates, q, exact=True), k)
                    if exact else self._top(field, candidates, q, k))
        compact = self.compact
        if compact is not None and compact.ready and not exact:
            return self._top(field, candidates, q, k, compact.scan(field, n, q)[candidates])
        scores = matrix[:n] @ q
        self._touch(n)
        return self._best(candidates, scores[candidates], k)

    def scores_block(self, start: int, end: int, queries: np.ndarray) -> np.ndarray:
        """Content rows ``start..end`` against ``queries`` (rows x queries), inactive rows
        -inf: by the int8 copies once filled, else the float32 rows (``asked_queries``)."""
        compact = self.compact
        qs = np.asarray(queries, dtype=np.float32)
        if compact is not None and compact.ready:  # (codes x steps) . q = codes . (steps x q)
            block = compact.codes["content"][start:end].astype(np.float32)
            qs = qs * compact.steps["content"]
        else:
            block = self._content[start:end]
        scores = block @ qs.T
        if compact is None or not compact.ready:
            self._touch(end - start)
        scores[self._status[start:end] != STATUS_CODE[Status.ACTIVE]] = -np.inf
        return scores

    def exact_top(self, rows: np.ndarray, q: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The top k of content ``rows`` by their float32 rows."""
        return self._best(rows, self._scores("content", rows, q, exact=True), k)

    def topk_fields(self, query: np.ndarray, k: int, *, tiers: Collection[Tier] | None = None,
                    statuses: Collection[Status] = (Status.ACTIVE,), parallel: bool = True,
                    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """``topk`` of both fields; a large namespace searches the context field in a second
        thread meanwhile, when ``parallel`` (the caller holds a read: nothing writes)."""
        global _pool
        if not parallel or len(self.ids) < PARALLEL_MIN:
            return (self.topk(query, k, tiers=tiers, statuses=statuses),
                    self.topk(query, k, field="context", tiers=tiers, statuses=statuses))
        if _pool is None:
            _pool = ThreadPoolExecutor(1, thread_name_prefix="graphmem-vectors")
        context = _pool.submit(self.topk, query, k, field="context", tiers=tiers,
                               statuses=statuses)
        return self.topk(query, k, tiers=tiers, statuses=statuses), context.result()

    def _best(self, rows: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The top k of ``rows`` by score, ties by row (the same order whichever path)."""
        if k < scores.size:
            part = np.argpartition(-scores, k - 1)[:k]
            rows, scores = rows[part], scores[part]
        order = np.lexsort((rows, -scores))[:k]
        return [(self.ids[int(rows[i])], float(scores[i])) for i in order]

    def _rescore(self, keys: np.ndarray, q: np.ndarray, k: int, field: str,
                 status_codes: list[int], tier_codes: list[int] | None,
                 ) -> list[tuple[str, float]]:
        """The codes' candidates (keys, stale ones included) re-scored with the float32 rows
        the filters allow."""
        rows = self._rows_of(np.asarray(keys, dtype=np.int64))
        rows = np.unique(rows[rows >= 0])
        if rows.size == 0:
            return []
        keep = among(self._status[rows], status_codes)
        if tier_codes is not None:
            keep &= among(self._tier[rows], tier_codes)
        if field == "context":
            keep &= self._has_context[rows]
        rows = rows[keep]
        if rows.size == 0:
            return []
        return self._top(field, rows, q, k)

    def topk_many(self, queries: np.ndarray, k: int, *,
                  statuses: Collection[Status] = (Status.ACTIVE,),
                  min_score: float | None = None,
                  chunk: int = 256) -> list[list[tuple[str, float]]]:
        """Content-field top-k for each query row: candidates from the codes when they serve,
        else one matrix product per chunk of rows. ``min_score``: only hits at or above it
        are wanted, so the codes' candidates far below it are not re-scored."""
        n = len(self.ids)
        if n == 0 or k <= 0:
            return [[] for _ in range(len(queries))]
        status_codes, _ = self._codes(statuses, None)
        qs = np.asarray(queries, dtype=np.float32)
        if self.ann is not None:
            fetch = self._fetch(status_codes, None)
            if fetch == 0:
                return [[] for _ in range(len(queries))]
            if fetch is not None and min_score is not None:
                return self._many_above(qs, k, status_codes, min_score,
                                        widen=fetch / self.candidates)
            if fetch is not None:
                found = self.ann["content"].search_many(qs, fetch)
                return [self._rescore(keys, q, k, "content", status_codes, None)
                        for keys, q in zip(found, qs, strict=True)]
        cols = np.flatnonzero(self._mask(n, "content", status_codes, None))
        if cols.size == 0:
            return [[] for _ in range(len(queries))]
        sub = self._content[:n][cols]
        out: list[list[tuple[str, float]]] = []
        for start in range(0, len(qs), chunk):
            scores = qs[start:start + chunk] @ sub.T
            out.extend(self._best(cols, row, k) for row in scores)
        return out

    def _many_above(self, qs: np.ndarray, k: int, status_codes: list[int], min_score: float,
                    widen: float) -> list[list[tuple[str, float]]]:
        """``topk_many`` for hits at or above ``min_score``: a few candidates per query
        (``MANY_FETCH``, widened as the filters drop rows), of which only those the codes
        score within ``MARGIN`` of it are re-scored. A candidate not asked scores at most
        the last asked one's code score, so at most that + ``MARGIN`` exactly: a query asks
        four times as many (up to ``MAX_FETCH``) only while such a candidate could still
        enter its top k above ``min_score``. Near-duplicates (real text at scale) used to
        widen every query to ``MAX_FETCH`` whenever all that it asked were near the
        threshold, though its top k were far above the rest."""
        field = self.ann["content"]  # type: ignore[index]
        out: list[list[tuple[str, float]]] = [[] for _ in range(len(qs))]
        todo = list(range(len(qs)))
        ask = min(math.ceil(MANY_FETCH * widen), MAX_FETCH)
        while todo:
            again = []
            for i, (keys, approx) in zip(todo, field.search_many_scored(qs[todo], ask),
                                         strict=True):
                close = approx >= min_score - MARGIN
                if not close.any():
                    continue
                found = self._rescore(keys[close], qs[i], k, "content", status_codes, None)
                bound = float(approx[-1]) + MARGIN  # the best a candidate not asked can be
                hits = [s for _, s in found if s >= min_score]
                if len(keys) >= ask and ask < MAX_FETCH and bound >= min_score and (
                        len(hits) < k or hits[k - 1] <= bound):
                    again.append(i)
                    continue
                out[i] = found
            todo, ask = again, min(ask * 4, MAX_FETCH)
        return out
