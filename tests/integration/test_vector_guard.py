"""One embedding model per namespace: a store opened with another model (or the int8 model
where the float one wrote) refuses that namespace's writes and retrievals before anything is
embedded or written; the same model, another backend of it, or an empty namespace pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem import GraphMemory
from graphmem.bench.scale import RandomEmbedder
from graphmem.errors import EmbeddingMismatchError
from tests.conftest import FakeEmbedder


def _written(folder: Path) -> str:
    with GraphMemory.open(folder, embedder=FakeEmbedder()) as mem:
        a = mem.store("the deploy failed after the migration", namespace="ops")
        mem.store("we split migrations into batches", namespace="ops")
        return a.id


def test_another_model_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    first = _written(tmp_path)
    with GraphMemory.open(tmp_path, embedder=RandomEmbedder()) as mem:
        before = mem.stats(namespace="ops")["memories"]
        with pytest.raises(EmbeddingMismatchError, match="another embedding model"):
            mem.store("a third note", namespace="ops")
        with pytest.raises(EmbeddingMismatchError):
            mem.store_many([{"content": "a fourth"}], namespace="ops")
        with pytest.raises(EmbeddingMismatchError):
            mem.retrieve("deploy", namespace="ops")
        with pytest.raises(EmbeddingMismatchError):
            mem.update(first, namespace="ops", content="the deploy failed again")
        assert mem.stats(namespace="ops")["memories"] == before
        assert mem.get(first, namespace="ops").content == "the deploy failed after the migration"
        # another namespace, empty: this model's vectors are its first
        mem.store("a note elsewhere", namespace="dev")
        assert mem.retrieve("note", namespace="dev")


def test_the_same_model_passes_and_is_checked_once(tmp_path: Path) -> None:
    _written(tmp_path)
    embedder = FakeEmbedder()
    with GraphMemory.open(tmp_path, embedder=embedder) as mem:
        mem.store("a third note", namespace="ops")
        calls = embedder.calls
        mem.retrieve("deploy", namespace="ops")
        mem.store("a fourth note", namespace="ops")
        assert embedder.calls == calls + 2  # the query and the memory: no second check
        assert mem.core.vectors.checked == {"ops"}


@pytest.mark.model
def test_the_int8_model_is_refused_where_the_float_one_wrote(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_embedder) -> None:
    from graphmem.config import EmbeddingConfig
    from graphmem.engine.embedding import make_embedder

    with GraphMemory.open(tmp_path) as mem:  # the default: MiniLM, float, ONNX Runtime
        mem.store("The deploy failed because the migration locked the users table",
                  namespace="ops")
    with GraphMemory.open(tmp_path, embedder=real_embedder) as mem:  # torch: the same model
        assert mem.retrieve("why did the deploy fail?", namespace="ops")
    quantized = make_embedder(EmbeddingConfig(quantize=True))
    with GraphMemory.open(tmp_path, embedder=quantized) as mem, pytest.raises(
            EmbeddingMismatchError, match=r"cosine 0\.9"):
        mem.retrieve("why did the deploy fail?", namespace="ops")


def test_the_check_can_be_turned_off_for_a_store_knowingly_mixed(tmp_path: Path) -> None:
    from graphmem.config import EmbeddingConfig, GraphMemConfig

    _written(tmp_path)
    cfg = GraphMemConfig(embedding=EmbeddingConfig(verify_store=False))
    with GraphMemory.open(tmp_path, embedder=RandomEmbedder(), config=cfg) as mem:
        mem.store("a third note", namespace="ops")  # a benchmark's random-vector store
        assert mem.stats(namespace="ops")["memories"] == 3
