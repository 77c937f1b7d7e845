"""The embedding model's BERT encoder written as an ONNX graph, without torch (issue 47).

Until now the ONNX file was torch's export of the transformer (ADR 0010), so every install
carried torch for one export. A BERT encoder is a short, fixed list of operators: this module
writes it with the ``onnx`` package's own builders, the weights read from the folder's
``model.safetensors`` with ``safetensors``' numpy loader and the shape from its
``config.json``. The graph takes and gives what torch's export did (inputs ``input_ids``,
``token_type_ids``, ``attention_mask``: int64 ``[batch, tokens]``; output ``hidden``, the last
hidden state, float32 ``[batch, tokens, width]``; opset 17), and its operators are laid out
as ONNX Runtime's transformer optimizer expects a BERT export to be (eager attention, the
mask as ``(1 - mask) * -10000`` added before the softmax, the position ids sliced to the
input's length), so the fused file (ADR 0040) gets the same fused operators as before:
EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu.

``supported`` says which folders it writes (BERT with absolute positions and exact GELU,
float weights in safetensors, mean pooled); any other model embeds with sentence-transformers.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.engine import model_folder
from graphmem.errors import EmbeddingError

#: the graph's version: part of the cached file's name, raised whenever the graph changes
VERSION = "1"
#: what the masked positions add to the attention scores: exp() of it is 0 in float32, and
#: the optimizer's fused Attention uses the same value
MASK_FILTER = -10000.0
_INPUTS = ("input_ids", "token_type_ids", "attention_mask")  # torch's export's order


def _config(folder: Path) -> dict[str, Any] | None:
    """The transformer's config.json when this module writes its graph, else None."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        first = model_folder.transformer_folder(folder)
        config = json.loads((first / "config.json").read_text(encoding="utf-8"))
        mean, _ = model_folder._mean_pooled(sorted(modules, key=lambda m: m.get("idx", 0)),
                                            folder)
    except (OSError, ValueError, TypeError, AttributeError, EmbeddingError):
        return None
    if not (mean and isinstance(config, dict) and (first / "model.safetensors").is_file()):
        return None
    if (config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
            or config.get("is_decoder") or config.get("add_cross_attention")):
        return None
    sizes = [config.get(k) for k in ("hidden_size", "num_attention_heads",
                                     "num_hidden_layers", "intermediate_size")]
    if not all(isinstance(s, int) and s > 0 for s in sizes):
        return None
    if config["hidden_size"] % config["num_attention_heads"]:
        return None
    return config


def supported(folder: Path) -> bool:
    """Whether ``build`` writes this sentence-transformers folder's transformer: BERT with
    absolute positions and exact GELU, weights in ``model.safetensors``, mean pooled. Reads
    the folder's JSON files only.

    Example:
        >>> from graphmem.engine.embedding import default_model_path
        >>> supported(Path(default_model_path())), supported(Path("/nonexistent"))
        (True, False)
    """
    return _config(folder) is not None


def _weights(path: Path) -> dict[str, np.ndarray]:
    """The safetensors file's tensors as float32 arrays, without a ``bert.`` prefix."""
    from safetensors.numpy import load_file

    tensors = load_file(str(path))
    prefix = "" if "embeddings.word_embeddings.weight" in tensors else "bert."
    return {name[len(prefix):]: value for name, value in tensors.items()
            if name.startswith(prefix)}


class _Graph:
    """Nodes and initialisers as they are added; each node's one output named after it."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: dict[str, Any] = {}

    def const(self, name: str, value: Any, dtype: Any = np.int64) -> str:
        from onnx import numpy_helper

        if name not in self.initializers:
            self.initializers[name] = numpy_helper.from_array(
                np.array(value, dtype=dtype, order="C"), name)  # 0-d stays 0-d
        return name

    def weight(self, name: str, *, transpose: bool = False) -> str:
        """A tensor of the checkpoint; a linear layer's matrix transposed for MatMul."""
        if name not in self.weights:
            raise EmbeddingError(f"model.safetensors has no tensor {name!r}")
        value = self.weights[name].astype(np.float32)
        return self.const(name, value.T if transpose else value, np.float32)

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        output = f"{op_type.lower()}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], name=output,
                                           **attributes))
        return output

    def linear(self, x: str, layer: str) -> str:
        return self.op("Add", self.op("MatMul", x, self.weight(f"{layer}.weight",
                                                               transpose=True)),
                       self.weight(f"{layer}.bias"))

    def layer_norm(self, x: str, layer: str, eps: float) -> str:
        return self.op("LayerNormalization", x, self.weight(f"{layer}.weight"),
                       self.weight(f"{layer}.bias"), axis=-1, epsilon=eps)


def _embeddings(g: _Graph, eps: float, positions: int) -> str:
    """Words + token types + positions 0..tokens-1, layer-normalised (BERT's embeddings)."""
    length = g.op("Unsqueeze", g.op("Gather", g.op("Shape", "input_ids"), g.const("one", 1),
                                    axis=0), g.const("axes0", [0]))
    ids = g.op("Slice", g.const("position_ids", np.arange(positions)[None, :]),
               g.const("zero1", [0]), length, g.const("axes1", [1]), g.const("one1", [1]))
    words = g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids")
    types = g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"),
                 "token_type_ids")
    where = g.op("Gather", g.weight("embeddings.position_embeddings.weight"), ids)
    return g.layer_norm(g.op("Add", g.op("Add", words, types), where),
                        "embeddings.LayerNorm", eps)


