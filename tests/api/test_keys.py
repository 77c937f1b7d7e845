"""API keys: in the graph database when the data lives there, so every API replica accepts a
key any of them (or the CLI) created, and a revocation reaches them all; the embedded
default keeps its key file beside the data."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem import GraphMemory
from graphmem.api.app import create_app
from graphmem.api.keys import KeyStore
from graphmem.api.settings import Settings
from graphmem.config import GraphMemConfig, StoreConfig
from tests.conftest import Clock, FakeEmbedder

GM = shutil.which("graphmem", path=str(Path(sys.executable).parent)) or shutil.which("graphmem")


@pytest.fixture(params=["falkordb", "neo4j"])
def database(request: pytest.FixtureRequest) -> Iterator[tuple[str, GraphMemConfig]]:
    """A graph database URL (a fresh FalkorDB graph, or the emptied test Neo4j)."""
    if request.param == "falkordb":
        url = request.getfixturevalue("falkordb_server").url
        yield url, GraphMemConfig(store=StoreConfig(falkordb_graph=f"k{uuid.uuid4().hex}"))
    else:
        from tests.conftest import _wipe_neo4j

        url = request.getfixturevalue("neo4j_uri")
        _wipe_neo4j(url)
        yield url, GraphMemConfig()


def _replica(url: str, config: GraphMemConfig) -> tuple[TestClient, GraphMemory]:
    mem = GraphMemory.open(url, config=config, clock=Clock(), embedder=FakeEmbedder())
    settings = Settings(data=url, scheduler=False, key_cache_seconds=0.5,
                        falkordb_graph=config.store.falkordb_graph)
    return TestClient(create_app(settings, memory=mem)), mem


def _status(client: TestClient, key: str) -> int:
    return client.get("/v1/stats", params={"namespace": "ops"},
                      headers={"Authorization": f"Bearer {key}"}).status_code


def test_replicas_share_keys_through_the_database(database: tuple[str, GraphMemConfig]
                                                  ) -> None:
    url, config = database
    (a, mem_a), (b, mem_b) = _replica(url, config), _replica(url, config)
    try:
        with a, b:
            key_id, key = a.app.state.keys.create(["ops"], "writer")  # type: ignore[attr-defined]
            assert _status(a, key) == 200 and _status(b, key) == 200
            assert _status(b, key.replace("_", "-")) == 401
            listed = b.app.state.keys.list()  # type: ignore[attr-defined]
            assert [(k["id"], k["revoked"]) for k in listed] == [(key_id, False)]
            assert "hash" not in listed[0]
            a.app.state.keys.revoke(key_id)  # type: ignore[attr-defined]
            assert _status(a, key) == 401  # this replica forgets it at once
            time.sleep(0.6)  # the other within key_cache_seconds
            assert _status(b, key) == 401
    finally:
        mem_a.close()
        mem_b.close()


def test_the_cli_writes_keys_into_the_database(database: tuple[str, GraphMemConfig]) -> None:
    url, config = database
    assert GM
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    if config.store.falkordb_graph != "graphmem":
        env["GRAPHMEM_FALKORDB_GRAPH"] = config.store.falkordb_graph
    out = subprocess.run([GM, "keys", "create", "--data", url, "-n", "ops", "--role", "reader"],
                         capture_output=True, text=True, env=env, timeout=180)
    assert out.returncode == 0, out.stderr
    key = out.stdout.strip().splitlines()[-1]
    mem = GraphMemory.open(url, config=config, embedder=FakeEmbedder())
    try:
        records: Any = mem.key_records()
        who = KeyStore(records).verify(key)
        assert who is not None and who.role == "reader" and who.may_use("ops")
    finally:
        mem.close()
    assert not Path("graphmem-keys.db").exists()  # nothing written beside the caller


def test_the_embedded_default_keeps_its_key_file(tmp_path: Path) -> None:
    settings = Settings(data=str(tmp_path / "data"), scheduler=False)
    assert not settings.keys_in_store and settings.keys_path() == tmp_path / "data" / "keys.db"
    with GraphMemory.open(tmp_path / "data", embedder=FakeEmbedder()) as mem:
        assert mem.key_records() is None


def test_a_key_file_verdict_holds_until_the_file_changes(tmp_path: Path) -> None:
    """The server's key store (ttl 0 over the key file) reads the file once per key while it
    is unchanged, and sees a revocation made by another process at the next request."""
    path = tmp_path / "keys.db"
    server = KeyStore(path, ttl=0)
    key_id, key = server.create(["ops"], "writer")
    reads: list[str] = []
    by_hash = server.records.key_by_hash

    def counted(digest: str) -> object:
        reads.append(digest)
        return by_hash(digest)

    server.records.key_by_hash = counted  # type: ignore[method-assign, assignment]
    for _ in range(5):
        assert server.verify(key) is not None
    assert len(reads) == 1
    KeyStore(path, ttl=0).revoke(key_id)  # the CLI, in another process
    assert server.verify(key) is None


def test_a_request_verifies_its_key_once(tmp_path: Path) -> None:
    """The outer guard's verdict serves the route too (ADR 0047): one ``verify`` per request,
    and the route's dependencies are coroutines, which FastAPI runs on the event loop rather
    than handing each to a worker thread."""
    from graphmem.api import deps

    mem = GraphMemory.open(tmp_path / "data", clock=Clock(), embedder=FakeEmbedder())
    settings = Settings(data=str(tmp_path / "data"), scheduler=False)
    with TestClient(create_app(settings, memory=mem)) as client:
        store: KeyStore = client.app.state.keys  # type: ignore[attr-defined]
        key = store.create(["ops"], "writer")[1]
        calls: list[str] = []
        verify = store.verify

        def counted(k: str) -> Any:
            calls.append(k)
            return verify(k)

        store.verify = counted  # type: ignore[method-assign, assignment]
        auth = {"Authorization": f"Bearer {key}"}
        assert client.post("/v1/memories", json={"namespace": "ops", "content": "x"},
                           headers=auth).status_code == 201
        assert client.post("/v1/search", json={"namespace": "ops", "query": "x"},
                           headers=auth).json()[0]["memory"]["content"] == "x"
        assert calls == [key, key]
        # the guard's verdict is the key's: another namespace is still refused
        assert client.post("/v1/search", json={"namespace": "other", "query": "x"},
                           headers=auth).status_code == 403
    mem.close()
    assert all(inspect.iscoroutinefunction(f)
               for f in (deps.principal, deps.memory, deps.settings))
