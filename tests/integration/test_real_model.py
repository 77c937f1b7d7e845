"""Retrieval with the real all-MiniLM-L6-v2 model, loaded offline from the package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem import GraphMemory

pytestmark = pytest.mark.model


def test_embedder_is_offline_normalised_and_batched(real_embedder) -> None:  # type: ignore[no-untyped-def]
    vecs = real_embedder.embed(["the deploy failed", "the release broke", "I like tea"])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    from graphmem.engine.embedding import SentenceTransformerEmbedder

    assert SentenceTransformerEmbedder().model is real_embedder.model  # loaded once


def test_store_relate_retrieve_and_reopen(tmp_path: Path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    with GraphMemory.open(tmp_path, embedder=real_embedder) as m:
        a = m.store("The deploy failed because the database migration locked the users table",
                    importance=0.7, namespace="ops")
        b = m.store("We split migrations into small batches to avoid long table locks",
                    importance=0.6, namespace="ops")
        m.store("Alice prefers tea over coffee in the morning", importance=0.4,
                namespace="ops")
        m.relate(a.id, b.id, "CAUSES", namespace="ops")
        r = m.retrieve("why did the deploy fail?", namespace="ops", limit=3)
        assert r[0].memory.id == a.id
        assert b.id in [x.memory.id for x in r]
    with GraphMemory.open(tmp_path, embedder=real_embedder) as m:
        r = m.retrieve("batch migrations", namespace="ops", limit=1)
        assert r[0].memory.id == b.id


def test_paraphrase_found_without_shared_words(tmp_path: Path, real_embedder) -> None:  # type: ignore[no-untyped-def]
    with GraphMemory.open(tmp_path, embedder=real_embedder) as m:
        target = m.store("My flight to Lisbon got cancelled", namespace="u")
        for text in ("The printer is out of toner", "We adopted a kitten named Miso",
                     "Quarterly revenue grew 4 percent"):
            m.store(text, namespace="u")
        r = m.retrieve("airline trip called off", namespace="u", limit=1)
        assert r[0].memory.id == target.id and r[0].terms["keyword"] == 0
