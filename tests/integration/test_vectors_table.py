"""Schema 7 keeps the vectors in a table of their own (ADR 0029): the memories rows pack many
to a page, a store written before moves its vectors once at open with every pk kept (so its
full-text rows, mapped rows and saved codes stay valid), and no vector outlives its memory."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from graphmem.store.base import WriteBatch
from graphmem.store.sqlite import schema as sqlite_schema
from graphmem.store.sqlite.store import SQLiteStore
from tests.integration.test_row_files import NS, loaded_from_files, memories, open_store, unit


def back_to_v6(folder: Path) -> None:
    """Lay a closed store's database out as schema 6 wrote it: each memory's vectors in its
    row, no vectors table."""
    conn = sqlite3.connect(folder / "graphmem.db", isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("ALTER TABLE memories ADD COLUMN embedding BLOB")
    conn.execute("ALTER TABLE memories ADD COLUMN context_embedding BLOB")
    conn.execute("UPDATE memories SET embedding = (SELECT embedding FROM vectors v WHERE "
                 "v.pk = memories.pk), context_embedding = (SELECT context_embedding FROM "
                 "vectors v WHERE v.pk = memories.pk)")
    conn.execute("DROP TABLE vectors")
    conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    conn.execute("COMMIT")
    conn.execute("VACUUM")
    conn.close()


def pages(folder: Path, table: str) -> int:
    conn = sqlite3.connect(folder / "graphmem.db")
    try:
        return int(conn.execute("SELECT count(*) FROM dbstat WHERE name = ?",
                                (table,)).fetchone()[0])
    finally:
        conn.close()


def raw(x: np.ndarray | None) -> bytes | None:
    return None if x is None else x.tobytes()


def columns(store: SQLiteStore) -> list[str]:
    return [r[1] for r in store.conn.execute("PRAGMA table_info(memories)")]


def test_a_schema_6_store_moves_its_vectors_out_and_keeps_every_memory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pks, vectors, full-text rows and the mapped rows all survive; the rows shrink."""
    store = open_store(tmp_path, ann_min=500)
    store.apply(WriteBatch(NS, memories=memories(unit(900, seed=3))))
    store.apply(WriteBatch("small", memories=memories(unit(20, seed=4), ns="small")))
    store.apply(WriteBatch(NS, delete_memories=["m5", "m6"]))  # gaps in the pks
    before = store.get_memories(NS, [f"m{i}" for i in range(900)], embeddings=True)
    store.vector_topk(NS, unit(1)[0], 1)  # loaded: saved at close
    pks = dict(store.conn.execute("SELECT id, pk FROM memories WHERE namespace = ?", (NS,)))
    hits = store.keyword_topk(NS, ["w17"], 5)
    store.close()
    back_to_v6(tmp_path)
    v6_pages = pages(tmp_path, "memories")
    served = loaded_from_files(monkeypatch)
    store = open_store(tmp_path, ann_min=500)
    try:
        assert sqlite_schema.current_version(store.conn) == sqlite_schema.SCHEMA_VERSION
        assert "embedding" not in columns(store) and "context_embedding" not in columns(store)
        # the old table's pages went back to the disk
        assert store.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        store.vector_topk(NS, unit(1)[0], 1)  # loaded on first use
        assert served == [NS]  # the files' rows still match SQLite's, by pk and vector
        after = store.get_memories(NS, list(before), embeddings=True)
        for id_, m in before.items():
            got = after[id_]
            assert got.copy(embedding=None, context_embedding=None) == m.copy(
                embedding=None, context_embedding=None)
            assert raw(got.embedding) == raw(m.embedding) is not None
            assert raw(got.context_embedding) == raw(m.context_embedding)
        assert dict(store.conn.execute(
            "SELECT id, pk FROM memories WHERE namespace = ?", (NS,))) == pks
        assert store.vector_topk(NS, unit(900, seed=3)[17], 1)[0][0] == "m17"
        assert store.keyword_topk(NS, ["w17"], 5) == hits == [("m17", hits[0][1])]
        assert [m.id for m in store.get_memories("small", ["m3"], embeddings=True).values()
                ] == ["m3"]
    finally:
        store.close()
    assert pages(tmp_path, "memories") < v6_pages


def test_a_deleted_memory_takes_its_vectors_with_it(tmp_path: Path) -> None:
    """The vectors row goes in the delete's transaction: a pk SQLite hands out again (the
    highest one, deleted) must not come back with the deleted memory's vectors."""
    store = open_store(tmp_path, ann_min=0)
    try:
        ms = memories(unit(3, seed=5))
        store.apply(WriteBatch(NS, memories=ms))
        store.apply(WriteBatch(NS, delete_memories=["m2"]))
        assert store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
        bare = ms[2].copy(id="new", embedding=None, context_embedding=None, content_hash="n")
        store.apply(WriteBatch(NS, memories=[bare]))
        pk = store.conn.execute("SELECT pk FROM memories WHERE id = 'new'").fetchone()[0]
        assert pk == 3  # the deleted memory's pk, handed out again
        got = store.get_memories(NS, ["new"], embeddings=True)["new"]
        assert got.embedding is None and got.context_embedding is None
    finally:
        store.close()


def test_an_update_without_vectors_keeps_them_and_one_with_vectors_replaces_them(
        tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_min=0)
    try:
        m = memories(unit(1, seed=6))[0].copy(context_embedding=unit(1, seed=7)[0])
        store.apply(WriteBatch(NS, memories=[m]))
        store.apply(WriteBatch(NS, memories=[m.copy(content="edited", embedding=None,
                                                     context_embedding=None)]))
        got = store.get_memories(NS, [m.id], embeddings=True)[m.id]
        assert got.content == "edited"
        assert raw(got.embedding) == raw(m.embedding)
        assert raw(got.context_embedding) == raw(m.context_embedding) is not None
        new = unit(1, seed=8)[0]
        store.apply(WriteBatch(NS, memories=[m.copy(embedding=new, context_embedding=None)]))
        got = store.get_memories(NS, [m.id], embeddings=True)[m.id]
        assert raw(got.embedding) == raw(new) and got.context_embedding is None
    finally:
        store.close()
    store = open_store(tmp_path, ann_min=0)  # and the index read back at open agrees
    try:
        assert store.vector_topk(NS, new, 1)[0][0] == m.id
    finally:
        store.close()
