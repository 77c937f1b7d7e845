"""Every door of the API asks ``identify`` for its caller: the REST routes (their ``principal``
dependency), the events stream, the MCP mount and /metrics. The outer guard asks first, to
refuse a client without a key before it can hold a connection; with the guard taken away,
every door must still refuse such a client on its own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount

from graphmem import GraphMemory
from graphmem.api.app import Guard, McpAuth, _leaf_routes, create_app
from graphmem.api.settings import Settings
from graphmem.testing import Clock, FakeEmbedder

#: doors open to anyone: probes, the viewer and its files, the offline docs
PUBLIC = {"/healthz", "/readyz", "/viewer", "/viewer/static", "/docs", "/redoc", "/openapi.json"}


@pytest.fixture
def app(tmp_path: Path) -> Iterator[FastAPI]:
    with GraphMemory.open(tmp_path / "data", clock=Clock(), embedder=FakeEmbedder()) as mem:
        yield create_app(Settings(data=str(tmp_path / "data"), scheduler=False), memory=mem)


def _doors(app: FastAPI) -> list[tuple[str, str]]:
    """(method, path) of every route and mount that is not public, path parameters filled."""
    out = []
    for route in _leaf_routes(list(app.router.routes)):
        path = re.sub(r"\{[^}]+\}", "x", route.path)
        if route.path in PUBLIC:
            continue
        if isinstance(route, Mount):
            out.append(("POST", path + "/"))
        else:
            out.extend((m, path) for m in sorted(route.methods - {"HEAD"}))
    return out


def _unguarded(app: FastAPI) -> TestClient:
    app.user_middleware = [m for m in app.user_middleware if m.cls is not Guard]
    return TestClient(app, raise_server_exceptions=False)


def test_every_door_refuses_a_client_without_a_key_on_its_own(app: FastAPI) -> None:
    client = _unguarded(app)
    doors = _doors(app)
    assert ("POST", "/mcp/") in doors and ("GET", "/v1/events") in doors
    assert ("GET", "/metrics") in doors and len(doors) > 30
    for method, path in doors:
        answer = client.request(method, path, params={"namespace": "ops"},
                                json={} if method in ("POST", "PUT", "PATCH") else None)
        assert answer.status_code == 401, (method, path, answer.status_code, answer.text)
        assert answer.json()["error"]["code"] == "unauthorized"


def test_the_routes_and_the_mount_take_the_caller_from_identify(app: FastAPI) -> None:
    """Read from the app: a /v1 route depends on ``principal``; /mcp is behind ``McpAuth``."""
    from graphmem.api import deps

    def calls(dependant: object) -> set[object]:
        found = {getattr(dependant, "call", None)}
        for sub in getattr(dependant, "dependencies", []):
            found |= calls(sub)
        return found

    for route in _leaf_routes(list(app.router.routes)):
        if isinstance(route, APIRoute) and route.path.startswith("/v1/"):
            assert deps.principal in calls(route.dependant), route.path
        elif isinstance(route, Mount) and route.path == "/mcp":
            assert isinstance(route.app, McpAuth)


def test_a_key_is_still_scoped_to_its_namespaces_without_the_guard(app: FastAPI) -> None:
    client = _unguarded(app)
    key = app.state.keys.create(["ops"], "writer")[1]
    auth = {"Authorization": f"Bearer {key}"}
    assert client.post("/v1/memories", json={"namespace": "ops", "content": "x"},
                       headers=auth).status_code == 201
    assert client.post("/v1/memories", json={"namespace": "other", "content": "x"},
                       headers=auth).status_code == 403
    assert client.get("/v1/stats", params={"namespace": "ops"},
                      headers={"Authorization": "Bearer gm_wrong"}).status_code == 401
