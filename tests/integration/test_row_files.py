"""Saved vectors of large namespaces (ADR 0020, 0068): the rows mapped from files and the faiss
indexes load without reading SQLite, hold exactly what SQLite holds, and are never trusted
after anything changed behind them (another process's writes, a crash, a damaged or foreign
file)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from graphmem.config import TuningConfig
from graphmem.models import Memory, Status, Tier
from graphmem.store.ann import files
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.store import SQLiteStore

DIM = 32
NS = "big"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def unit(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def memories(vectors: np.ndarray, start: int = 0, ns: str = NS) -> list[Memory]:
    return [Memory(id=f"m{i}", namespace=ns, content=f"memory {i}", created_at=T0,
                   updated_at=T0, last_accessed_at=T0, content_hash=f"h{i}", embedding=x,
                   context_embedding=None if i % 3 == 0 else np.roll(x, 1),
                   keywords=f"w{i}", context_keywords="")
            for i, x in enumerate(vectors, start)]


def open_store(folder: Path, ann_min: int = 500) -> SQLiteStore:
    store = SQLiteStore(folder, dim=DIM, tuning=TuningConfig(
        ann_min=ann_min, ann_build_in_background=False))
    store.open()
    return store


def state(store: SQLiteStore, ns: str = NS) -> tuple[object, ...]:
    store.similarities(ns, [], np.zeros(DIM, np.float32))  # loaded on first use
    index, col = store._vectors[ns], store._vectors[ns].col
    rows = sorted((i, int(col["pk"][r]), index.rows["content"][r].tobytes(),
                   index.rows["context"][r].tobytes() if col["has_context"][r] else None,
                   int(col["tier"][r]), int(col["status"][r]))
                  for i, r in index.row_of.items())
    return rows, len(index)


def loaded_from_files(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The namespaces the files serve at the next opens (recorded)."""
    served: list[str] = []
    load = files.RowFiles.load

    def spy(self: files.RowFiles, namespace: str, conn: object) -> object:
        got = load(self, namespace, conn)  # type: ignore[arg-type]
        if got is not None:
            served.append(namespace)
        return got

    monkeypatch.setattr(files.RowFiles, "load", spy)
    return served


def test_a_large_namespace_maps_its_rows_and_reopens_from_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v = unit(2000)
    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=memories(v[:400])))
    store.apply(WriteBatch("small", memories=memories(v[:10], ns="small")))
    state(store)
    assert not store._vectors[NS].mapped  # below the threshold: in memory
    store.apply(WriteBatch(NS, memories=memories(v[400:], 400)))  # crosses it, and grows
    store.apply(WriteBatch(NS, delete_memories=["m7"], patches=[
        ("m8", {"status": Status.ARCHIVED}), ("m9", {"tier": Tier.GLACIAL})]))
    index = store._vectors[NS]
    assert index.mapped and isinstance(index.rows["content"], np.memmap)
    assert index.ann is not None and store.ann_states() == {NS: "built"}
    before, small = state(store), state(store, "small")
    assert not store._vectors["small"].mapped
    answer = store.vector_topk(NS, v[5], 10)
    store.close()

    served = loaded_from_files(monkeypatch)
    store = open_store(tmp_path)
    try:
        assert served == [] and store._vectors == {}  # opening reads no vectors
        assert state(store) == before and state(store, "small") == small
        assert served == [NS]  # the small namespace is read from SQLite, as before
        assert store.ann_states() == {NS: "loaded"}
        assert store.vector_topk(NS, v[5], 10) == answer
        assert store.vector_topk(NS, v[8], 10, statuses=(Status.ARCHIVED,))[0][0] == "m8"
        # writes go on into the mapped files, past their capacity
        store.apply(WriteBatch(NS, memories=memories(unit(3000, seed=1), 5000)))
        assert len(store._vectors[NS]) == 1999 + 3000
        after = state(store)
    finally:
        store.close()
    store = open_store(tmp_path)
    try:
        assert state(store) == after
    finally:
        store.close()


def test_rows_changed_by_a_process_without_mapping_are_read_from_sqlite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process (mapping off) archives a memory and rewrites a vector: the files
    still hold the old row and the old status, so they must not be used."""
    v = unit(800)
    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=memories(v)))
    state(store)  # loaded: saved at close
    store.close()
    plain = open_store(tmp_path, ann_min=0)
    plain.apply(WriteBatch(NS, patches=[("m3", {"status": Status.ARCHIVED})]))
    plain.close()
    served = loaded_from_files(monkeypatch)
    store = open_store(tmp_path)
    try:
        assert served == []
        assert "m3" not in {i for i, _ in store.vector_topk(NS, v[3], 10)}
    finally:
        store.close()
    plain = open_store(tmp_path, ann_min=0)
    plain.apply(WriteBatch(NS, memories=memories(-v[4][None, :], 4)))
    plain.close()
    store = open_store(tmp_path)
    try:
        assert store.vector_topk(NS, -v[4], 1)[0][0] == "m4"
    finally:
        store.close()


CRASH = """
import os, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_row_files import memories, open_store, unit, WriteBatch, NS, Status
from pathlib import Path
store = open_store(Path({folder!r}))
store.vector_topk(NS, unit(1)[0], 1)  # loaded: the files are written
store.apply(WriteBatch(NS, memories=memories(-unit(1)[0][None, :], 11),
                       patches=[("m12", {{"status": Status.ARCHIVED}})]))
