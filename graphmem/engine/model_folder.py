"""A sentence-transformers model folder read without torch (ADR 0036).

The ONNX backend needs from the model only its tokenizer, its maximum sequence length, its
width and the certainty that its pipeline is transformer -> mean pooling (-> normalise). All
of that is in the folder's JSON files, so torch and transformers are not imported for it.
``read`` returns ``None`` for anything it does not understand (a model named, not a folder; a
folder without a ``tokenizer.json``), and the caller then embeds with sentence-transformers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmem.errors import EmbeddingError

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_OTHER_MODES = ("cls_token", "max_tokens", "mean_sqrt_len_tokens", "lasttoken",
                "weightedmean_tokens")


@dataclass(frozen=True)
class ModelFolder:
    """What the ONNX backend runs with: a tokenizer set to pad and truncate, and the width.

    Example:
        >>> from graphmem.engine.embedding import default_model_path
        >>> spec = read(default_model_path())
        >>> (spec.max_seq_length, spec.dim)
        (256, 384)
        >>> [len(spec.tokenizer.encode(t).ids) for t in ("a", "a b c", "word " * 999)]
        [3, 5, 256]
    """

    path: Path
    tokenizer: Any  # tokenizers.Tokenizer
    max_seq_length: int
    dim: int
    pad_id: int = 0


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read {path}: {exc}") from exc


def _mean_pooled(modules: list[dict[str, Any]], folder: Path) -> tuple[bool, int | None]:
    """Whether the pipeline is transformer -> mean pooling (-> normalise), and the width."""
    types = [m.get("type") for m in modules]
    if types[:2] != [_TRANSFORMER, _POOLING] or not set(types[2:]) <= {_NORMALIZE}:
        return False, None
    pooling = _json(folder / modules[1].get("path", "") / "config.json")
    mode = pooling.get("pooling_mode")  # newer sentence-transformers write one mode
    mean = (mode == "mean" if mode is not None else
            bool(pooling.get("pooling_mode_mean_tokens"))
            and not any(pooling.get(f"pooling_mode_{m}") for m in _OTHER_MODES))
    return mean, pooling.get("word_embedding_dimension")


def read(model: str) -> ModelFolder | None:
    """The folder's tokenizer and shape, or None when the model must be loaded to know.

    Raises ``EmbeddingError`` when the folder's pipeline is not mean pooled (the ONNX backend
    runs mean-pooled models only).
    """
    folder = Path(model)
    if not (folder / "modules.json").is_file() or not (folder / "tokenizer.json").is_file():
        return None
    modules = _json(folder / "modules.json")
    if not isinstance(modules, list) or len(modules) < 2:
        return None
    mean, dim = _mean_pooled(sorted(modules, key=lambda m: m.get("idx", 0)), folder)
    if not mean:
        raise EmbeddingError("the ONNX backend runs mean-pooled models only: "
                             "set embedding.backend = torch for this model")
    if not isinstance(dim, int):
        return None
    from tokenizers import Tokenizer

    settings = (_json(folder / "sentence_bert_config.json")
                if (folder / "sentence_bert_config.json").is_file() else {})
    if settings.get("do_lower_case"):  # sentence-transformers lowers the text first
        return None
    # as sentence-transformers: the folder's setting, else the tokenizer's own limit
    max_len = settings.get("max_seq_length") or _model_max_length(folder)
    if not isinstance(max_len, int):
        return None
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    pad = (tokenizer.padding or {}).get("pad_id", 0)  # the caller pads to the batch's longest
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_len)
    return ModelFolder(folder, tokenizer, max_len, dim, pad)


def transformer_folder(folder: Path) -> Path:
    """Where a sentence-transformers folder keeps its transformer (its first module)."""
    modules = _json(folder / "modules.json")
    first = min(modules, key=lambda m: m.get("idx", 0))
    return folder / str(first.get("path", ""))


def _model_max_length(folder: Path) -> int | None:
    """The tokenizer's own limit (``tokenizer_config.json``), which caps the model's."""
    config = folder / "tokenizer_config.json"
    value = _json(config).get("model_max_length") if config.is_file() else None
    return value if isinstance(value, int) and value < 10**6 else None
