"""WAL checkpoints beside the writes (ADR 0044): a commit does not copy the log into the
database (SQLite's automatic checkpoint at 1,000 pages is moved out of the way), a thread of
the store's does, and nothing written is lost on the way."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from graphmem.models import Memory
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.checkpoint import BACKSTOP_PAGES, Checkpointer
from graphmem.store.sqlite.store import DB_FILE, SQLiteStore

DIM = 384


def _batch(start: int, n: int) -> WriteBatch:
    rng = np.random.default_rng(start)
    batch = WriteBatch("ops")
    for i in range(start, start + n):
        vec = rng.standard_normal(DIM).astype(np.float32)
        batch.memories.append(Memory(id=f"m{i:06d}", namespace="ops",
                                     content=f"note {i} about the deploy " + "x" * 400,
                                     embedding=vec / np.linalg.norm(vec)))
    return batch


def _log_pages(folder: Path) -> int:
    """The pages in the write-ahead log now (a PASSIVE checkpoint reports them)."""
    with sqlite3.connect(folder / DB_FILE) as conn:
        return int(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])


def test_a_commit_leaves_the_checkpoint_to_the_thread(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, dim=DIM)
    # a thread that waits a minute before it checkpoints: only the commits could have
    store._checkpoints = Checkpointer(tmp_path / DB_FILE, gather=60)
    store.open()
    try:
        assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == BACKSTOP_PAGES
        for start in range(0, 3000, 250):
            store.apply(_batch(start, 250))
        # past SQLite's 1,000 pages, and still in the log: no commit copied it
        assert store._checkpoints.runs == 0
        assert _log_pages(tmp_path) > 1000
    finally:
        store.close()


def test_the_thread_copies_the_log_and_nothing_is_lost(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, dim=DIM)
    store.open()
    try:
        for start in range(0, 1500, 250):
            store.apply(_batch(start, 250))
        checkpoints = store._checkpoints
        assert checkpoints is not None
        checkpoints.stop()  # runs the checkpoint still due, then ends the thread
        assert checkpoints.runs >= 1
        pages, copied = checkpoints.last or (0, -1)
        assert pages > 0 and copied == pages  # the whole log, no reader held it
        store.apply(_batch(1500, 10))  # after a full checkpoint the log starts over
        assert _log_pages(tmp_path) < pages
    finally:
        store.close()
    reopened = SQLiteStore(tmp_path, dim=DIM)
    reopened.open()
    try:
        assert sum(reopened.counts("ops").memories.values()) == 1510
        got = reopened.get_memories("ops", ["m000000", "m001509"])
        assert set(got) == {"m000000", "m001509"}
    finally:
        reopened.close()


def test_a_failed_checkpoint_is_logged_not_raised(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    checkpoints = Checkpointer(tmp_path, gather=0)  # a folder: no database opens there
    with caplog.at_level(logging.WARNING, logger="graphmem.store.sqlite.checkpoint"):
        checkpoints.committed()
        checkpoints.stop()
    assert checkpoints.runs == 0
    assert "WAL checkpoint failed" in caplog.text
