"""The warm-up after open (ADR 0030): it reads every b-tree a retrieval reads, never blocks
a write, stops when the store closes, and stays out of the way where it would not help."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from graphmem.models import RelationType
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite import warm_up as sqlite_warm_up
from graphmem.store.sqlite.store import SQLiteStore
from tests.integration.test_row_files import NS, memories, open_store, unit
from tests.integration.test_store_contract import edge

ALL = [name for name, _ in sqlite_warm_up.STATEMENTS]


def filled(folder: Path) -> None:
    store = open_store(folder, mapped_rows_min=0)
    store.apply(WriteBatch(NS, memories=memories(unit(50)),
                           edges=[edge(f"m{i}", f"m{i + 1}", RelationType.CAUSES, ns=NS)
                                  for i in range(49)]))
    store.close()


def reopen(folder: Path, min_bytes: int = 0) -> SQLiteStore:
    store = SQLiteStore(folder, dim=32)
    store._warm_up.min_bytes = min_bytes
    store.open()
    return store


def test_the_warm_up_reads_every_table_a_retrieval_reads(tmp_path: Path) -> None:
    filled(tmp_path)
    store = reopen(tmp_path)
    try:
        assert store.wait_for_warm_up(timeout=60) is not None
        assert store._warm_up.done == ALL  # every statement ran against this schema
        store.apply(WriteBatch(NS, delete_memories=["m3"]))  # nothing it holds stops writes
    finally:
        store.close()


def test_closing_the_store_stops_a_running_warm_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan that would never end (here a recursive count) is interrupted by close."""
    filled(tmp_path)
    started = threading.Event()
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) " \
              "SELECT count(*) FROM c"
    monkeypatch.setattr(sqlite_warm_up, "STATEMENTS", (
        ("memories", "SELECT count(*) FROM memories"), ("endless", endless)))
    real_connect = sqlite_warm_up.sqlite3.connect

    def progress() -> int:
        started.set()
        return 0  # go on

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_progress_handler(progress, 10_000)
        return conn

    monkeypatch.setattr(sqlite_warm_up.sqlite3, "connect", connect)
    store = reopen(tmp_path)
    assert started.wait(30)
    thread = store._warm_up._thread
    store.close()  # the test's timeout fails it if close waits for the endless scan
    assert thread is not None and not thread.is_alive()
    assert store._warm_up.done == ["memories"] and store._warm_up.seconds is None


@pytest.mark.parametrize(("memory", "min_bytes"), [(1 << 10, 0), (None, 1 << 40)])
def test_no_warm_up_when_the_file_is_too_large_or_too_small(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory: int | None,
        min_bytes: int) -> None:
    filled(tmp_path)
    monkeypatch.setattr(sqlite_warm_up, "physical_memory", lambda: memory)
    store = reopen(tmp_path, min_bytes=min_bytes)
    try:
        assert store._warm_up._thread is None
        assert store.wait_for_warm_up() is None and store._warm_up.done == []
    finally:
        store.close()
