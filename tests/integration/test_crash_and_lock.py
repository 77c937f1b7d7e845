"""Durability: a process killed mid-batch leaves the folder consistent; one owner per folder."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graphmem.errors import StoreLockedError
from graphmem.store.sqlite.store import DB_FILE, SQLiteStore

WRITER = textwrap.dedent("""
    import sys, numpy as np
    from datetime import datetime, timezone
    from graphmem.models import Memory, Relation, RelationType
    from graphmem.store.base import WriteBatch
    from graphmem.store.sqlite.store import SQLiteStore
    n = int(sys.argv[2])
    s = SQLiteStore(sys.argv[1]); s.open()
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    ms = [Memory(id=f"b{i}", namespace="ns", content=f"memory number {i}", created_at=t,
                 updated_at=t, last_accessed_at=t, content_hash=str(i), embedding=vecs[i],
                 keywords=f"memori number {i}") for i in range(n)]
    es = [Relation(f"b{i}", f"b{i+1}", RelationType.FOLLOWS, "ns", None, t)
          for i in range(n - 1)]
    print("ready", flush=True)
    s.apply(WriteBatch("ns", memories=ms, edges=es))
    print("done", flush=True)
""")


def check_consistent(folder: Path) -> int:
    conn = sqlite3.connect(folder / DB_FILE)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        mems = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        fts = conn.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
        edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
    finally:
        conn.close()
    assert fts == mems
    assert edges == max(0, mems - 1)
    return int(mems)


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8])
def test_killed_mid_batch_is_all_or_nothing(tmp_path: Path, delay: float) -> None:
    n = 40_000
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(n)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    count = check_consistent(tmp_path)
    print(f'delay {delay}: {count} rows')
    assert count in (0, n)
    store = SQLiteStore(tmp_path)  # reopens cleanly: lock released by the OS, caches rebuilt
    store.open()
    try:
        assert len(store.get_memories("ns", ["b0", f"b{n - 1}"])) == (2 if count else 0)
    finally:
        store.close()


def test_second_owner_is_refused(tmp_path: Path) -> None:
    first = SQLiteStore(tmp_path)
    first.open()
    try:
        code = ("import sys\nfrom graphmem.store.sqlite.store import SQLiteStore\n"
                "from graphmem.errors import StoreLockedError\n"
                f"s = SQLiteStore({str(tmp_path)!r})\n"
                "try:\n    s.open()\nexcept StoreLockedError as e:\n"
                "    print(e); sys.exit(3)\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.returncode == 3
        assert f"pid {os.getpid()}" in out.stdout and "one process" in out.stdout
        with pytest.raises(StoreLockedError):
            SQLiteStore(tmp_path).open()  # also within one process: a second opener
    finally:
        first.close()
    again = SQLiteStore(tmp_path)
    again.open()
    again.close()


def test_files_are_private_and_a_deleted_lock_file_keeps_the_lock(tmp_path: Path) -> None:
    import stat

    from graphmem.api.keys import KeyStore
    from graphmem.errors import StoreLockedError

    first = SQLiteStore(tmp_path)
    first.open()
    try:
        for name in ("graphmem.db", "graphmem.lock"):
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
        (tmp_path / "graphmem.lock").unlink()  # an operator "fixing" a stale lock by hand
        second = SQLiteStore(tmp_path)
        with pytest.raises(StoreLockedError, match="in use by another process"):
            second.open()
    finally:
        first.close()
    again = SQLiteStore(tmp_path)  # released: the next owner gets in
    again.open()
    again.close()
    keys = KeyStore(tmp_path / "keys.db")
    keys.create(["a"], "reader")
    assert stat.S_IMODE((tmp_path / "keys.db").stat().st_mode) == 0o600
