"""The transformer's products in bfloat16 on a CPU with AMX: batches of memories ~3x faster
(ADR 0049).

ONNX Runtime has no bfloat16 arithmetic on x86, and its float model runs the 2 cores near
their float peak (~260 texts/s). torch under ``autocast`` hands the transformer's matrix
products to oneDNN in bfloat16, which runs them on the AMX tiles of Sapphire Rapids and later
Xeons, while layer norms, softmax and the activations stay float: ~780 texts/s for the same
batches, vectors at cosine >= 0.9999 to the float ones, LoCoMo R@10 0.7707 against 0.7711
(the whole model in bfloat16 was ~15% faster but lost 0.0018). Without AMX bfloat16 is
slower than float (271 texts/s with AVX512-BF16 alone, 105 emulated), so ``supported`` asks
the CPU first. Only the transformer runs here: the ONNX embedder tokenises, pools and
normalises as for its own model.

torch is imported on the first batch, not before (~3 s and ~740 MB of RSS with the model): a
process that embeds only queries or single memories never loads it (ADR 0036).
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.engine.model_folder import transformer_folder
from graphmem.errors import EmbeddingError

log = logging.getLogger(__name__)

#: the CPU flags oneDNN needs to run bfloat16 products on the AMX tiles
AMX_FLAGS = frozenset({"amx_tile", "amx_bf16"})


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The first processor's flags as Linux reports them; empty elsewhere."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def supported(flags: frozenset[str] | None = None) -> bool:
    """Whether bfloat16 batches are faster here: Linux on a CPU with AMX.

    Example:
        >>> supported(frozenset({"avx512f", "avx512_bf16"})), supported(AMX_FLAGS)
        (False, True)
    """
    if flags is None:
        flags = cpu_flags() if sys.platform.startswith("linux") else frozenset()
    return flags >= AMX_FLAGS


class Bf16Transformer:
    """The model's transformer, its products in bfloat16, loaded on first use; one batch at
    a time.

    Example:
        >>> from graphmem.engine.embedding import default_model_path
        >>> t = Bf16Transformer(Path(default_model_path()), threads=2)  # no I/O, no torch
        >>> t.loaded
        False
    """

    def __init__(self, model_folder: Path, *, threads: int) -> None:
        self.model_folder = model_folder
        self.threads = threads
        self._model: Any = None
        self._torch: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Import torch and load the transformer, once; ``EmbeddingError`` if it cannot."""
        with self._lock:
            if self._model is not None:
                return
            try:
                import torch
                from transformers import AutoModel
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                model = AutoModel.from_pretrained(str(transformer_folder(self.model_folder)),
                                                  dtype=torch.float32).eval()
            except Exception as exc:
                raise EmbeddingError(f"cannot load the bfloat16 transformer: {exc}") from exc
            if gc.get_freeze_count():  # a settled server: torch's objects out of the passes
                gc.freeze()
            log.info("embedding batches of memories in bfloat16 (AMX)")
            self._torch, self._model = torch, model

    def hidden(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """The last hidden state, float32, of a tokenised batch (input_ids, attention_mask,
        token_type_ids as int64 arrays); ``load`` first."""
        with self._lock:
            torch = self._torch
            torch.set_num_threads(self.threads)  # the process's setting may have moved
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
                out = self._model(**{k: torch.from_numpy(np.ascontiguousarray(v))
                                     for k, v in inputs.items()})
                return np.asarray(out.last_hidden_state.float().numpy())
