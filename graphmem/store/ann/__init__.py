"""The vector layer of the embedded store (ADR 0068): per namespace, ``index.VectorIndex``
(exact numpy top-k; faiss indexes from ``faiss_fields`` once ``builder`` built them), loaded on
first use by ``load`` and saved beside SQLite by ``files``. ``Vectors`` is what the store
asks of it."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

import numpy as np

from graphmem.models import Status, Tier

Hits = list[tuple[str, float]]


class Vectors(Protocol):
    """One namespace's vectors, as ``SQLiteStore`` uses them (``index.VectorIndex``).

    Example:
        >>> from graphmem.store.ann.index import VectorIndex
        >>> vectors: Vectors = VectorIndex(2)
        >>> vectors.upsert("a", np.array([1, 0], np.float32), None, Tier.FAST, Status.ACTIVE)
        >>> len(vectors), vectors.topk(np.array([1, 0], np.float32), 1)
        (1, [('a', 1.0)])
    """

    def __len__(self) -> int: ...

    def upsert(self, id_: str, content: np.ndarray | None, context: np.ndarray | None,
               tier: Tier, status: Status, *, pk: int | None = None) -> None: ...

    def remove(self, id_: str) -> None: ...

    def set_state(self, id_: str, tier: Tier, status: Status) -> None: ...

    def topk(self, query: np.ndarray, k: int, *, field: str = "content",
             tiers: Collection[Tier] | None = None, statuses: Collection[Status] = ...,
             exact: bool = False) -> Hits: ...

    def topk_many(self, queries: np.ndarray, k: int, *, field: str = "content",
                  tiers: Collection[Tier] | None = None, statuses: Collection[Status] = ...,
                  exact: bool = False) -> list[Hits]: ...

    def similarities(self, ids: Sequence[str], query: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]: ...

    def state(self) -> dict[str, Any]: ...
