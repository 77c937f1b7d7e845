"""Query embeddings of concurrent retrievals in one model call.

Queries embedded together cost the model less CPU each than one by one (ADR 0021). A
retrieval hands its query to the batcher and waits; whichever waiting caller finds the model
idle embeds everything pending (at most ``max_batch``) in one call and hands each caller its
vector. Nothing waits for company: a query alone is embedded at once, and batches form only
while the model is busy, so under load.
"""

from __future__ import annotations

import threading

import numpy as np

from graphmem.engine.embedding import Embedder, queries_of


class QueryBatcher:
    """Embeds one text per call, several concurrent calls in one ``embed``.

    Example:
        >>> from graphmem.testing import RandomEmbedder
        >>> batcher = QueryBatcher(RandomEmbedder())
        >>> bool(np.allclose(batcher.embed_one("x"), RandomEmbedder().embed(["x"])[0]))
        True
    """

    def __init__(self, embedder: Embedder, max_batch: int = 32, *,
                 queries: bool = False) -> None:
        #: retrievals' batches embed queries (``embed_queries``, ADR 0046), writes' memories
        self._embed_texts = queries_of(embedder) if queries else embedder.embed
        self.max_batch = max_batch
        self._cond = threading.Condition()
        self._pending: list[list[object]] = []  # [text, vector or None, error or None]
        self._running = False

    def embed_one(self, text: str) -> np.ndarray:
        item: list[object] = [text, None, None]
        with self._cond:
            self._pending.append(item)
            while item[1] is None and item[2] is None:
                if self._running:
                    self._cond.wait()
                    continue
                self._running = True
                batch = self._pending[:self.max_batch]
                del self._pending[:self.max_batch]
                self._cond.release()
                try:
                    self._embed(batch)
                finally:
                    self._cond.acquire()
                    self._running = False
                    self._cond.notify_all()
        if item[2] is not None:
            raise item[2]  # type: ignore[misc]
        return item[1]  # type: ignore[return-value]

    def _embed(self, batch: list[list[object]]) -> None:
        try:
            vectors = self._embed_texts([str(b[0]) for b in batch])
        except BaseException as exc:  # every caller of the batch sees the model's error
            for b in batch:
                b[2] = exc
            return
        for b, v in zip(batch, vectors, strict=True):
            b[1] = v
