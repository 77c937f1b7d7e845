"""One embedding model per namespace: a store's vectors are only comparable with vectors of
the model that made them.

The first write or retrieval of a namespace in a process re-embeds one stored memory's
content with the embedder in use and compares it with the stored vector: the same model
gives a cosine of 1 (ONNX Runtime against torch: > 0.99999), the int8 model against the
float one 0.97-0.995, another model far less. Below ``SAME_MODEL`` the namespace is refused
with ``EmbeddingMismatchError`` before anything is embedded or written. A namespace that
passed, or had no vectors yet (this embedder's are its first), is not checked again.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from graphmem.engine.embedding import Embedder
from graphmem.errors import EmbeddingMismatchError
from graphmem.store.base import MemoryStore

log = logging.getLogger(__name__)

#: the least cosine between a stored vector and its content embedded again that counts as
#: the same model (measured: same model 0.99999+, int8 against float 0.971-0.995)
SAME_MODEL = 0.999
_SAMPLE = 8  # the first memories read to find one with a vector


class VectorGuard:
    """Checks a namespace's stored vectors against the embedder in use, once per namespace.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> _ = mem.store("the deploy failed", namespace="ops")
        >>> guard = VectorGuard(mem.core.store, RandomEmbedder())
        >>> guard.check("ops"); "ops" in guard.checked
        True
        >>> mem.close()
    """

    def __init__(self, store: MemoryStore, embedder: Embedder, *, enabled: bool = True
                 ) -> None:
        self.store = store
        self.embedder = embedder
        self.enabled = enabled
        self.checked: set[str] = set()
        self._lock = threading.Lock()

    def check(self, namespace: str) -> None:
        """Raise ``EmbeddingMismatchError`` when the namespace's vectors are another model's."""
        if not self.enabled or namespace in self.checked:
            return
        with self._lock:
            if namespace in self.checked:
                return
            sample = self._sample(namespace)
            if sample is None:  # nothing stored yet: this embedder's vectors are the first
                self.checked.add(namespace)
                return
            content, stored = sample
            fresh = np.asarray(self.embedder.embed([content])[0], dtype=np.float32)
            norms = float(np.linalg.norm(fresh) * np.linalg.norm(stored))
            cosine = float(fresh @ stored) / norms if norms else 0.0
            if cosine < SAME_MODEL:
                log.warning("namespace %r: stored vectors from another embedding model "
                            "(cosine %.4f)", namespace, cosine)
                raise EmbeddingMismatchError(
                    f"namespace {namespace!r} holds vectors of another embedding model "
                    f"(a stored memory embedded again: cosine {cosine:.4f}, the same model "
                    f"gives 1.0): open it with the model (and embedding.quantize setting) "
                    f"that wrote it, or embed it again with this one: `graphmem export "
                    f"--without-vectors`, then `graphmem import` into a new store or an "
                    f"empty namespace")
            self.checked.add(namespace)

    def _sample(self, namespace: str) -> tuple[str, np.ndarray] | None:
        # the first page only: a namespace's first memories have vectors
        page = next(iter(self.store.iter_memories(namespace, page=_SAMPLE, embeddings=True)), [])
        return next(((m.content, np.asarray(m.embedding, dtype=np.float32)) for m in page
                     if m.embedding is not None and m.content), None)
