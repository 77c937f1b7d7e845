"""Batches of memories embed in bfloat16 on a CPU with AMX, close to the float vectors
(ADR 0049); single memories and queries keep their ONNX models, and torch stays out of a
process that embeds nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphmem import GraphMemory
from graphmem.config import EmbeddingConfig, GraphMemConfig, TuningConfig
from graphmem.engine import bf16_embedding
from graphmem.engine.onnx_embedding import OnnxEmbedder
from graphmem.errors import EmbeddingMismatchError

pytestmark = [pytest.mark.model,
              pytest.mark.skipif(not bf16_embedding.supported(), reason="no AMX on this CPU")]

TEXTS = ["the deploy failed", "Caroline: I went to the LGBTQ support group yesterday!",
         "", "x", "a much longer turn " * 200,  # truncated at the model's 256 tokens
         "Billing runs on PostgreSQL 15; migrations are applied by Alembic",
         "When did Melanie paint a sunrise?", "we split the migration into batches",
         "the cache was cold after the restart", "Melanie ran a charity race for mental health"]


def _float(texts: list[str]) -> np.ndarray:
    return OnnxEmbedder(tuning=TuningConfig(bf16_batches=False)).embed(texts)


def test_a_batch_runs_bfloat16_and_stays_close_to_the_float_vectors() -> None:
    embedder = OnnxEmbedder(EmbeddingConfig())
    got, want = embedder.embed(TEXTS), _float(TEXTS)
    assert embedder._bf16 is not None and embedder._bf16.loaded
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    assert float(cosines.min()) > 0.9998  # measured: >= 0.99991 over 2,000 LoCoMo turns
    assert float(np.abs(got - want).max()) > 1e-4  # and not the float model's own
    # the order of the batch is the caller's, whatever order the model ran it in
    backwards = embedder.embed(TEXTS[::-1])[::-1]
    assert float((backwards * got).sum(axis=1).min()) > 0.9999


def test_small_batches_queries_and_the_int8_model_keep_onnx() -> None:
    embedder = OnnxEmbedder(EmbeddingConfig())
    small = TEXTS[:7]  # below bf16_min_batch (8): the float model
    assert np.allclose(embedder.embed(small), _float(small), atol=1e-6)
    embedder.embed_queries(TEXTS)  # queries: the int8 query model, whatever their number
    embedder.embed([TEXTS[0]])
    assert embedder._bf16 is not None and not embedder._bf16.loaded
    assert OnnxEmbedder(EmbeddingConfig(quantize=True))._ready() is not None
    for config, tuning in ((EmbeddingConfig(), TuningConfig(bf16_batches=False)),
                           (EmbeddingConfig(quantize=True), TuningConfig())):
        other = OnnxEmbedder(config, tuning)
        other.embed(TEXTS)
        assert other._bf16 is None
    raised = OnnxEmbedder(EmbeddingConfig())
    raised.bf16_min_batch = 20
    assert np.allclose(raised.embed(TEXTS), _float(TEXTS), atol=1e-6)


def test_torch_is_imported_by_the_first_batch_only(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from graphmem.config import EmbeddingConfig\n"
        "from graphmem.engine.embedding import make_embedder\n"
        "e = make_embedder(EmbeddingConfig())\n"
        f"e.embed({TEXTS[:1]!r}); e.embed_queries({TEXTS!r})\n"
        "before = 'torch' in sys.modules\n"
        f"e.embed({TEXTS!r})\n"
        "print(json.dumps([before, 'torch' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == [False, True]
    assert "Warning" not in out.stderr and "Loading" not in out.stderr, out.stderr


def test_a_store_written_in_batches_passes_the_model_check(tmp_path: Path) -> None:
    """The store's check (ADR 0025) embeds one stored memory alone, by the float model, and
    wants cosine >= 0.999 to its stored vector: bfloat16 batches are the same model."""
    from graphmem.engine.embedding import make_embedder

    embedder = OnnxEmbedder(EmbeddingConfig())  # the default: batches in bfloat16
    with GraphMemory.open(tmp_path, embedder=embedder) as mem:
        mem.store_many([{"content": t} for t in TEXTS if t.strip()], namespace="ops")
        assert embedder._bf16 is not None and embedder._bf16.loaded
    float_only = GraphMemConfig(tuning=TuningConfig(bf16_batches=False))
    with GraphMemory.open(tmp_path, config=float_only) as mem:
        hits = mem.retrieve("why did the deploy fail?", namespace="ops")
        assert hits and hits[0].memory.content == "the deploy failed"
        mem.store("the rollback worked", namespace="ops")
    # the check still tells another model apart: the int8 one (cosine ~0.99)
    quantized = make_embedder(EmbeddingConfig(quantize=True))
    with GraphMemory.open(tmp_path, embedder=quantized) as mem, pytest.raises(
            EmbeddingMismatchError, match=r"cosine 0\.9"):
        mem.retrieve("why did the deploy fail?", namespace="ops")


LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo"


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the project")
def test_a_conversation_ranks_as_well_with_bfloat16_memories() -> None:
    """LoCoMo's conv-26 stored both ways, queries by the default int8 query model. All five
    conversations (ADR 0049): R@10 0.7707 against 0.7711; one is noisier, hence 0.02."""
    from graphmem.bench.locomo import run_locomo

    got = {}
    for bf16 in (True, False):
        embedder = OnnxEmbedder(tuning=TuningConfig(bf16_batches=bf16))
        r = run_locomo(LOCOMO, convs=["26"], embedder=embedder, progress=lambda _: None)
        got[bf16] = r["systems"]["graphmem"]["overall"]
        assert (embedder._bf16 is not None and embedder._bf16.loaded) is bf16
    assert got[False]["recall@10"] > 0.6
    assert got[True]["recall@10"] >= got[False]["recall@10"] - 0.02, got
    assert got[True]["mrr"] >= got[False]["mrr"] - 0.02, got


def test_a_settled_process_keeps_torch_out_of_the_collectors_passes() -> None:
    """A server freezes its start-up objects (``long_lived.settle``); torch's import on the
    first batch makes hundreds of thousands more, frozen with them."""
    import gc

    import graphmem.engine.bf16_embedding as module

    embedder = OnnxEmbedder(EmbeddingConfig())
    embedder._ready()
    assert embedder._bf16 is not None
    fresh = module.Bf16Transformer(embedder._bf16.model_folder, threads=2)
    embedder._bf16 = fresh
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        embedder.embed(TEXTS)
        assert fresh.loaded
        assert gc.get_freeze_count() > before  # the model's objects joined the frozen ones
    finally:
        gc.unfreeze()


def test_a_transformer_that_will_not_load_leaves_batches_on_the_float_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(bf16_embedding, "transformer_folder", lambda _: tmp_path / "gone")
    embedder = OnnxEmbedder(EmbeddingConfig())
    got = embedder.embed(TEXTS)  # the write goes on
    assert "batches stay on the float model" in caplog.text
    assert embedder._bf16 is None  # and is not tried again
    assert np.allclose(got, _float(TEXTS), atol=1e-6)


def test_a_batch_that_fails_in_bfloat16_is_embedded_by_the_float_model(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    embedder = OnnxEmbedder(EmbeddingConfig())
    embedder.embed(TEXTS)  # loaded and used once
    assert embedder._bf16 is not None and embedder._bf16.loaded

    def broken(_: object) -> np.ndarray:
        raise RuntimeError("oneDNN: could not create a primitive")

    monkeypatch.setattr(embedder._bf16, "hidden", broken)
    got = embedder.embed(TEXTS)  # the write goes on
    assert "a bfloat16 batch failed (RuntimeError)" in caplog.text
    assert "the deploy failed" not in caplog.text  # no memory contents in the log
    assert embedder._bf16 is None  # and is not tried again
    assert np.allclose(got, _float(TEXTS), atol=1e-6)
