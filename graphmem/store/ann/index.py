"""The vectors of one namespace: normalised float32 rows of two fields (content, context), each
row's tier and status for filters, exact top-k by numpy, and once the namespace is large a
faiss index per field (``faiss_fields``) that answers top-k instead.

Arrays are as long as the namespace needs and grow by doubling: a namespace costs what it
holds. Each row carries a *key*, its position in the faiss indexes, given anew whenever its
vectors are (re)written; ``key_row`` maps keys back to rows (-1: gone).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from graphmem.models import TIER_ORDER, Status, Tier
from graphmem.store.ann import Hits, faiss_fields
from graphmem.store.base import Beside

TIER_CODE = {t: i for i, t in enumerate(TIER_ORDER)}
STATUS_CODE = {s: i for i, s in enumerate((Status.ACTIVE, Status.ARCHIVED, Status.EXPIRED))}
FIELDS = ("content", "context")
COLUMNS = {"pk": np.int64, "key": np.int64, "tier": np.int8, "status": np.int8,
           "has_context": np.bool_}
#: (field, capacity, the matrix it replaces or None) -> a matrix of ``capacity`` rows
Allocator = Callable[[str, int, "np.ndarray | None"], np.ndarray]


def in_memory(dim: int) -> Allocator:
    def alloc(field: str, capacity: int, old: np.ndarray | None) -> np.ndarray:
        grown = np.zeros((capacity, dim), dtype=np.float32)
        if old is not None:  # only ever grown
            grown[:len(old)] = old
        return grown
    return alloc


class VectorIndex:
    """One namespace's vectors (module docstring).

    Example:
        >>> index = VectorIndex(2)
        >>> index.upsert("a", np.array([1, 0], np.float32), None, Tier.FAST, Status.ACTIVE)
        >>> index.upsert("b", np.array([0, 1], np.float32), None, Tier.SLOW, Status.ACTIVE)
        >>> [i for i, _ in index.topk(np.array([0.9, 0.1], np.float32), 1)]
        ['a']
    """

    def __init__(self, dim: int, state: dict[str, Any] | None = None,
                 alloc: Allocator | None = None) -> None:
        self.dim, self.alloc, self.mapped = dim, alloc or in_memory(dim), alloc is not None
        state = state or {}
        self.ids: list[str] = list(state.get("ids", []))
        n = len(self.ids)
        self.row_of = dict(zip(self.ids, range(n), strict=True))
        self.col: dict[str, np.ndarray] = {c: np.asarray(state.get(c, np.zeros(n)), dtype=t)
                                           for c, t in COLUMNS.items()}
        self.rows = {f: state.get(f, self.alloc(f, n, None)) for f in FIELDS}
        self.next_key = int(state.get("next_key", n))
        self.key_row = np.full(self.next_key, -1, dtype=np.int64)
        self.key_row[self.col["key"]] = np.arange(n)
        #: field -> faiss index (``faiss_fields``) once built; rows it was built over
        self.ann: dict[str, Any] | None = state.get("indexes")
        self.trained = n if self.ann is not None else 0
        #: filters allowing fewer rows than this are scored exactly, faiss or not
        self.exact_max = 0
        self._filters: dict[tuple[Any, ...], tuple[np.ndarray, Any, Any]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def stale(self) -> int:
        """Positions of the faiss indexes no row holds any more."""
        return self.next_key - len(self.ids) if self.ann is not None else 0

    def state(self) -> dict[str, Any]:
        """What ``files.RowFiles.save`` writes (and ``__init__`` reads back)."""
        return {"ids": self.ids, "next_key": self.next_key, **self.col, **self.rows}

    def _reserve(self, need: int) -> None:
        cap = len(self.col["pk"])
        if need > cap:
            cap = max(need, 2 * cap, 4)
            self.rows = {f: self.alloc(f, cap, m) for f, m in self.rows.items()}
            self.col = {c: np.resize(a, cap) for c, a in self.col.items()}

    def map_rows(self, alloc: Allocator) -> None:
        """Move the matrices to ``alloc``'s (files): copied once."""
        self.alloc, self.mapped = alloc, True
        self.rows = {f: alloc(f, len(m), m) for f, m in self.rows.items()}

    # writes (under the store's write lock) --------------------------------------------------
    def upsert(self, id_: str, content: np.ndarray | None, context: np.ndarray | None,
               tier: Tier, status: Status, *, pk: int | None = None) -> None:
        row = self.row_of.get(id_)
        if row is None:
            if content is None:
                return
            row = len(self.ids)
            self._reserve(row + 1)
            self.ids.append(id_)
            self.row_of[id_] = row
            self.col["pk"][row] = -1 if pk is None else pk
        else:
            self.key_row[self.col["key"][row]] = -1
        if content is not None:
            self.rows["content"][row] = content
        self.rows["context"][row] = 0 if context is None else context
        self.col["has_context"][row] = context is not None
        self.set_state(id_, tier, status)
        self._key(np.array([row]))
        self._filters = {}  # a row or its keys are new

    def _key(self, rows: np.ndarray) -> None:
        """Fresh keys for rows whose vectors were written, added to the faiss indexes."""
        keys = np.arange(self.next_key, self.next_key + len(rows))
        self.next_key += len(rows)
        if self.next_key > len(self.key_row):
            self.key_row = np.concatenate([self.key_row, np.full(
                max(self.next_key, 2 * len(self.key_row)) - len(self.key_row), -1, np.int64)])
        self.key_row[keys] = rows
        self.col["key"][rows] = keys
        if self.ann is not None:
            for f, index in self.ann.items():
                index.add(np.ascontiguousarray(self.rows[f][rows]))

    def set_state(self, id_: str, tier: Tier, status: Status) -> None:
        row = self.row_of.get(id_)
        if row is None:
            return
        tier_code, status_code = TIER_CODE[tier], STATUS_CODE[status]
        if status_code != self.col["status"][row]:
            self._filters = {}
        elif tier_code != self.col["tier"][row]:  # a promotion: filters of no tier still hold
            self._filters = {s: f for s, f in self._filters.items() if s[2] is None}
        self.col["tier"][row], self.col["status"][row] = tier_code, status_code

    def remove(self, id_: str) -> None:
        row = self.row_of.pop(id_, None)
        if row is None:
            return
        self.key_row[self.col["key"][row]] = -1
        last = len(self.ids) - 1
        if row != last:
            for a in (*self.col.values(), *self.rows.values()):
                a[row] = a[last]
            self.ids[row] = self.ids[last]
            self.row_of[self.ids[row]] = row
            self.key_row[self.col["key"][row]] = row
        self.ids.pop()
        self._filters = {}

    def install(self, indexes: dict[str, Any], keys: np.ndarray, trained: int) -> None:
        """Built indexes whose position p held the row of key ``keys[p]`` at their snapshot:
        rows since re-keyed to their positions, rows written since added (write lock held)."""
        n = len(self.ids)
        new = np.full(self.next_key, -1, dtype=np.int64)
        new[keys] = np.arange(len(keys))
        cur = self.col["key"][:n]
        kept = new[cur] >= 0
        self.col["key"][:n][kept] = new[cur[kept]]
        self.next_key, self.ann, self.trained = len(keys), indexes, trained
        self.key_row = np.full(len(keys), -1, dtype=np.int64)
        self.key_row[self.col["key"][:n][kept]] = np.flatnonzero(kept)
        self._key(np.flatnonzero(~kept))
        self._filters = {}

    # reads (under the store's read lock) ----------------------------------------------------
    def _filter(self, field: str, statuses: Collection[Status],
                tiers: Collection[Tier] | None) -> tuple[np.ndarray, Any]:
        """The rows the filters allow, and a faiss selector of their keys (cached)."""
        spec = (field, frozenset(statuses), None if tiers is None else frozenset(tiers))
        got = self._filters.get(spec)
        if got is None:
            n = len(self.ids)
            mask = np.isin(self.col["status"][:n], [STATUS_CODE[s] for s in statuses])
            if tiers is not None:
                mask &= np.isin(self.col["tier"][:n], [TIER_CODE[t] for t in tiers])
            if field == "context":
                mask &= self.col["has_context"][:n]
            rows = np.flatnonzero(mask)
            sel: tuple[Any, Any] = (None, None)
            if self.ann is not None:
                sel = faiss_fields.selector(self.col["key"][rows], self.next_key)
            got = self._filters[spec] = (rows, *sel)
        return got[0], got[1]

    def topk(self, query: np.ndarray, k: int, *, field: str = "content",
             tiers: Collection[Tier] | None = None,
             statuses: Collection[Status] = (Status.ACTIVE,), exact: bool = False) -> Hits:
        return self.topk_many(np.asarray(query)[None, :], k, field=field, tiers=tiers,
                              statuses=statuses, exact=exact)[0]

    def topk_fields(self, query: np.ndarray, k: int, *, tiers: Collection[Tier] | None = None,
                    statuses: Collection[Status] = (Status.ACTIVE,),
                    beside: Beside | None = None,
                    ) -> tuple[Hits, Hits]:
        """Both fields' ``topk``; with faiss indexes, the context field's on ``beside``
        meanwhile (a spare thread, if one is free: ADR 0070)."""
        def context() -> Hits:
            return self.topk(query, k, field="context", tiers=tiers, statuses=statuses)

        wait = beside(context) if beside is not None and self.ann is not None else context
        try:
            content = self.topk(query, k, tiers=tiers, statuses=statuses)
        finally:  # also on an error: the caller's read guard must outlast the other search
            other = wait()
        return content, other

    def topk_many(self, queries: np.ndarray, k: int, *, field: str = "content",
                  tiers: Collection[Tier] | None = None,
                  statuses: Collection[Status] = (Status.ACTIVE,), exact: bool = False
                  ) -> list[Hits]:
        """Top-k per query row: by the faiss index when one serves and the filters allow more
        rows than ``exact_max``, else every allowed row scored exactly."""
        qs = np.asarray(queries, dtype=np.float32)
        rows, sel = self._filter(field, statuses, tiers) if k > 0 else (np.zeros(0), None)
        if rows.size == 0:
            return [[] for _ in qs]
        matrix = self.rows[field]
        if self.ann is None or exact or rows.size < self.exact_max:
            if len(qs) == 1:  # few allowed rows: a gather, else the whole matrix at once
                n = len(self.ids)
                return [self._best(rows, matrix[rows] @ qs[0] if rows.size * 4 < n
                                   else (matrix[:n] @ qs[0])[rows], k)]
            sub = matrix[rows]
            return [self._best(rows, s, k) for start in range(0, len(qs), 256)  # bounded memory
                    for s in qs[start:start + 256] @ sub.T]
        out = []
        for q, keys in zip(qs, faiss_fields.search(self.ann[field], qs, k, sel), strict=True):
            found = self.key_row[keys[keys >= 0]]  # the codes' candidates, re-scored exactly
            # lists probed held too few allowed rows (a narrow filter): score them all
            out.append(self._best(found, matrix[found] @ q, k) if found.size >= min(
                k, rows.size) else self._best(rows, matrix[rows] @ q, k))
        return out

    def _best(self, rows: np.ndarray, scores: np.ndarray, k: int) -> Hits:
        """The top k of ``rows`` by score, ties by row (the same order whichever path)."""
        if k < scores.size:
            part = np.argpartition(-scores, k - 1)[:k]
            rows, scores = rows[part], scores[part]
        order = np.lexsort((rows, -scores))[:k]
        return [(self.ids[int(rows[i])], float(scores[i])) for i in order]

    def pks_of(self, ids: Sequence[str]) -> list[int]:
        """The SQLite row ids of the indexed ``ids`` (the others are not here)."""
        return [int(self.col["pk"][r]) for i in ids if (r := self.row_of.get(i)) is not None]

    def similarities(self, ids: Sequence[str], query: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]:
        """id -> (content cosine, context cosine or None) for the indexed ``ids``."""
        found = [(i, r) for i in dict.fromkeys(ids) if (r := self.row_of.get(i)) is not None]
        rows = np.array([r for _, r in found], dtype=np.int64)
        q = np.asarray(query, dtype=np.float32)
        content = (self.rows["content"][rows] @ q).tolist()
        context: list[float | None] = [None] * len(found)
        with_context = np.flatnonzero(self.col["has_context"][rows])
        for j, score in zip(with_context.tolist(), (self.rows["context"][
                rows[with_context]] @ q).tolist(), strict=True):
            context[j] = score
        return {i: (content[j], context[j]) for j, (i, _) in enumerate(found)}