def _layer(g: _Graph, x: str, mask: str, i: int, *, heads: int, eps: float, width: int,
           eager: bool) -> str:
    """One encoder layer: self-attention, then the GELU feed-forward block."""
    prefix = f"encoder.layer.{i}"
    split = g.const("split_heads", [0, 0, heads, width // heads])

    def by_head(name: str) -> str:  # [batch, heads, tokens, head width]
        return g.op("Transpose", g.op("Reshape", g.linear(x, f"{prefix}.attention.self.{name}"),
                                      split), perm=[0, 2, 1, 3])

    q, v = by_head("query"), by_head("value")
    key = g.op("Reshape", g.linear(x, f"{prefix}.attention.self.key"), split)
    if eager:  # the product divided by sqrt(head width): the pattern the optimizer fuses
        scores = g.op("Div", g.op("MatMul", q, g.op("Transpose", key, perm=[0, 2, 3, 1])),
                      g.const("sqrt_head", math.sqrt(width // heads), np.float32))
    else:  # q and k each times head width ** -0.25, as torch's export (its SDPA) rounds
        root = g.const("root_scale", (width // heads) ** -0.25, np.float32)
        scores = g.op("MatMul", g.op("Mul", q, root),
                      g.op("Mul", g.op("Transpose", key, perm=[0, 2, 3, 1]), root))
    weights = g.op("Softmax", g.op("Add", scores, mask), axis=-1)
    context = g.op("Reshape", g.op("Transpose", g.op("MatMul", weights, v), perm=[0, 2, 1, 3]),
                   g.const("join_heads", [0, 0, width]))
    x = g.layer_norm(g.op("Add", g.linear(context, f"{prefix}.attention.output.dense"), x),
                     f"{prefix}.attention.output.LayerNorm", eps)
    h = g.linear(x, f"{prefix}.intermediate.dense")  # GELU: h * 0.5 * (1 + erf(h / sqrt 2))
    h = g.op("Mul", g.op("Mul", h, g.op("Add", g.op("Erf", g.op(
        "Div", h, g.const("sqrt2", math.sqrt(2.0), np.float32))), g.const(
        "onef", 1.0, np.float32))), g.const("half", 0.5, np.float32))
    return g.layer_norm(g.op("Add", g.linear(h, f"{prefix}.output.dense"), x),
                        f"{prefix}.output.LayerNorm", eps)


def build(folder: Path, target: str, *, eager: bool = False) -> tuple[int, int]:
    """Write the float32 encoder of the sentence-transformers ``folder`` to ``target``;
    returns its heads and width, as the transformer optimizer is told them.

    By default the attention scores are rounded as torch's export rounds them (its hidden
    states to the bit, so the int8 file quantised from it is torch's too); ``eager``: in the
    form of transformers' eager attention, which ONNX Runtime's optimizer fuses (the fused
    Attention scales by itself, so the fused file is the same either way).

    Raises ``EmbeddingError`` for a folder ``supported`` refuses or a checkpoint without the
    tensors BERT needs.
    """
    import onnx
    from onnx import TensorProto, helper

    config = _config(folder)
    if config is None:
        raise EmbeddingError(f"{folder}: not a BERT model folder the ONNX builder writes")
    first = model_folder.transformer_folder(folder)
    g = _Graph(_weights(first / "model.safetensors"))
    eps = float(config.get("layer_norm_eps", 1e-12))
    width, heads = config["hidden_size"], config["num_attention_heads"]
    x = _embeddings(g, eps, int(config.get("max_position_embeddings", 512)))
    # [batch, 1, 1, tokens]: 0 where a token is, MASK_FILTER where padding is
    mask = g.op("Mul", g.op("Sub", g.const("onef", 1.0, np.float32), g.op(
        "Cast", g.op("Unsqueeze", g.op("Unsqueeze", "attention_mask", g.const("axes1", [1])),
                     g.const("axes2", [2])), to=TensorProto.FLOAT)),
        g.const("mask_filter", MASK_FILTER, np.float32))
    for i in range(config["num_hidden_layers"]):
        x = _layer(g, x, mask, i, heads=heads, eps=eps, width=width, eager=eager)
    g.nodes[-1].output[0] = "hidden"  # the last layer norm's output is the graph's
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
              for n in _INPUTS]
    output = helper.make_tensor_value_info("hidden", TensorProto.FLOAT,
                                           ["batch", "tokens", width])
    graph = helper.make_graph(g.nodes, "bert", inputs, [output],
                              list(g.initializers.values()))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="graphmem.onnx_build", producer_version=VERSION)
    model.ir_version = 8  # as torch's export: runs on onnxruntime >= 1.17
    onnx.checker.check_model(model)
    onnx.save(model, target)
    return heads, width
