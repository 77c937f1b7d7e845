"""In-memory vector index of one namespace: normalised float32 rows, growable.

Kept in step with every committed write by the SQLite adapter and rebuilt from SQLite at open.
Each row also carries its tier and status codes so top-k can filter without a database trip,
and its SQLite row id (``pk``), which keys the optional HNSW graphs (``graphmem.store.ann``)
that serve top-k in a large namespace: their candidates are re-scored with the float32 rows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from graphmem.models import TIER_ORDER, Status, Tier
from graphmem.store.ann import HnswField

_STATUS_ORDER = (Status.ACTIVE, Status.ARCHIVED, Status.EXPIRED)
_MIN_FETCH, _MAX_FETCH = 64, 4096  # HNSW candidates asked for, before the filters
TIER_CODE = {t: i for i, t in enumerate(TIER_ORDER)}
STATUS_CODE = {s: i for i, s in enumerate(_STATUS_ORDER)}


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

    def __init__(self, dim: int, capacity: int = 1024) -> None:
        self.dim = dim
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self._content = np.zeros((capacity, dim), dtype=np.float32)
        self._context = np.zeros((capacity, dim), dtype=np.float32)
        self._has_context = np.zeros(capacity, dtype=bool)
        self._tier = np.zeros(capacity, dtype=np.int8)
        self._status = np.zeros(capacity, dtype=np.int8)
        self._pk = np.zeros(capacity, dtype=np.int64)
        self.row_of_pk: dict[int, int] = {}
        self._next_key = 1 << 62  # keys for rows given without a pk (tests, examples)
        #: field -> HNSW graph, once one serves this namespace (``install``)
        self.ann: dict[str, HnswField] | None = None
        #: pks written while a graph is being built from a snapshot (``snapshot``)
        self.pending: set[int] | None = None
        #: a write changed the vectors since the graph was loaded or saved
        self.changed = False

    def __len__(self) -> int:
        return len(self.ids)

    def _grow(self, need: int) -> None:
        cap = self._content.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap * 2)
        for name in ("_content", "_context", "_has_context", "_tier", "_status", "_pk"):
            old = getattr(self, name)
            grown = np.zeros((new_cap, *old.shape[1:]), dtype=old.dtype)
            grown[:cap] = old
            setattr(self, name, grown)

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
        if content is not None:
            self._content[row] = content
        if context is not None:
            self._context[row] = context
            self._has_context[row] = True
        else:
            self._has_context[row] = False
        self._tier[row] = TIER_CODE[tier]
        self._status[row] = STATUS_CODE[status]
        self._graph_put(int(self._pk[row]), row)

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
        self.ids.extend(ids)
        self.row_of.update(zip(ids, range(start, start + m), strict=True))
        self.row_of_pk.update(zip(pks, range(start, start + m), strict=True))
        if self.ann is not None or self.pending is not None:
            for row in range(start, start + m):
                self._graph_put(int(self._pk[row]), row)
        self.changed = True

    def set_state(self, id_: str, tier: Tier, status: Status) -> None:
        row = self.row_of.get(id_)
        if row is not None:
            self._tier[row] = TIER_CODE[tier]
            self._status[row] = STATUS_CODE[status]

    def remove(self, id_: str) -> None:
        row = self.row_of.pop(id_, None)
        if row is None:
            return
        pk = int(self._pk[row])
        del self.row_of_pk[pk]
        last = len(self.ids) - 1
        if row != last:
            moved = self.ids[last]
            for arr in (self._content, self._context, self._has_context, self._tier,
                        self._status, self._pk):
                arr[row] = arr[last]
            self.ids[row] = moved
            self.row_of[moved] = row
            self.row_of_pk[int(self._pk[row])] = row
            if self.pending is not None:  # a build may have read the moved row mid-move
                self.pending.add(int(self._pk[row]))
        self.ids.pop()
        self._graph_put(pk, None)

    # HNSW graphs ----------------------------------------------------------------------------
    def _graph_put(self, pk: int, row: int | None) -> None:
        """Bring the graphs in step with one row (None: gone); note it for a running build."""
        self.changed = True
        if self.pending is not None:
            self.pending.add(pk)
        if self.ann is None:
            return
        key = np.array([pk])
        if row is None:
            self.ann["content"].remove(key)
            self.ann["context"].remove(key)
            return
        self.ann["content"].add(key, self._content[row:row + 1])
        if self._has_context[row]:
            self.ann["context"].add(key, self._context[row:row + 1])
        else:
            self.ann["context"].remove(key)

    def snapshot(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Views of (pks, content, context, has_context) for a build off the store's lock (no
        copy: 3 GB at 1M); every pk whose row changes from now on is noted in ``pending`` and
        replayed by ``install``, so a row read mid-write is corrected."""
        n = len(self.ids)
        self.pending = set()
        return self._pk[:n], self._content[:n], self._context[:n], self._has_context[:n]

    def install(self, graphs: dict[str, HnswField]) -> None:
        """Serve top-k from ``graphs`` (built from a snapshot, or loaded): the writes noted
        since the snapshot are replayed into them first."""
        pending, self.pending = self.pending or set(), None
        self.ann = graphs
        for pk in pending:
            self._graph_put(pk, self.row_of_pk.get(pk))

    def drop_graphs(self) -> None:
        self.ann, self.pending = None, None

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

    def similarities(self, ids: Sequence[str], query: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]:
        """id -> (content cosine, context cosine or None) for the indexed ``ids``."""
        q = np.asarray(query, dtype=np.float32)
        out: dict[str, tuple[float, float | None]] = {}
        for id_ in ids:
            row = self.row_of.get(id_)
            if row is not None:
                ctx = float(np.dot(self._context[row], q)) if self._has_context[row] else None
                out[id_] = (float(np.dot(self._content[row], q)), ctx)
        return out

    def topk(self, query: np.ndarray, k: int, *, field: str = "content",
             tiers: Collection[Tier] | None = None,
             statuses: Collection[Status] = (Status.ACTIVE,),
             exact: bool = False) -> list[tuple[str, float]]:
        n = len(self.ids)
        if n == 0 or k <= 0:
            return []
        if self.ann is not None and not exact:
            found = self._graph_topk(query, k, field, tiers, statuses)
            if found is not None:
                return found
        matrix = self._content if field == "content" else self._context
        scores = matrix[:n] @ np.asarray(query, dtype=np.float32)
        mask = np.isin(self._status[:n], [STATUS_CODE[s] for s in statuses])
        if tiers is not None:
            mask &= np.isin(self._tier[:n], [TIER_CODE[t] for t in tiers])
        if field == "context":
            mask &= self._has_context[:n]
        candidates = np.flatnonzero(mask)
        if candidates.size == 0:
            return []
        sub = scores[candidates]
        part = np.argpartition(-sub, k)[:k] if k < sub.size else np.arange(sub.size)
        order = part[np.argsort(-sub[part], kind="stable")]
        return [(self.ids[int(candidates[i])], float(sub[i])) for i in order]

    def _graph_topk(self, query: np.ndarray, k: int, field: str,
                    tiers: Collection[Tier] | None, statuses: Collection[Status],
                    ) -> list[tuple[str, float]] | None:
        """Top-k from the HNSW graph: over-fetch, keep the rows the filters allow, re-score
        them with the float32 rows. None when the filters leave fewer than k of ``_MAX_FETCH``
        candidates (a rare tier or status): the exact scan answers then."""
        assert self.ann is not None
        graph = self.ann[field]
        allowed_status = {STATUS_CODE[s] for s in statuses}
        allowed_tier = None if tiers is None else {TIER_CODE[t] for t in tiers}
        q = np.asarray(query, dtype=np.float32)
        fetch = max(4 * k, _MIN_FETCH)
        while True:
            keys, _ = graph.search(q, min(fetch, len(graph)))
            rows = []
            for key in keys.tolist():
                row = self.row_of_pk.get(key)
                if (row is not None and int(self._status[row]) in allowed_status
                        and (allowed_tier is None or int(self._tier[row]) in allowed_tier)):
                    rows.append(row)
            if len(rows) >= k or fetch >= len(graph):
                break
            if fetch >= _MAX_FETCH:
                return None
            fetch *= 4
        if not rows:
            return []
        idx = np.array(rows)
        matrix = self._content if field == "content" else self._context
        scores = matrix[idx] @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.ids[int(idx[i])], float(scores[i])) for i in order]

    def topk_many(self, queries: np.ndarray, k: int, *,
                  statuses: Collection[Status] = (Status.ACTIVE,),
                  chunk: int = 256) -> list[list[tuple[str, float]]]:
        """Content-field top-k for each query row: from the HNSW graph when one serves, else
        one matrix product per chunk of rows."""
        n = len(self.ids)
        out: list[list[tuple[str, float]]] = []
        if n == 0 or k <= 0:
            return [[] for _ in range(len(queries))]
        if self.ann is not None:
            found = [self._graph_topk(q, k, "content", None, statuses) for q in queries]
            if all(f is not None for f in found):
                return [f for f in found if f is not None]
        mask = np.isin(self._status[:n], [STATUS_CODE[s] for s in statuses])
        cols = np.flatnonzero(mask)
        if cols.size == 0:
            return [[] for _ in range(len(queries))]
        sub = self._content[:n][cols]
        kk = min(k, cols.size)
        for start in range(0, len(queries), chunk):
            scores = np.asarray(queries[start:start + chunk], dtype=np.float32) @ sub.T
            part = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
            for r in range(scores.shape[0]):
                idx = part[r][np.argsort(-scores[r, part[r]], kind="stable")]
                out.append([(self.ids[int(cols[i])], float(scores[r, i])) for i in idx])
        return out
