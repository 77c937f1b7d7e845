"""One embedding model per namespace: a store opened with another model (or the int8 model
where the float one wrote) refuses that namespace's writes and retrievals before anything is
embedded or written; the same model, another backend of it, or an empty namespace pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem import GraphMemory
from graphmem.errors import EmbeddingMismatchError
from graphmem.testing import RandomEmbedder
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


def test_a_namespace_moves_to_another_model_by_an_export_without_vectors(
        tmp_path: Path) -> None:
    """The way out the error names: export without vectors, import with the new model; the
    memories get the new model's vectors and context vectors made from their session
    predecessors as a write makes them, and the new namespace passes the check."""
    import io
    import json

    from graphmem.engine.writes import mean_vector

    with GraphMemory.open(tmp_path / "old", embedder=FakeEmbedder()) as mem:
        mem.store_many([{"content": f"step {i} of the migration", "session_id": "s1",
                         "created_at": f"2026-01-01T10:0{i}:00+00:00"} for i in range(3)]
                       + [{"content": "a note without a session"}], namespace="ops")
        out = io.StringIO()
        mem.export_jsonl(out, namespace="ops", vectors=False)
        before = {m.id: m for page in mem.core.store.iter_memories("ops") for m in page}
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert lines and not any("embedding" in x or "context_embedding" in x for x in lines)

    new = RandomEmbedder()
    with GraphMemory.open(tmp_path / "new", embedder=new) as mem:
        assert mem.import_records(lines, namespace="ops", batch_size=2) == (
            4, sum(x["record"] == "edge" for x in lines))
        after = {m.id: m for page in mem.core.store.iter_memories("ops") for m in page}
        assert after.keys() == before.keys()
        order = [mid for mid, _ in mem.core.store.session_members("ops", "s1")]
        for i, mid in enumerate(order):
            m = after[mid]
            assert m.embedding is not None
            assert np.allclose(m.embedding, new.embed([m.content])[0], atol=1e-6)
            if i == 0:
                assert m.context_embedding is None
            else:
                prev = after[order[i - 1]].embedding
                assert prev is not None
                want = mean_vector(prev, m.embedding)
                assert m.context_embedding is not None
                assert np.allclose(m.context_embedding, want, atol=1e-6)
            assert m.context_keywords == before[mid].context_keywords
        assert mem.retrieve("step 2 of the migration", namespace="ops")
