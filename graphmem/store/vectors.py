"""In-memory exact vector index of one namespace: normalised float32 rows, growable.

Kept in step with every committed write by the SQLite adapter and rebuilt from SQLite at open.
Each row also carries its tier and status codes so top-k can filter without a database trip.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from graphmem.models import TIER_ORDER, Status, Tier

_STATUS_ORDER = (Status.ACTIVE, Status.ARCHIVED, Status.EXPIRED)
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

    def __len__(self) -> int:
        return len(self.ids)

    def _grow(self, need: int) -> None:
        cap = self._content.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap * 2)
        for name in ("_content", "_context", "_has_context", "_tier", "_status"):
            old = getattr(self, name)
            grown = np.zeros((new_cap, *old.shape[1:]), dtype=old.dtype)
            grown[:cap] = old
            setattr(self, name, grown)

    def upsert(self, id_: str, content: np.ndarray | None, context: np.ndarray | None,
               tier: Tier, status: Status) -> None:
        row = self.row_of.get(id_)
        if row is None:
            if content is None:
                return  # nothing to index
            row = len(self.ids)
            self._grow(row + 1)
            self.ids.append(id_)
            self.row_of[id_] = row
        if content is not None:
            self._content[row] = content
        if context is not None:
            self._context[row] = context
            self._has_context[row] = True
        else:
            self._has_context[row] = False
        self._tier[row] = TIER_CODE[tier]
        self._status[row] = STATUS_CODE[status]

    def set_state(self, id_: str, tier: Tier, status: Status) -> None:
        row = self.row_of.get(id_)
        if row is not None:
            self._tier[row] = TIER_CODE[tier]
            self._status[row] = STATUS_CODE[status]

    def remove(self, id_: str) -> None:
        row = self.row_of.pop(id_, None)
        if row is None:
            return
        last = len(self.ids) - 1
        if row != last:
            moved = self.ids[last]
            for arr in (self._content, self._context, self._has_context, self._tier,
                        self._status):
                arr[row] = arr[last]
            self.ids[row] = moved
            self.row_of[moved] = row
        self.ids.pop()

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
             statuses: Collection[Status] = (Status.ACTIVE,)) -> list[tuple[str, float]]:
        n = len(self.ids)
        if n == 0 or k <= 0:
            return []
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

    def topk_many(self, queries: np.ndarray, k: int, *,
                  statuses: Collection[Status] = (Status.ACTIVE,),
                  chunk: int = 256) -> list[list[tuple[str, float]]]:
        """Content-field top-k for each query row, one matrix product per chunk of rows."""
        n = len(self.ids)
        out: list[list[tuple[str, float]]] = []
        if n == 0 or k <= 0:
            return [[] for _ in range(len(queries))]
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
