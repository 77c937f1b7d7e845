"""Importing records (``graphmem.engine.records``): an edge whose end is neither in the import
nor stored stops the import at that batch, naming the first missing end, with nothing of the
batch written."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem import GraphMemory
from graphmem.errors import NotFoundError
from tests.conftest import FakeEmbedder

NS = "rec"


def test_an_edge_to_a_missing_memory_stops_the_import(tmp_path: Path) -> None:
    with GraphMemory.open(tmp_path / "a", embedder=FakeEmbedder()) as mem:
        a = mem.store("the deploy failed", namespace=NS)
        b = mem.store("the disk was full", namespace=NS)
        mem.relate(a.id, b.id, "CAUSES", namespace=NS)
        records = list(mem.export_records(namespace=NS))
    edge = next(r for r in records if r["record"] == "edge")
    first = {"record": "memory", "id": "kept", "content": "a note",
             "created_at": "2026-01-01T00:00:00+00:00"}
    lone = {**edge, "source_id": "kept", "target_id": "gone-1"}
    later = {**edge, "source_id": "gone-2", "target_id": "kept"}
    with GraphMemory.open(tmp_path / "b", embedder=FakeEmbedder()) as other:
        with pytest.raises(NotFoundError, match="'gone-1'"):
            other.import_records([first, lone, later], namespace=NS, batch_size=10)
        assert other.list_page(namespace=NS, status=None).items == []
        other.store("an existing note", namespace=NS, id="gone-1")
        with pytest.raises(NotFoundError, match="'gone-2'"):
            other.import_records([first, lone, later], namespace=NS, batch_size=10)
        assert [m.id for m in other.list_page(namespace=NS, status=None).items] == ["gone-1"]
