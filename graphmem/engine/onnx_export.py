"""The ONNX files of the embedding model: written, fused and quantised once, atomically.

The files sit side by side in the cache folder, each made once from the model folder's own
weights (nothing is downloaded, torch is not imported) and moved into place whole, so a second
process sees all of a file or nothing:

- ``<digest>.onnx``: the transformer, written by ``onnx_build`` (issue 47; torch's export
  before, ADR 0010, gave the same hidden states);
- ``<digest>-fused.onnx``: the same transformer written once more with eager attention and
  rewritten by ONNX Runtime's transformer optimizer into its fused operators (ADR 0040). The
  float model's default: the same vectors (checked before the file is kept), less time;
- ``<digest>-int8.onnx``: the plain file's weights quantised to int8 (ADR 0011). Made from the
  plain file, as before ADR 0040: a store written with it keeps its vectors;
- ``<digest>-fused-int8-7bit.onnx``: the query model (ADR 0046): the fused file's weights
  quantised to int8 per channel within 7 bits (no int16 overflow on CPUs without VNNI, so the
  same vectors everywhere). Queries only: memories keep the float model's vectors.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from graphmem.engine import onnx_build

log = logging.getLogger(__name__)

#: texts of different lengths: padding and one text alone both take part in the check
_CHECK_TEXTS = ["graphmem exports its model", "a",
                "the deploy failed because a migration locked the billing table at noon"]


def _once(path: Path, make: Callable[[str], object], message: str, *args: object
          ) -> Path:
    """``path`` made once by ``make`` in a temporary file beside it that replaces it whole."""
    if not path.exists():
        log.info(message, *args)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".onnx", dir=path.parent)
        os.close(fd)
        try:
            make(tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return path


@contextlib.contextmanager
def _quiet_root() -> Iterator[None]:
    """ONNX Runtime's tools advise on the root logger: silence them, not the caller's logs."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def build(folder: Path, path: Path) -> Path:
    """The transformer of the model ``folder`` (``onnx_build``) at ``path``, written once."""
    return _once(path, lambda tmp: onnx_build.build(folder, tmp),
                 "writing the embedding model's ONNX file (once)")


Tokenize = Callable[[list[str]], dict[str, np.ndarray]]


def _checked(path: Path, source: Path, tokenize: Tokenize, make: Callable[[str], None], *,
             what: str, limit: float, otherwise: str) -> Path:
    """``path`` made once by ``make`` from ``source`` and kept when its vectors of the check
    texts are within ``limit`` (1 - cosine) of the source's; where making fails or strays, a
    copy of ``source`` takes its name, so the next start does not try again."""

    def checked(tmp: str) -> None:
        try:
            with _quiet_root(), warnings.catch_warnings():  # ONNX Runtime's tools' advice
                warnings.simplefilter("ignore")
                make(tmp)
            gap: float | None = _largest_gap(source, Path(tmp), tokenize)
        except Exception as exc:  # e.g. an architecture the optimizer does not know
            log.warning("the %s was not made (%s): %s", what, type(exc).__name__, otherwise)
            gap = None
        if gap is None or gap > limit:
            if gap is not None:
                log.warning("the %s strays from %s (1 - cosine = %.2g): %s", what,
                            source.name, gap, otherwise)
            shutil.copyfile(source, tmp)

    return _once(path, checked, "making the %s (once)", what)


def fused(plain: Path, folder: Path, tokenize: Tokenize) -> Path:
    """The fused float file beside ``plain`` (ADR 0040), made once: the model ``folder``'s
    transformer written with eager attention, rewritten by ONNX Runtime's optimizer."""

    def make(target: str) -> None:
        from onnxruntime.transformers import optimizer

        with tempfile.TemporaryDirectory(dir=plain.parent) as work:
            eager = str(Path(work) / "eager.onnx")
            heads, width = onnx_build.build(folder, eager, eager=True)
            # level 0: the optimizer's fusions alone; level 1's constant folding has nothing
            # to fold in the built graph and would import torch
            optimizer.optimize_model(eager, model_type="bert", opt_level=0, use_gpu=False,
                                     num_heads=heads, hidden_size=width
                                     ).save_model_to_file(target)

    return _checked(plain.with_name(plain.stem + "-fused.onnx"), plain, tokenize, make,
                    what="fused embedding model", limit=1e-5,
                    otherwise="the plain ONNX file serves")


def _largest_gap(plain: Path, other: Path, tokenize: Tokenize) -> float:
    """1 - the smallest cosine between the two files' pooled vectors of the check texts."""
    import onnxruntime as ort

    batch = tokenize(_CHECK_TEXTS)
    vectors = []
    for file in (plain, other):
        session = ort.InferenceSession(str(file), providers=["CPUExecutionProvider"])
        feed = {i.name: np.asarray(batch[i.name], dtype=np.int64)
                for i in session.get_inputs()}
        vectors.append(pooled(session.run(None, feed)[0], batch["attention_mask"]))
    return float(1.0 - (vectors[0] * vectors[1]).sum(axis=1).min())


def pooled(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """The mean of each text's token states, unit length: the model's pooling."""
    mask = np.asarray(attention_mask)[..., None].astype(np.float32)
    mean = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
    return np.asarray(mean / np.clip(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12, None))


def quantized(plain: Path) -> Path:
    """The int8 (per-channel, dynamic) file beside ``plain``, made once."""

    def make(target: str) -> None:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with _quiet_root():
            quantize_dynamic(plain, target, weight_type=QuantType.QInt8, per_channel=True)

    return _once(plain.with_name(plain.stem + "-int8.onnx"), make,
                 "quantising the embedding model to int8 (once)")


#: the query model's vectors may stray this far from the float ones on the check texts
#: (1 - cosine; measured in ADR 0046) before it is refused
QUERY_GAP = 0.02


def for_queries(fused_file: Path, tokenize: Tokenize) -> Path:
    """The query model beside ``fused_file`` (ADR 0046), made once: its weights int8 per
    channel within 7 bits. Where it strays by more than ``QUERY_GAP``, queries are embedded as
    memories are."""

    def make(target: str) -> None:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        # DefaultTensorType: the fused operators' outputs have no declared type
        quantize_dynamic(fused_file, target, weight_type=QuantType.QInt8, per_channel=True,
                         reduce_range=True, extra_options={"DefaultTensorType": 1})

    return _checked(fused_file.with_name(fused_file.stem + "-int8-7bit.onnx"), fused_file,
                    tokenize, make, what="int8 query model", limit=QUERY_GAP,
                    otherwise="queries use the float model")