os._exit(0)  # no close: the files hold the write, nothing says so
"""


def test_after_a_crash_the_rows_come_from_sqlite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v = unit(800)
    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=memories(v)))
    state(store)  # loaded: saved at close
    store.close()
    script = CRASH.format(tests=str(Path(__file__).parent), folder=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    served = loaded_from_files(monkeypatch)
    store = open_store(tmp_path)
    try:
        assert served == []
        assert store.vector_topk(NS, -unit(1)[0], 1)[0][0] == "m11"
        assert "m12" not in {i for i, _ in store.vector_topk(NS, v[12], 10)}
    finally:
        store.close()


def test_a_commit_lost_to_a_power_cut_does_not_leave_trusted_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``synchronous=NORMAL`` a power cut can lose SQLite's last commit while the kernel
    has already written the mapped rows: the database then has the epoch the files were
    saved with, but the files hold the lost write. Opening deletes the sidecar, so nothing
    vouches for files that a session may have changed."""
    import shutil

    v = unit(800)
    store = open_store(tmp_path)
    store.apply(WriteBatch(NS, memories=memories(v)))
    state(store)  # loaded: saved at close
    store.close()
    saved = tmp_path.parent / "before-the-cut"
    saved.mkdir()
    for name in ("graphmem.db", "graphmem.db-wal", "graphmem.db-shm"):
        if (tmp_path / name).exists():
            shutil.copy2(tmp_path / name, saved / name)
    script = CRASH.format(tests=str(Path(__file__).parent), folder=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    for name in ("graphmem.db", "graphmem.db-wal", "graphmem.db-shm"):  # the commit is lost
        (tmp_path / name).unlink(missing_ok=True)
        if (saved / name).exists():
            shutil.copy2(saved / name, tmp_path / name)
    served = loaded_from_files(monkeypatch)
    store = open_store(tmp_path)
    try:
        assert served == []
        assert "m11" in {i for i, _ in store.vector_topk(NS, v[11], 1)}  # SQLite's row
    finally:
        store.close()


def test_damaged_or_foreign_files_are_not_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, seed in ((a, 0), (b, 1)):
        store = open_store(folder)
        store.apply(WriteBatch(NS, memories=memories(unit(800, seed=seed))))
        state(store)  # loaded: saved at close
        store.close()
    # b's files under a's name: same epoch, same counts, other vectors
    for path in (b / "vectors").iterdir():
        path.replace(a / "vectors" / path.name)
    served = loaded_from_files(monkeypatch)
    store = open_store(a)
    try:
        assert served == [] and store.vector_topk(NS, unit(800)[6], 1)[0][0] == "m6"
    finally:
        store.close()
    # a truncated matrix and a broken index file: read from SQLite, not fatal
    for name, damage in (("content.f32", b""), ("rows.npz", b"not an archive")):
        for path in (a / "vectors").glob(f"*.{name}"):
            path.write_bytes(damage)
        store = open_store(a)
        try:
            assert served == [] and store.vector_topk(NS, unit(800)[6], 1)[0][0] == "m6"
        finally:
            store.close()


def _resident_kb(path: Path) -> int:
    """This process's resident kB of its mappings of ``path`` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5:  # a mapping's header line
            inside = line.endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(head[1])
    return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_POPULATE_READ")
def test_reopened_rows_are_mapped_at_load_not_fault_by_fault(tmp_path: Path) -> None:
    dim, n = 384, 4000  # 6 MB a field: far more than the pages the load's check faults in
    v = np.random.default_rng(0).standard_normal((n, dim)).astype(np.float32)
    rows = [Memory(id=f"m{i}", namespace=NS, content=f"memory {i}", created_at=T0,
                   updated_at=T0, last_accessed_at=T0, content_hash=f"h{i}", embedding=x,
                   context_embedding=x, keywords=f"w{i}", context_keywords="")
            for i, x in enumerate(v / np.linalg.norm(v, axis=1, keepdims=True))]
    tuning = TuningConfig(ann_min=500, ann_build_in_background=False)
    store = SQLiteStore(tmp_path, dim=dim, tuning=tuning)
    store.open()
    store.apply(WriteBatch(NS, memories=rows))
    store.similarities(NS, [], np.zeros(dim, np.float32))  # loaded: the close saves the files
    store.close()
    store = SQLiteStore(tmp_path, dim=dim, tuning=tuning)
    store.open()
    try:
        store.similarities(NS, [], np.zeros(dim, np.float32))  # the first use loads, no row read
        index = store._vectors[NS]
        assert store.ann_states() == {NS: "loaded"}  # from the files
        for field in ("content", "context"):
            path = Path(index.rows[field].filename).resolve()
            assert _resident_kb(path) >= n * dim * 4 // 1024  # every page of the rows
    finally:
        store.close()
