"""Copying a namespace between adapters, both ways, verified; through the CLI too."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.config import GraphMemConfig, StoreConfig
from graphmem.engine.migrate import migrate
from graphmem.errors import ConflictError
from graphmem.store.sqlite.store import SQLiteStore
from tests.conftest import Clock, FakeEmbedder, open_falkordb_store

NS = "agent"


def _fill(mem: GraphMemory, clock: Clock) -> None:
    a = mem.store("deploy failed on friday", namespace=NS, importance=0.9, source="ops",
                  metadata={"ticket": 42, "ok": False})
    b = mem.store("the migration locked a table", namespace=NS, relations=[("CAUSES", a.id)])
    mem.relate(b.id, a.id, "CONTRADICTS", namespace=NS)
    mem.store_many([{"content": f"chat turn {i} about the deploy", "session_id": "c1",
                     "created_at": clock.now + timedelta(minutes=i)} for i in range(5)],
                   namespace=NS)
    mem.store("unrelated note", namespace="other")
    mem.retrieve("deploy", namespace=NS)  # access bookkeeping changes some fields


def _export(mem: GraphMemory) -> str:
    out = io.StringIO()
    mem.export_jsonl(out, namespace=NS)
    return out.getvalue()


def _graph_store(request: pytest.FixtureRequest, engine: str) -> tuple[Any, str, list[str]]:
    """A fresh, empty graph store on the engine; its target; the CLI options that name it."""
    if engine == "falkordb":
        server = request.getfixturevalue("falkordb_server")
        graph = f"t{uuid.uuid4().hex}"
        return open_falkordb_store(server, graph), server.url, ["--graph", graph]
    from graphmem.store.graph.neo4j_conn import Neo4jConnection
    from graphmem.store.graph.store import CypherStore
    from tests.conftest import _wipe_neo4j

    uri = request.getfixturevalue("neo4j_uri")
    _wipe_neo4j(uri)
    store = CypherStore(Neo4jConnection(uri, user="neo4j", password=None))
    store.open()
    return store, uri, []


@pytest.mark.parametrize("engine", ["falkordb", "neo4j"])
def test_sqlite_to_graph_and_back_is_exact(tmp_path: Path, request: pytest.FixtureRequest,
                                           engine: str, clock: Clock) -> None:
    emb = FakeEmbedder()
    with GraphMemory.open(tmp_path / "a", clock=clock, embedder=emb) as mem:
        _fill(mem, clock)
        original = _export(mem)
    src = SQLiteStore(tmp_path / "a")
    src.open()
    mid, _, _ = _graph_store(request, engine)
    back = SQLiteStore(tmp_path / "b")
    back.open()
    try:
        r1 = migrate(src, mid, NS, page=3)
        assert r1.ok and r1.memories == 7 and r1.edges > 3 and r1.sampled == 7
        r2 = migrate(mid, back, NS, page=2)
        assert (r2.memories, r2.edges) == (r1.memories, r1.edges)
        with pytest.raises(ConflictError):
            migrate(src, back, NS)  # occupied target: refused, nothing merged
        assert back.counts("other").memories == {}  # only the namespace asked for
    finally:
        for s in (src, mid, back):
            s.close()
    with GraphMemory.open(tmp_path / "b", clock=clock, embedder=emb) as mem:
        assert _export(mem) == original


@pytest.mark.parametrize("engine", ["falkordb", "neo4j"])
def test_cli_migrate(tmp_path: Path, request: pytest.FixtureRequest, engine: str,
                     clock: Clock) -> None:
    gm = (shutil.which("graphmem", path=str(Path(sys.executable).parent))
          or shutil.which("graphmem"))
    assert gm
    with GraphMemory.open(tmp_path / "a", clock=clock, embedder=FakeEmbedder()) as mem:
        _fill(mem, clock)
    store, target, opts = _graph_store(request, engine)
    store.close()
    out = subprocess.run([gm, "migrate", "--from", str(tmp_path / "a"), "--to", target, *opts,
                          "--all-namespaces", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = {r["namespace"]: r for r in json.loads(out.stdout)}
    assert got[NS]["memories"] == 7 and got["other"]["memories"] == 1
    assert all(r["ok"] for r in got.values())
    cfg = GraphMemConfig(store=StoreConfig(falkordb_graph=opts[1] if opts else "graphmem"))
    with GraphMemory.open(target, config=cfg, clock=clock, embedder=FakeEmbedder()) as mem:
        assert mem.stats(namespace=NS)["memories"] == 7
        assert mem.retrieve("deploy failed", namespace=NS)[0].memory.content.startswith(
            "deploy failed")
    again = subprocess.run([gm, "migrate", "--from", str(tmp_path / "a"), "--to", target,
                            *opts, "-n", NS],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "already holds memories" in again.stderr


def test_verification_allows_falkordb_precision_and_nothing_more() -> None:
    """FalkorDB replies carry 15 significant digits (10 us of a Unix time): the copy verifies;
    a millisecond, or any other field, still fails it."""
    from graphmem.engine.migrate import _same

    a = {"stored_at": "2026-11-22T23:11:40.291828+00:00", "importance": 0.5, "content": "x"}
    assert _same(a, {**a, "stored_at": "2026-11-22T23:11:40.291830+00:00"})
    assert not _same(a, {**a, "stored_at": "2026-11-22T23:11:40.292828+00:00"})
    assert not _same(a, {**a, "content": "y"})
    assert not _same(a, {**a, "importance": 0.5001})
