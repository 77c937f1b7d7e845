"""Responses rendered in the route's worker thread (ADR 0053): the hot routes hand FastAPI a
ready ``Response``, so no second hop to validate and no serialising on the event loop, and
the route's model still checks what the server sends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem import GraphMemory
from graphmem.api import schemas as s
from graphmem.api.app import create_app
from graphmem.api.settings import Settings
from graphmem.models import Memory
from tests.conftest import FakeEmbedder


@pytest.fixture()
def client(tmp_path: Path) -> Iterator[tuple[TestClient, GraphMemory]]:
    with GraphMemory.open(tmp_path / "d", embedder=FakeEmbedder()) as mem:
        for text in ("the deploy failed on friday", "the deploy was rolled back",
                     "lunch was pasta"):
            mem.store(text, namespace="A")
        app = create_app(Settings(data=str(tmp_path / "d"), keys_file=tmp_path / "k.db",
                                  dev_no_auth=True, scheduler=False), memory=mem)
        with TestClient(app, base_url="http://127.0.0.1:8765") as c:
            yield c, mem


@pytest.fixture()
def serialised(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many responses FastAPI validated and serialised itself."""
    import fastapi.routing

    calls: list[int] = []
    original = fastapi.routing.serialize_response

    async def counting(**kwargs: Any) -> Any:
        calls.append(1)
        return await original(**kwargs)

    monkeypatch.setattr(fastapi.routing, "serialize_response", counting)
    return calls


def test_hot_routes_answer_without_fastapis_second_pass(
        client: tuple[TestClient, GraphMemory], serialised: list[int]) -> None:
    c, mem = client
    r = c.post("/v1/search", json={"namespace": "A", "query": "deploy"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    hits = r.json()
    assert hits and {h["memory"]["content"] for h in hits} >= {"the deploy failed on friday"}
    assert all(h["terms"] and h["path"] for h in hits)  # explained by default
    assert all(s.ResultOut.model_validate(h) for h in hits)
    one = hits[0]["memory"]["id"]
    plain = c.post("/v1/search", json={"namespace": "A", "query": "deploy",
                                       "explain": False}).json()
    assert plain and all(h["terms"] is None and h["path"] is None for h in plain)
    assert c.post("/v1/search/index", json={"namespace": "A", "query": "deploy"}).json()
    assert c.post("/v1/entries", json={"namespace": "A", "ids": [one]}).json()[0]["id"] == one
    assert c.get(f"/v1/memories/{one}", params={"namespace": "A"}).json()["id"] == one
    made = c.post("/v1/memories", json={"namespace": "A", "content": "a new one"})
    assert made.status_code == 201 and made.json()["content"] == "a new one"
    many = c.post("/v1/memories", json={"namespace": "A", "items": [{"content": "x1"},
                                                                     {"content": "x2"}]})
    assert many.status_code == 201 and [m["content"] for m in many.json()] == ["x1", "x2"]
    assert serialised == []
    # the same JSON FastAPI's own pass gave: the route model's dump of the same data
    stored = mem.get(one, namespace="A")
    assert c.get(f"/v1/memories/{one}", params={"namespace": "A"}).content == \
        s.MemoryOut.model_validate(stored.to_dict()).model_dump_json().encode()


def test_what_breaks_the_model_is_a_500_not_a_bad_200(
        client: tuple[TestClient, GraphMemory], monkeypatch: pytest.MonkeyPatch) -> None:
    c, _ = client
    fast = Memory.to_dict

    def without_content(self: Memory, **kwargs: Any) -> dict[str, Any]:
        out = fast(self, **kwargs)
        del out["content"]
        return out

    monkeypatch.setattr(Memory, "to_dict", without_content)
    c2 = TestClient(c.app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False)
    assert c2.post("/v1/search", json={"namespace": "A", "query": "deploy"}).status_code == 500
