"""Writes embed before the write lock (ADR 0045): the model runs beside other writes'
database work, concurrent single writes share model calls, and what is stored is exactly what
embedding inside the lock stored."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from graphmem import GraphMemory
from graphmem.errors import ValidationError
from graphmem.testing import RandomEmbedder


class Watched(RandomEmbedder):
    """RandomEmbedder's vectors; records each call's texts and whether the calling thread
    held the facade's write lock, and can take its time (a model is not instant)."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.delay = delay
        self.calls: list[list[str]] = []
        self.under_lock: list[bool] = []
        self.lock: object | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        owned = getattr(self.lock, "_is_owned", None)
        self.under_lock.append(bool(owned and owned()))
        if self.delay:
            time.sleep(self.delay)
        return super().embed(texts)


def _open(tmp_path: Path, embedder: Watched) -> GraphMemory:
    mem = GraphMemory.open(tmp_path, embedder=embedder)
    embedder.lock = mem._write_lock
    return mem


def test_the_model_runs_outside_the_write_lock(tmp_path: Path) -> None:
    emb = Watched()
    with _open(tmp_path, emb) as mem:
        mem.store("the deploy failed", namespace="ops")
        mem.store_many(["the migration locked a table", "we rolled back"], namespace="ops")
    assert emb.calls == [["the deploy failed"],
                         ["the migration locked a table", "we rolled back"]]
    assert emb.under_lock == [False, False]


def test_concurrent_single_writes_share_model_calls(tmp_path: Path) -> None:
    emb = Watched(delay=0.05)
    texts = [f"note {i}: the cache was cold after the deploy" for i in range(8)]
    with _open(tmp_path, emb) as mem:
        start = threading.Barrier(len(texts))
        stored: dict[str, str] = {}

        def write(text: str) -> None:
            start.wait()
            stored[text] = mem.store(text, namespace="ops").id

        threads = [threading.Thread(target=write, args=(t,)) for t in texts]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = mem.core.store.get_memories("ops", list(stored.values()), embeddings=True)
    assert len(got) == 8
    assert len(emb.calls) < 8 and max(len(c) for c in emb.calls) > 1  # batched
    assert sorted(t for c in emb.calls for t in c) == sorted(texts)  # each embedded once
    for text, id_ in stored.items():  # the vector of its own content
        vector = got[id_].embedding
        assert vector is not None
        assert np.allclose(vector, RandomEmbedder().embed([text])[0])


def test_a_twin_of_a_stored_memory_is_not_embedded(tmp_path: Path) -> None:
    emb = Watched()
    with _open(tmp_path, emb) as mem:
        first = mem.store("the deploy failed", namespace="ops")
        again = mem.store("the deploy failed", namespace="ops")  # reinforces its twin
        mem.store_many(["disk full", "disk full", "the deploy failed", "retry later"],
                       namespace="ops")
    assert again.id == first.id
    assert emb.calls == [["the deploy failed"], ["disk full", "retry later"]]


def test_invalid_input_is_refused_before_the_model_runs(tmp_path: Path) -> None:
    emb = Watched()
    with _open(tmp_path, emb) as mem:
        with pytest.raises(ValidationError):
            mem.store_many(["fine", ""], namespace="ops")
        assert mem.core.store.namespaces() == []
    assert emb.calls == []


def test_an_update_embeds_its_new_content_outside_the_write_lock(tmp_path: Path) -> None:
    emb = Watched()
    with _open(tmp_path, emb) as mem:
        m = mem.store("the deploy failed", namespace="ops")
        mem.update(m.id, namespace="ops", content="the deploy failed on the canary")
        mem.update(m.id, namespace="ops", content="the deploy failed on the canary",
                   importance=0.9)  # the same content: nothing to embed
        mem.update(m.id, namespace="ops", importance=0.8)
        got = mem.core.store.get_memories("ops", [m.id], embeddings=True)[m.id]
    assert emb.calls == [["the deploy failed"], ["the deploy failed on the canary"]]
    assert emb.under_lock == [False, False]
    assert got.content == "the deploy failed on the canary" and got.importance == 0.8
    assert got.embedding is not None  # the vector of the new content, as embedded
    assert np.allclose(got.embedding, RandomEmbedder().embed([got.content])[0])


def test_an_update_whose_content_changed_meanwhile_embeds_what_it_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vector embedded ahead serves only the content it was embedded for."""
    emb = Watched()
    with _open(tmp_path, emb) as mem:
        m = mem.store("the deploy failed", namespace="ops")
        ahead = mem._editor.embed_ahead
        monkeypatch.setattr(mem._editor, "embed_ahead", lambda ns, id, content: {
            "some other text": ahead(ns, id, "some other text")["some other text"]})
        mem.update(m.id, namespace="ops", content="the deploy failed twice")
        got = mem.core.store.get_memories("ops", [m.id], embeddings=True)[m.id]
    assert got.embedding is not None
    assert np.allclose(got.embedding, RandomEmbedder().embed(["the deploy failed twice"])[0])
    assert emb.under_lock[-1] is True  # embedded again, under the lock


def test_a_bad_update_is_refused_in_its_own_order_and_embeds_nothing(tmp_path: Path) -> None:
    from graphmem.errors import NotFoundError

    emb = Watched()
    with _open(tmp_path, emb) as mem:
        m = mem.store("the deploy failed", namespace="ops")
        with pytest.raises(ValidationError):
            mem.update(m.id, namespace="ops", content="")
        with pytest.raises(NotFoundError):
            mem.update("no-such-id", namespace="ops", content="")  # not found comes first
        with pytest.raises(NotFoundError):
            mem.update("no-such-id", namespace="ops", content="a new text")
        kept = mem.get(m.id, namespace="ops")
    assert emb.calls == [["the deploy failed"]]
    assert kept.content == "the deploy failed"
