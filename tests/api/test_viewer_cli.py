"""``graphmem viewer``: loopback only, a key for the session printed once (not in the URL) and
revoked when the viewer stops; a folder without a store is a one-line error."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from graphmem import GraphMemory
from graphmem.api.keys import KeyStore
from graphmem.testing import RandomEmbedder
from tests.api.test_viewer_browser import _free_port

GM = str(Path(sys.executable).parent / "graphmem")


def _get(url: str, key: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:  # not listening yet
        return 0, b""


@pytest.mark.model
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])  # Ctrl+C; a service stop
def test_the_viewer_serves_loopback_with_a_session_key(tmp_path: Path, stop: int) -> None:
    folder = tmp_path / "data"
    with GraphMemory.open(folder, embedder=RandomEmbedder()) as mem:
        mem.store("a memory to look at", namespace="ops")
    port = _free_port()
    proc = subprocess.Popen([GM, "viewer", "--data", str(folder), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        url, key = lines[0], lines[2].strip()
        assert f"http://127.0.0.1:{port}/viewer" in url and key.startswith("gm_")
        assert key not in url
        for _ in range(120):
            status, _body = _get(f"http://127.0.0.1:{port}/healthz")
            if status == 200:
                break
            time.sleep(0.5)
        status, page = _get(f"http://127.0.0.1:{port}/viewer")
        assert status == 200 and b"<html" in page
        status, body = _get(f"http://127.0.0.1:{port}/v1/whoami", key)
        assert status == 200
        who = json.loads(body)
        assert who["role"] == "admin" and who["namespaces"] == ["ops"]
    finally:
        proc.send_signal(stop)
        proc.wait(timeout=30)
    rows = KeyStore(folder / "keys.db").list()
    assert [r["revoked"] for r in rows if r["label"] == "graphmem viewer session"] == [True]


def test_the_viewer_refuses_a_folder_without_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    done = subprocess.run([GM, "viewer", "--data", str(missing)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "graphmem init" in done.stderr
    assert not missing.exists()


def test_the_openapi_document_declares_the_key_on_v1_only(tmp_path: Path) -> None:
    """The docs' Authorize button needs a declared scheme; health checks stay open."""
    from graphmem.api.app import create_app
    from graphmem.api.settings import Settings

    with GraphMemory.open(tmp_path / "data", embedder=RandomEmbedder()) as mem:
        schema = create_app(Settings(data=str(tmp_path / "data")), memory=mem).openapi()
    assert schema["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    paths = schema["paths"]
    assert paths["/v1/search"]["post"]["security"] == [{"apiKey": []}]
    assert all(op.get("security") for p, ops in paths.items() if p.startswith("/v1/")
               for op in ops.values())
    assert "security" not in paths["/healthz"]["get"]
