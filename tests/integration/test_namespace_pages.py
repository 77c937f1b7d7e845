"""Paging through a namespace costs what the page holds, not what the namespace holds (schema
8, ADR 0033): at 1M memories the planner's own choice sorted every entry of the namespace for
each page (0.1-2.1 s a page; the first retrieval after open waited 2.5 s for the model check's
sample of 8)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from graphmem.store.base import WriteBatch
from graphmem.store.sqlite import rows as sqlite_rows
from graphmem.store.sqlite import schema as sqlite_schema
from tests.integration.test_row_files import NS, memories, open_store, unit


def steps(folder: Path, read: Callable[[sqlite3.Connection], None]) -> int:
    """SQLite virtual-machine steps (in hundreds) that ``read`` costs on the store's file."""
    conn = sqlite3.connect(folder / "graphmem.db")
    count = [0]

    def tick() -> int:
        count[0] += 1
        return 0

    conn.set_progress_handler(tick, 100)
    try:
        read(conn)
        return count[0]
    finally:
        conn.close()


def steps_for_a_page(folder: Path, after_pk: int, page: int = 8) -> int:
    def read(conn: sqlite3.Connection) -> None:
        assert len(sqlite_rows.memory_page(conn, NS, after_pk, page, True, None)[1]) == page

    return steps(folder, read)


def test_a_page_reads_its_rows_whatever_the_namespace_holds(tmp_path: Path) -> None:
    small, large = tmp_path / "small", tmp_path / "large"
    for folder, n in ((small, 200), (large, 4000)):
        store = open_store(folder, ann_min=0)
        try:
            store.apply(WriteBatch(NS, memories=memories(unit(n))))
            store.apply(WriteBatch("other", memories=memories(unit(50, seed=1), ns="other")))
        finally:
            store.close()
    # 20x the rows: the first page and one from the middle cost about the same
    assert steps_for_a_page(large, 0) <= 2 * steps_for_a_page(small, 0) + 2
    assert steps_for_a_page(large, 2000) <= 2 * steps_for_a_page(small, 100) + 2


def steps_to_find_a_hash(folder: Path) -> int:
    def read(conn: sqlite3.Connection) -> None:
        assert sqlite_rows.find_by_hash(conn, NS, ["h7", "h8", "h9"]) == {
            "h7": "m7", "h8": "m8", "h9": "m9"}

    return steps(folder, read)


def test_a_hash_lookup_stays_on_the_hash_index(tmp_path: Path) -> None:
    """The dedupe read of every write: ``ORDER BY pk`` drew the planner to the (namespace,
    pk) index, which reads the whole namespace."""
    small, large = tmp_path / "small", tmp_path / "large"
    for folder, n in ((small, 200), (large, 4000)):
        store = open_store(folder, ann_min=0)
        try:
            store.apply(WriteBatch(NS, memories=memories(unit(n))))
        finally:
            store.close()
    assert steps_to_find_a_hash(large) <= 2 * steps_to_find_a_hash(small) + 2


def test_schema_8_adds_the_index_to_a_store_of_schema_7(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        store.apply(WriteBatch(NS, memories=memories(unit(30))))
    finally:
        store.close()
    conn = sqlite3.connect(tmp_path / "graphmem.db", isolation_level=None)
    conn.execute("DROP INDEX ix_memories_ns_pk")
    conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    conn.close()
    store = open_store(tmp_path)
    try:
        assert sqlite_schema.current_version(store.conn) == sqlite_schema.SCHEMA_VERSION
        pages = list(store.iter_memories(NS, page=7))
        assert [m.id for page in pages for m in page] == [f"m{i}" for i in range(30)]
    finally:
        store.close()
