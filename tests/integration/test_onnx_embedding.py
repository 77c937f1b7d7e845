"""The ONNX Runtime backend gives the torch model's vectors, exports once, atomically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem.config import EmbeddingConfig, TuningConfig
from graphmem.engine.embedding import (
    SentenceTransformerEmbedder,
    default_model_path,
    make_embedder,
)
from graphmem.engine.onnx_embedding import OnnxEmbedder

TEXTS = ["the deploy failed", "Caroline: I went to the LGBTQ support group yesterday!",
         "", "x", "a much longer turn " * 200,  # truncated at the model's 256 tokens
         "Billing runs on PostgreSQL 15; migrations are applied by Alembic"]


def test_the_backend_is_chosen_by_config() -> None:
    assert type(make_embedder(EmbeddingConfig())) is OnnxEmbedder
    assert type(make_embedder(EmbeddingConfig(backend="torch"))) is SentenceTransformerEmbedder


@pytest.mark.model
def test_onnx_vectors_equal_the_torch_ones(tmp_path: Path) -> None:
    onnx = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)),
                        TuningConfig(bf16_batches=False))  # the float model
    onnx.batch_size = 4
    torch = SentenceTransformerEmbedder(EmbeddingConfig(backend="torch"))
    a, b = onnx.embed(TEXTS), torch.embed(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert float((a * b).sum(axis=1).min()) > 0.9999
    # one text alone embeds as it does in a batch (padding does not leak into the mean)
    assert float(onnx.embed([TEXTS[1]])[0] @ a[1]) > 0.99999


@pytest.mark.model
def test_the_export_happens_once_and_leaves_no_partial_file(tmp_path: Path) -> None:
    OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path))).embed(["first"])
    # plain, fused, the query model (ADR 0046)
    models = sorted(tmp_path.rglob("*"), key=lambda p: len(p.name))
    assert [p.name for p in models] == [models[0].name,
                                        models[0].name.replace(".onnx", "-fused.onnx"),
                                        models[0].name.replace(".onnx", "-fused-int8-7bit.onnx")]
    stamps = [p.stat().st_mtime_ns for p in models]
    OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path))).embed(["second"])
    assert sorted(tmp_path.rglob("*"), key=lambda p: len(p.name)) == models
    assert [p.stat().st_mtime_ns for p in models] == stamps


@pytest.mark.model
def test_the_float_model_runs_fused_with_the_plain_files_vectors(tmp_path: Path) -> None:
    import onnx

    fused = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)))
    fused.batch_size = 4
    got = fused.embed(TEXTS)
    assert fused.model_file is not None and fused.model_file.name.endswith("-fused.onnx")
    ops = {n.op_type for n in onnx.load(str(fused.model_file)).graph.node}
    assert {"Attention", "SkipLayerNormalization", "EmbedLayerNormalization"} <= ops
    plain = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)))
    plain.batch_size = 4
    plain._ready()
    plain._session = _session(fused.model_file.with_name(
        fused.model_file.name.replace("-fused", "")))
    want = plain.embed(TEXTS)
    assert float((got * want).sum(axis=1).min()) > 0.99999


def _session(path: Path) -> object:
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


@pytest.mark.model
def test_a_fused_file_that_gives_other_vectors_is_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    from onnxruntime.transformers import optimizer

    real = optimizer.optimize_model

    def wrong(*args: object, **kwargs: object) -> object:  # a fused graph, one weight off
        from onnx import numpy_helper

        graph = real(*args, **kwargs)
        weights = next(w for w in graph.model.graph.initializer if len(w.dims) == 2
                       and w.dims[0] == w.dims[1])
        weights.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(weights),
                                                 weights.name))
        return graph

    monkeypatch.setattr(optimizer, "optimize_model", wrong)
    embedder = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)),
                            TuningConfig(bf16_batches=False))
    got = embedder.embed(TEXTS)
    assert embedder.model_file is not None
    plain = embedder.model_file.with_name(embedder.model_file.name.replace("-fused", ""))
    assert embedder.model_file.read_bytes() == plain.read_bytes()  # the plain file serves
    assert "the fused embedding model strays from" in caplog.text
    torch = SentenceTransformerEmbedder(EmbeddingConfig(backend="torch")).embed(TEXTS)
    assert float((got * torch).sum(axis=1).min()) > 0.9999
    # a model the optimizer cannot take at all: the plain file too, and a warning
    for p in tmp_path.rglob("*-fused.onnx"):
        p.unlink()

    def broken(*args: object, **kwargs: object) -> object:
        raise ValueError("no such architecture")

    monkeypatch.setattr(optimizer, "optimize_model", broken)
    caplog.clear()
    OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path))).embed(["x"])
    assert "the fused embedding model was not made (ValueError)" in caplog.text
    assert sorted(p.name for p in tmp_path.rglob("*")) == [
        plain.name.replace(".onnx", "-fused-int8-7bit.onnx"),
        plain.name.replace(".onnx", "-fused.onnx"), plain.name]


@pytest.mark.model
def test_threads_may_embed_at_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    onnx = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)), TuningConfig(bf16_batches=False))
    want = onnx.embed(TEXTS)
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda i: onnx.embed([TEXTS[i % len(TEXTS)]])[0], range(64)))
    for i, v in enumerate(got):
        assert float(v @ want[i % len(TEXTS)]) > 0.99999


@pytest.mark.model
def test_the_int8_model_is_made_once_beside_the_float_one_and_stays_close(
        tmp_path: Path) -> None:
    import logging

    root = logging.getLogger()
    before = root.level
    exact = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)),
                         TuningConfig(quantize_queries=False)).embed(TEXTS)
    quant = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path), quantize=True))
    got = quant.embed(TEXTS)
    names = sorted(p.name for p in tmp_path.rglob("*"))
    # made from the plain file (as before ADR 0040), beside it and the fused one
    assert len(names) == 3 and names[0].replace("-fused", "-int8") == names[1]
    assert quant.model_file is not None and quant.model_file.name == names[1]
    assert root.level == before  # the quantiser's advice was silenced, not the caller's logs
    cos = (exact * got).sum(axis=1)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert float(cos.min()) > 0.95 and float(cos.max()) < 0.99999  # int8, not the float model
    # the same int8 model on the next start: identical vectors, nothing rewritten
    model = next(p for p in tmp_path.rglob("*-int8.onnx"))
    stamp = model.stat().st_mtime_ns
    again = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path), quantize=True)).embed(TEXTS)
    assert np.array_equal(again, got) and model.stat().st_mtime_ns == stamp


@pytest.mark.model
def test_tokens_are_the_model_tokenizers_own() -> None:
    from graphmem.engine.model_folder import read

    spec = read(default_model_path())
    assert spec is not None
    hf = SentenceTransformerEmbedder(EmbeddingConfig(backend="torch")).model
    texts = [*TEXTS, "  Émile\u2019s café — naïve 東京 🚀 résumé\tTAB\nline  ",
             "don't STOP!!! 3.14", "word " * 300]
    for text in texts:
        want = hf.tokenize([text])["input_ids"][0].tolist()
        assert spec.tokenizer.encode(text.strip()).ids == want, text


@pytest.mark.model
def test_a_process_with_an_exported_model_embeds_without_torch(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    # exports once (plain and fused); the child makes the query model (ADR 0046) itself
    float_only = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)),
                              TuningConfig(quantize_queries=False, bf16_batches=False))
    want = float_only.embed(TEXTS)
    assert not list(tmp_path.rglob("*-int8-7bit.onnx"))
    code = (
        "import json, sys\n"
        "from graphmem.config import EmbeddingConfig, TuningConfig\n"
        "from graphmem.engine.embedding import make_embedder\n"
        f"e = make_embedder(EmbeddingConfig(cache_dir={str(tmp_path)!r}), "
        "TuningConfig(bf16_batches=False))\n"
        f"v, q = e.embed({TEXTS!r}), e.embed_queries({TEXTS!r})\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'sentence_transformers')"
        " if m in sys.modules)\n"
        "print(json.dumps({'heavy': heavy, 'v': v.tolist(), 'q': q.tolist()}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    got = json.loads(out.stdout)
    assert got["heavy"] == []
    assert float((np.array(got["v"], dtype=np.float32) * want).sum(axis=1).min()) > 0.99999
    assert list(tmp_path.rglob("*-int8-7bit.onnx"))
    assert float((np.array(got["q"], dtype=np.float32) * want).sum(axis=1).min()) > 0.95
    assert "tokenizers" not in out.stderr and "Warning" not in out.stderr, out.stderr
