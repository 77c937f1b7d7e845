"""A memory's own TTL (issue 48) through every door on one server and one injected clock:
REST (real HTTP on loopback, both Python clients) and MCP (the SDK's own client in process)
write memories with a ttl and then agree, once it ran out, that each is expired: left out of
search and recall, shown ``expired`` by get / entries / the listing, restorable with or
without a new ttl; a bad ttl is a 422 (a ``ValidationError`` in the clients) that writes
nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from graphmem.api.mcp import build_server
from graphmem.client import AsyncGraphMemClient
from graphmem.errors import ValidationError
from graphmem.models import Status
from tests.api.test_rest import Server

NS = "ttl-doors"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    with Server(tmp_path) as srv:
        yield srv


def _mcp(server: Server, tool: str, args: dict[str, Any]) -> Any:
    """One MCP tool call on the server's memory; its payload, or the error text."""
    async def go() -> Any:
        async with Client(build_server(server.mem, [NS])) as client:
            result = await client.call_tool(tool, args)
            text = getattr(result.content[0], "text", "")
            if result.is_error:
                return {"error": text}
            content = result.structured_content
            return content.get("result", content) if content else json.loads(text)

    return asyncio.run(go())


def test_rest_mcp_and_both_clients_agree_on_an_expired_memory(server: Server) -> None:
    client = server.client([NS])
    key = client._http.headers["Authorization"].removeprefix("Bearer ")
    start = server.clock.now
    by_rest = client.store("the release freeze lasts until friday", namespace=NS, ttl=60)
    assert by_rest.expires_at == start + timedelta(seconds=60)
    by_mcp = _mcp(server, "remember", {"content": "the release freeze blocks hotfixes too",
                                       "namespace": NS, "ttl": 120})
    assert by_mcp["expires_at"] == (start + timedelta(seconds=120)).isoformat()
    lasting = client.store("the release train leaves every two weeks", namespace=NS)
    assert lasting.expires_at is None
    ids = {by_rest.id, by_mcp["id"], lasting.id}
    assert {r.id for r in client.retrieve("release freeze", namespace=NS)} == ids

    server.clock.advance(seconds=121)  # both TTLs ran out; no maintenance has run
    gone = {by_rest.id, by_mcp["id"]}
    assert {r.id for r in client.retrieve("release freeze", namespace=NS)} == {lasting.id}
    assert {e.id for e in client.search_index("release freeze", namespace=NS)} == {lasting.id}
    assert {m["memory"]["id"] for m in _mcp(server, "recall", {
        "query": "release freeze", "namespace": NS})} == {lasting.id}
    assert [m.id for m in client.list_page(namespace=NS).items] == [lasting.id]
    assert {m.id for m in client.list_page(namespace=NS, status="expired").items} == gone
    assert {m["status"] for m in _mcp(server, "entries", {
        "ids": sorted(gone), "namespace": NS})} == {"expired"}
    for id_ in gone:
        assert client.get(id_, namespace=NS).status is Status.EXPIRED
    raw = httpx.get(f"{server.url}/v1/memories/{by_rest.id}", params={"namespace": NS},
                    headers={"Authorization": f"Bearer {key}"}).json()
    assert raw["status"] == "expired" and raw["expires_at"] == by_rest.expires_at.isoformat()

    async def through_async() -> tuple[Status, list[str]]:
        async with AsyncGraphMemClient(server.url, key) as aclient:
            m = await aclient.get(by_mcp["id"], namespace=NS)
            hits = await aclient.retrieve("release freeze", namespace=NS)
            back = await aclient.restore(by_mcp["id"], namespace=NS, ttl=30)
            assert back.expires_at == server.clock.now + timedelta(seconds=30)
            return m.status, [r.id for r in hits]

    assert asyncio.run(through_async()) == (Status.EXPIRED, [lasting.id])
    restored = client.restore(by_rest.id, namespace=NS)  # no new ttl: it stays
    assert restored.status is Status.ACTIVE and restored.expires_at is None
    assert {r.id for r in client.retrieve("release freeze", namespace=NS)} == ids
    refreshed = client.update(lasting.id, namespace=NS, ttl=10)
    assert refreshed.expires_at == server.clock.now + timedelta(seconds=10)
    server.clock.advance(seconds=31)
    assert {r.id for r in client.retrieve("release freeze", namespace=NS)} == {by_rest.id}
    report = server.mem.maintain(NS)
    assert sorted(t.reason for t in report.transitions if t.kind.value == "expiry") == [
        "ttl", "ttl"]
    assert client.get(lasting.id, namespace=NS).status is Status.EXPIRED


@pytest.mark.parametrize("bad", [0, -1, "60", True, 1e12, None], ids=repr)
def test_a_bad_ttl_is_a_422_through_every_door_and_writes_nothing(server: Server,
                                                                  bad: Any) -> None:
    client = server.client([NS])
    key = client._http.headers["Authorization"]
    kept = client.store("a memory that stays as it is", namespace=NS, ttl=60)
    auth = {"Authorization": key}
    if bad is not None:  # null is no ttl at all on store and patch: accepted, not bad
        for body in ({"namespace": NS, "content": "a new note", "ttl": bad},
                     {"namespace": NS, "items": [{"content": "fine"},
                                                 {"content": "bad", "ttl": bad}]}):
            r = httpx.post(f"{server.url}/v1/memories", json=body, headers=auth)
            assert r.status_code == 422, r.text
        r = httpx.patch(f"{server.url}/v1/memories/{kept.id}", params={"namespace": NS},
                        json={"ttl": bad, "topic": "changed"}, headers=auth)
        assert r.status_code == 422, r.text
        with pytest.raises(ValidationError):
            client.store("a new note", namespace=NS, ttl=bad)
        with pytest.raises(ValidationError):
            client.update(kept.id, namespace=NS, ttl=bad)
        if not isinstance(bad, str | bool):  # MCP's tool schema reads "60" and true as numbers
            refused = _mcp(server, "remember", {"content": "a new note", "namespace": NS,
                                                "ttl": bad})
            assert "ttl must be" in refused["error"]
    for text in ("0", "-1", "nan", "inf", "sixty"):
        r = httpx.post(f"{server.url}/v1/memories/{kept.id}/restore",
                       params={"namespace": NS, "ttl": text}, headers=auth)
        assert r.status_code == 422, (text, r.text)
    r = httpx.post(f"{server.url}/v1/memories", headers={**auth, "content-type":
                                                         "application/json"},
                   content=b'{"namespace": "ttl-doors", "content": "x", "ttl": NaN}')
    assert r.status_code == 422, r.text
    after = client.list_page(namespace=NS, status=None).items
    assert [m.id for m in after] == [kept.id]
    assert after[0].topic is None and after[0].expires_at == kept.expires_at
