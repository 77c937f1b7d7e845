"""Hand-made bad inputs from the outside-in probe (issue 15), over real HTTP: each answers a
4xx JSON error (never a 500 or 503), writes nothing, and the server keeps serving."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.test_rest import Server


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    with Server(tmp_path_factory.mktemp("abuse")) as server:
        key = server.keys.create(["A"], "writer")[1]
        yield server, {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}


def _stored(server: Server) -> int:
    return sum(len(p) for ns in server.mem.namespaces()
               for p in server.mem.backend.iter_memories(ns, embeddings=False))


BAD_BODIES: list[tuple[str, str, str]] = [
    ("POST", "/v1/memories", '{"namespace":"A","content":"x","id":"abc\\n"}'),
    ("POST", "/v1/memories", '{"namespace":"A\\n","content":"x"}'),
    ("POST", "/v1/memories", '{"namespace":"A","content":"a\\u0000b"}'),
    ("POST", "/v1/memories", '{"namespace":"A","content":"lone \\ud800"}'),
    ("POST", "/v1/memories", '{"namespace":"A","content":"x","source":"\\udc00"}'),
    ("POST", "/v1/memories", '{"namespace":"A","content":"x","metadata":{"\\ud800":1}}'),
    ("POST", "/v1/memories", '{"namespace":"A","content":"x",'
                             '"created_at":"0001-01-01T00:30:00+01:00"}'),
    ("POST", "/v1/memories/batch", '{"namespace":"A","items":[{"content":"fine"},'
                                   '{"content":"bad \\u0000"}]}'),
    ("POST", "/v1/search", '{"namespace":"A","query":"q \\ud800"}'),
    ("POST", "/v1/search", '{"namespace":"A","query":"q","filters":{"metadata":"x"}}'),
]


@pytest.mark.parametrize(("method", "path", "body"), BAD_BODIES)
def test_bad_bodies_get_a_json_4xx_and_write_nothing(srv: tuple[Server, dict[str, str]],
                                                     method: str, path: str, body: str) -> None:
    server, headers = srv
    before = _stored(server)
    r = httpx.request(method, server.url + path, content=body.encode(), headers=headers)
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    assert r.json()["error"]["message"]
    assert _stored(server) == before
    assert httpx.get(f"{server.url}/readyz").status_code == 200


def test_a_patch_with_a_lone_surrogate_changes_nothing(
        srv: tuple[Server, dict[str, str]]) -> None:
    server, headers = srv
    r = httpx.post(f"{server.url}/v1/memories", headers=headers,
                   json={"namespace": "A", "content": "original"})
    mid = r.json()["id"]
    for body in ('{"content":"new \\ud800"}', '{"source":"\\udfff"}', '{"content":"\\u0000"}'):
        r = httpx.patch(f"{server.url}/v1/memories/{mid}?namespace=A", content=body.encode(),
                        headers=headers)
        assert r.status_code == 422, r.text
    got: dict[str, Any] = httpx.get(f"{server.url}/v1/memories/{mid}?namespace=A",
                                    headers=headers).json()
    assert got["content"] == "original" and got["source"] is None


@pytest.mark.parametrize("bad_id", ["abc%0A", "abc%00", "%0A"])
def test_ids_in_paths_with_control_characters_are_refused(
        srv: tuple[Server, dict[str, str]], bad_id: str) -> None:
    server, headers = srv
    r = httpx.get(f"{server.url}/v1/memories/{bad_id}?namespace=A", headers=headers)
    assert r.status_code == 422, r.text
    r = httpx.get(f"{server.url}/v1/memories/x?namespace=A%0A", headers=headers)
    assert r.status_code in (403, 422), r.text


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    sent = 0
    yield b'{"namespace":"A","content":"'
    while sent < total:
        yield b"x" * size
        sent += size
    yield b'"}'


def test_an_oversized_chunked_body_without_a_key_is_refused_before_it_is_read(
        srv: tuple[Server, dict[str, str]]) -> None:
    server, headers = srv
    before = _stored(server)
    # chunked: no Content-Length to trust; no key: refused before the body is read
    r = httpx.post(f"{server.url}/v1/memories", content=_chunks(50 * 1024 * 1024),
                   headers={"Content-Type": "application/json"}, timeout=60)
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
    # with a key: read only up to the cap (200 kB in this server), then 413
    r = httpx.post(f"{server.url}/v1/memories", content=_chunks(5 * 1024 * 1024),
                   headers=headers, timeout=60)
    assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"
    assert _stored(server) == before
    ok = httpx.post(f"{server.url}/v1/memories",  # chunked and small: served
                    content=iter([b'{"namespace":"A",', b'"content":"chunked and fine"}']),
                    headers=headers)
    assert ok.status_code == 201, ok.text


def test_metrics_public_names_no_namespace(tmp_path: Path) -> None:
    import uvicorn

    from graphmem import GraphMemory
    from graphmem.api.app import create_app
    from graphmem.api.settings import Settings
    from tests.api.test_rest import _free_port
    from tests.conftest import FakeEmbedder

    with GraphMemory.open(tmp_path / "d", embedder=FakeEmbedder()) as mem:
        mem.store("a secret tenant's memory", namespace="tenant-secret-name")
        port = _free_port()
        settings = Settings(data=str(tmp_path / "d"), keys_file=tmp_path / "k.db", port=port,
                            scheduler=False, metrics_public=True)
        app = create_app(settings, memory=mem)
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                               log_level="warning"))
        import threading
        import time

        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        try:
            text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        finally:
            server.should_exit = True
            thread.join(timeout=10)
    assert 'graphmem_memories{kind="memory",status="active",tier="medium"} 1.0' in text
    assert "tenant-secret-name" not in text


def test_the_model_is_loaded_before_serving_and_readyz_reports_a_failure(
        tmp_path: Path) -> None:
    import threading
    import time

    import uvicorn

    from graphmem import GraphMemory
    from graphmem.api.app import create_app
    from graphmem.api.settings import Settings
    from tests.api.test_rest import _free_port
    from tests.conftest import FakeEmbedder

    class SlowModel(FakeEmbedder):
        loaded = False

        def embed(self, texts: Any) -> Any:
            if not self.loaded:
                time.sleep(1.0)  # the model is loading
                self.loaded = True
            return super().embed(texts)

    class BrokenModel(FakeEmbedder):
        def embed(self, texts: Any) -> Any:
            raise RuntimeError("no weights")

    for model, ready in ((SlowModel(), 200), (BrokenModel(), 503)):
        folder = tmp_path / type(model).__name__
        with GraphMemory.open(folder, embedder=model) as mem:
            port = _free_port()
            settings = Settings(data=str(folder), keys_file=tmp_path / "k.db", port=port,
                                scheduler=False)
            server = uvicorn.Server(uvicorn.Config(create_app(settings, memory=mem),
                                                   host="127.0.0.1", port=port,
                                                   log_level="critical"))
            thread = threading.Thread(target=server.run, daemon=True)
            thread.start()
            while not server.started:
                time.sleep(0.01)
            try:
                if isinstance(model, SlowModel):
                    assert model.loaded  # loaded before the first request was accepted
                r = httpx.get(f"http://127.0.0.1:{port}/readyz")
                assert r.status_code == ready, r.text
                if ready == 503:
                    assert "did not load" in r.json()["error"]["message"]
                assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
            finally:
                server.should_exit = True
                thread.join(timeout=10)


def test_a_full_disk_answers_json_503_and_writes_nothing(tmp_path: Path) -> None:
    """SQLITE_FULL for real: the database may not grow by another page."""
    with Server(tmp_path) as server:
        key = server.keys.create(["A"], "writer")[1]
        headers = {"Authorization": f"Bearer {key}"}
        ok = httpx.post(f"{server.url}/v1/memories", headers=headers,
                        json={"namespace": "A", "content": "written before the disk filled"})
        assert ok.status_code == 201
        conn = server.mem.backend.conn  # type: ignore[attr-defined]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        big = [{"content": f"memory {i} " + "filler words " * 300} for i in range(40)]
        r = httpx.post(f"{server.url}/v1/memories", headers=headers,
                       json={"namespace": "A", "items": big})
        assert r.status_code == 503, r.text
        assert r.headers["content-type"].startswith("application/json")
        assert r.json()["error"]["code"] == "store_error"
        assert "full" in r.json()["error"]["message"]
        assert _stored(server) == 1  # all or nothing
        conn.execute("PRAGMA max_page_count = 1073741823")  # space again: writes go on
        again = httpx.post(f"{server.url}/v1/memories", headers=headers,
                           json={"namespace": "A", "items": big[:2]})
        assert again.status_code == 201 and _stored(server) == 3


def test_405_names_the_allowed_methods(srv: tuple[Server, dict[str, str]]) -> None:
    server, headers = srv
    r = httpx.put(f"{server.url}/v1/search", headers=headers, json={})
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["error"]["code"] == "method_not_allowed"


def test_without_keys_only_loopback_host_names_are_served(tmp_path: Path) -> None:
    """--dev-no-auth on loopback: a rebinding page's Host header gets no answer."""
    from fastapi.testclient import TestClient

    from graphmem import GraphMemory
    from graphmem.api.app import create_app
    from graphmem.api.settings import Settings
    from tests.conftest import FakeEmbedder

    with GraphMemory.open(tmp_path / "d", embedder=FakeEmbedder()) as mem:
        app = create_app(Settings(data=str(tmp_path / "d"), keys_file=tmp_path / "k.db",
                                  dev_no_auth=True, scheduler=False), memory=mem)
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            assert client.get("/v1/stats", params={"namespace": "A"}).status_code == 200
            for host in ("evil.example", "attacker.test:8765", "10.0.0.1",
                         "127.evil.example", "127.0.0.1.nip.io:8765", "[::ffff:10.0.0.1]"):
                r = client.get("/v1/stats", params={"namespace": "A"}, headers={"host": host})
                assert r.status_code == 421, (host, r.text)
            for host in ("localhost:8765", "127.0.0.2", "[::1]:8765", "[::1]"):
                assert client.get("/v1/stats", params={"namespace": "A"},
                                  headers={"host": host}).status_code == 200, host


def test_a_second_serve_on_a_folder_is_one_line(tmp_path: Path) -> None:
    import os
    import shutil
    import subprocess
    import sys

    from graphmem import GraphMemory
    from tests.conftest import FakeEmbedder

    gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert gm
    with GraphMemory.open(tmp_path / "d", embedder=FakeEmbedder()):
        out = subprocess.run([gm, "serve", "--data", str(tmp_path / "d"), "--port", "1"],
                             capture_output=True, text=True, timeout=120,
                             env={**os.environ, "GRAPHMEM_KEYS_FILE": str(tmp_path / "k")})
    assert out.returncode != 0
    lines = [x for x in out.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "in use by another process" in lines[0], out.stderr
