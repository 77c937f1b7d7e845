"""The ONNX Runtime backend gives the torch model's vectors, exports once, atomically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem.config import EmbeddingConfig
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
    onnx = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path), batch_size=4))
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
    [model] = list(tmp_path.rglob("*.onnx"))
    stamp = model.stat().st_mtime_ns
    OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path))).embed(["second"])
    assert [p.name for p in tmp_path.rglob("*")] == [model.name]
    assert model.stat().st_mtime_ns == stamp


@pytest.mark.model
def test_threads_may_embed_at_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    onnx = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)))
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
    exact = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path))).embed(TEXTS)
    quant = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path), quantize=True))
    got = quant.embed(TEXTS)
    names = sorted(p.name for p in tmp_path.rglob("*"))
    assert len(names) == 2 and names[0] == names[1].replace(".onnx", "-int8.onnx")
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

    want = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path))).embed(TEXTS)  # exports once
    code = (
        "import json, sys\n"
        "from graphmem.config import EmbeddingConfig\n"
        "from graphmem.engine.embedding import make_embedder\n"
        f"v = make_embedder(EmbeddingConfig(cache_dir={str(tmp_path)!r})).embed({TEXTS!r})\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'sentence_transformers')"
        " if m in sys.modules)\n"
        "print(json.dumps({'heavy': heavy, 'v': v.tolist()}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    got = json.loads(out.stdout)
    assert got["heavy"] == []
    assert float((np.array(got["v"], dtype=np.float32) * want).sum(axis=1).min()) > 0.99999
    assert "tokenizers" not in out.stderr and "Warning" not in out.stderr, out.stderr
