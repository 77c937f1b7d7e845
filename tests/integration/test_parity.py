"""Same behaviour on every adapter: a LoCoMo conversation stored on SQLite, FalkorDB and a real
Neo4j with the same vectors gives the same top 10 for its questions. The full-text engines
score differently (FTS5 BM25 over all namespaces, Lucene BM25, RediSearch TF-IDF); retrieval
ranks their candidates with its own BM25, so the seeds agree (ADR 0007)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.bench.locomo import CachedEmbedder, conversations, ingest
from graphmem.config import GraphMemConfig, RetrievalConfig, StoreConfig
from tests.conftest import Clock, _wipe_neo4j

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo"
QUESTIONS = 60


def _rankings(target: str, config: GraphMemConfig, embedder: Any) -> list[list[str]]:
    conv = conversations(LOCOMO, ["26"])[0]
    with GraphMemory.open(target, config=config, clock=Clock(), embedder=embedder) as mem:
        id_map = ingest(mem, conv, "conv", keep_ids=True)
        qs = [qa["question"] for qa in conv.questions if qa["evidence"]][:QUESTIONS]
        return [[id_map[h.id] for h in mem.search_index(q, namespace="conv", limit=10)]
                for q in qs]


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the project")
def test_every_adapter_ranks_a_conversation_alike(tmp_path: Path, falkordb_server: Any,
                                                  neo4j_uri: str, real_embedder: Any) -> None:
    """Real embeddings: a fake embedder's bag-of-words vectors tie by the dozen, and HNSW
    orders ties as it likes."""
    _wipe_neo4j(neo4j_uri)
    retrieval = RetrievalConfig()
    emb = CachedEmbedder(real_embedder)
    reference = _rankings(str(tmp_path / "data"), GraphMemConfig(retrieval=retrieval), emb)
    others = {
        "falkordb": _rankings(falkordb_server.url, GraphMemConfig(
            retrieval=retrieval, store=StoreConfig(falkordb_graph=f"t{uuid.uuid4().hex}")),
            emb),
        "neo4j": _rankings(neo4j_uri, GraphMemConfig(retrieval=retrieval), emb),
    }
    for name, ranked in others.items():
        same = sum(a == b for a, b in zip(reference, ranked, strict=True))
        overlap = [len(set(a) & set(b)) for a, b in zip(reference, ranked, strict=True)]
        # float near-ties may swap a neighbouring pair; nothing else may differ
        assert same >= QUESTIONS - 3, (name, same)
        assert min(overlap) >= 9, (name, overlap)
