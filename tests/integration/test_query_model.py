"""Queries are embedded by the int8 query model, memories by the float one (ADR 0046)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from graphmem import GraphMemory
from graphmem.config import EmbeddingConfig, TuningConfig
from graphmem.engine import onnx_export
from graphmem.engine.onnx_embedding import OnnxEmbedder
from graphmem.engine.query_batcher import QueryBatcher

TEXTS = ["the deploy failed", "Caroline: I went to the LGBTQ support group yesterday!",
         "x", "When did Melanie paint a sunrise?",
         "Billing runs on PostgreSQL 15; migrations are applied by Alembic"]


@pytest.fixture(scope="module")
def float_files() -> tuple[Path, Path]:
    """The plain and fused files of the shared model cache (exported once per machine)."""
    embedder = OnnxEmbedder(EmbeddingConfig())
    embedder.embed(["x"])
    assert embedder.model_file is not None
    fused = embedder.model_file
    return fused.with_name(fused.name.replace("-fused", "")), fused


@pytest.mark.model
def test_queries_take_the_int8_file_and_memories_keep_the_float_vectors(
        float_files: tuple[Path, Path]) -> None:
    import onnx

    default = OnnxEmbedder(tuning=TuningConfig(bf16_batches=False))  # float batches (ADR 0049 off)
    memories, queries = default.embed(TEXTS), default.embed_queries(TEXTS)
    assert default.model_file == float_files[1]
    assert default.query_model_file is not None
    assert default.query_model_file.name.endswith("-fused-int8-7bit.onnx")
    ops = {n.op_type for n in onnx.load(str(default.query_model_file)).graph.node}
    assert "DynamicQuantizeMatMul" in ops or "MatMulInteger" in ops
    float_only = OnnxEmbedder(tuning=TuningConfig(quantize_queries=False, bf16_batches=False))
    assert np.allclose(float_only.embed(TEXTS), memories, atol=1e-6)  # memories: float
    assert np.allclose(float_only.embed_queries(TEXTS), memories, atol=1e-6)
    cosines = (queries * memories).sum(axis=1)
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    assert float(cosines.min()) > 0.98  # close to the float vectors ...
    assert float(cosines.min()) < 0.9999  # ... and not them: the int8 file ran
    # a store quantised as a whole embeds queries as its memories, with the int8 file
    whole = OnnxEmbedder(EmbeddingConfig(quantize=True))
    assert np.allclose(whole.embed_queries(TEXTS), whole.embed(TEXTS), atol=1e-6)
    assert whole.query_model_file == whole.model_file


@pytest.mark.model
def test_the_query_model_runs_on_its_own_thread_count(float_files: tuple[Path, Path]) -> None:
    """ADR 0056: the int8 query session on ``OnnxEmbedder.query_threads`` (one), the memories'
    float session on two (where there are two cores); the vectors are the same either way."""
    from graphmem.engine.onnx_embedding import _threads

    one = OnnxEmbedder(tuning=TuningConfig(bf16_batches=False))
    vectors = one.embed_queries(TEXTS)
    assert one._query_session is not one._session
    assert one._query_session.get_session_options().intra_op_num_threads == 1
    assert one._session.get_session_options().intra_op_num_threads == _threads()
    two = OnnxEmbedder(tuning=TuningConfig(bf16_batches=False))
    two.query_threads = 2
    assert np.allclose(two.embed_queries(TEXTS), vectors, atol=1e-5)
    assert two._query_session.get_session_options().intra_op_num_threads == 2


@pytest.mark.model
def test_a_query_model_that_strays_is_not_kept(
        tmp_path: Path, float_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    for f in float_files:  # a cache holding the float files only: the query model is made
        shutil.copyfile(f, tmp_path / f.name)
    monkeypatch.setattr(onnx_export, "QUERY_GAP", 1e-7)  # int8 strays further than this
    embedder = OnnxEmbedder(EmbeddingConfig(cache_dir=str(tmp_path)),
                            TuningConfig(bf16_batches=False))
    memories = embedder.embed(TEXTS)
    assert "the int8 query model strays from" in caplog.text
    assert embedder.query_model_file is not None and embedder.model_file is not None
    assert embedder.query_model_file.parent == tmp_path
    assert embedder.query_model_file.read_bytes() == embedder.model_file.read_bytes()
    assert np.allclose(embedder.embed_queries(TEXTS), memories, atol=1e-6)


class _TwoModels:
    """Memories and queries embedded by different (fake) models, calls counted."""

    dim = 384

    def __init__(self) -> None:
        self.calls = {"embed": 0, "embed_queries": 0}

    def _vectors(self, texts: Sequence[str], salt: int) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, (len(t) + salt) % self.dim] = 1.0
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls["embed"] += len(texts)
        return self._vectors(texts, 0)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.calls["embed_queries"] += len(texts)
        return self._vectors(texts, 0)


def test_retrieval_embeds_with_the_query_model_and_writes_with_the_memories_one(
        tmp_path: Path) -> None:
    embedder = _TwoModels()
    with GraphMemory.open(tmp_path / "data", embedder=embedder) as mem:
        mem.store("the deploy failed at noon", namespace="ops")
        mem.store_many([{"content": "billing moved to postgres"},
                        {"content": "the cache was cold"}], namespace="ops")
        stored = dict(embedder.calls)
        assert stored["embed_queries"] == 0 and stored["embed"] >= 3
        mem.retrieve("why did the deploy fail", namespace="ops")
        mem.retrieve("what moved to postgres", namespace="ops")
        assert embedder.calls["embed_queries"] == 2
        assert embedder.calls["embed"] == stored["embed"]


def test_the_batcher_embeds_queries_only_when_asked() -> None:
    embedder = _TwoModels()
    QueryBatcher(embedder).embed_one("a memory")
    assert embedder.calls == {"embed": 1, "embed_queries": 0}
    QueryBatcher(embedder, queries=True).embed_one("a query")
    assert embedder.calls == {"embed": 1, "embed_queries": 1}


LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo"


@pytest.mark.model
@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the project")
def test_a_conversation_ranks_as_well_with_int8_queries() -> None:
    """LoCoMo's conv-26 (199 questions) through the whole retrieval, queries embedded both
    ways: the int8 query model keeps recall and MRR (ADR 0046 measured all five: R@10 -0.004,
    MRR +0.005; one conversation is noisier, hence 0.02)."""
    from graphmem.bench.locomo import run_locomo

    got = {}
    for quantize_queries in (True, False):  # float memories, so only the queries differ
        embedder = OnnxEmbedder(tuning=TuningConfig(quantize_queries=quantize_queries,
                                                    bf16_batches=False))
        r = run_locomo(LOCOMO, convs=["26"], embedder=embedder, progress=lambda _: None)
        got[quantize_queries] = r["systems"]["graphmem"]["overall"]
    assert got[False]["recall@10"] > 0.6  # the float baseline is the real pipeline's
    assert got[True]["recall@10"] >= got[False]["recall@10"] - 0.02, got
    assert got[True]["mrr"] >= got[False]["mrr"] - 0.02, got
