"""The session context (issue 48) over real HTTP: REST routes, MCP behind API keys and both
Python clients agree - values, the cap, and expiry on the server's injected clock; the key's
namespaces and role scope every route; bad input is a 4xx that writes nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from mcp import Client

from graphmem.client import AsyncGraphMemClient, GraphMemClient
from graphmem.errors import ForbiddenError, LimitExceededError, ValidationError
from tests.api.test_rest import Server

NS = "team"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("sessions")) as srv:
        yield srv


def _h(server: Server, role: str = "writer", namespaces: list[str] | None = None
       ) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.keys.create(namespaces or [NS], role)[1]}"}


def _url(server: Server, session: str, tail: str) -> str:
    return f"{server.url}/v1/sessions/{session}{tail}"


def test_context_and_messages_over_rest(server: Server) -> None:
    h, q = _h(server), {"namespace": NS}
    put = httpx.put(_url(server, "rest-1", "/context/plan"), headers=h, params=q,
                    json={"value": {"step": 1}, "ttl": 120})
    assert put.status_code == 200, put.text
    assert put.json()["value"] == {"step": 1}
    assert datetime.fromisoformat(put.json()["expires_at"]) == server.clock.now + timedelta(
        seconds=120)
    assert httpx.put(_url(server, "rest-1", "/context/user"), headers=h, params=q,
                     json={"value": "ada"}).status_code == 200
    got = httpx.get(_url(server, "rest-1", "/context/plan"), headers=h, params=q)
    assert got.status_code == 200 and got.json()["value"] == {"step": 1}
    listed = httpx.get(_url(server, "rest-1", "/context"), headers=h, params=q).json()
    assert [(e["key"], e["value"]) for e in listed["entries"]] == [
        ("plan", {"step": 1}), ("user", "ada")]
    for i in range(3):
        added = httpx.post(_url(server, "rest-1", "/messages"), headers=h, params=q,
                           json={"message": {"role": "user", "content": f"turn {i}"},
                                 "ttl": 60})
        assert added.status_code == 201, added.text
    newest = httpx.get(_url(server, "rest-1", "/messages"), headers=h,
                       params=q | {"limit": 2}).json()
    assert [m["content"] for m in newest["messages"]] == ["turn 1", "turn 2"]
    server.clock.advance(seconds=60)  # the messages' TTL; the context's is 120 s / 1 h
    assert httpx.get(_url(server, "rest-1", "/messages"), headers=h,
                     params=q).json()["messages"] == []
    server.clock.advance(seconds=60)
    missing = httpx.get(_url(server, "rest-1", "/context/plan"), headers=h, params=q)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert httpx.delete(_url(server, "rest-1", "/context/user"), headers=h,
                        params=q).json() == {"deleted": 1}
    assert httpx.delete(_url(server, "rest-1", "/context"), headers=h,
                        params=q).json() == {"deleted": 1}  # the expired entry's row
    assert httpx.delete(_url(server, "rest-1", "/messages"), headers=h,
                        params=q).json() == {"deleted": 3}


def test_rest_mcp_and_both_clients_agree_on_expiry(server: Server) -> None:
    key = server.keys.create([NS], "writer")[1]
    sync = GraphMemClient(server.url, key)
    sync.context_set("agree", "short", [1, 2], namespace=NS, ttl=30)
    sync.context_set("agree", "long", {"a": "é"}, namespace=NS, ttl=timedelta(minutes=10))
    sync.message_add("agree", "kept a while", namespace=NS, ttl=30)

    def everyone() -> list[tuple[Any, Any, Any]]:
        async def by_async() -> tuple[Any, Any, Any]:
            async with AsyncGraphMemClient(server.url, key) as client:
                return (await client.context_get("agree", "short", namespace=NS),
                        await client.context_list("agree", namespace=NS),
                        await client.messages("agree", namespace=NS))

        async def by_mcp() -> tuple[Any, Any, Any]:
            got = await _mcp(server, key, "context_get", session_id="agree", key="short")
            listed = await _mcp(server, key, "context_list", session_id="agree")
            said = await _mcp(server, key, "messages", session_id="agree")
            return got["value"], listed, said

        rest = httpx.get(_url(server, "agree", "/context/short"), params={"namespace": NS},
                         headers={"Authorization": f"Bearer {key}"})
        return [(sync.context_get("agree", "short", namespace=NS),
                 sync.context_list("agree", namespace=NS),
                 sync.messages("agree", namespace=NS)),
                asyncio.run(by_async()), asyncio.run(by_mcp()),
                (rest.json()["value"] if rest.status_code == 200 else None,
                 server.mem.context_list("agree", namespace=NS),
                 server.mem.messages("agree", namespace=NS))]

    before = everyone()
    assert before == [([1, 2], {"long": {"a": "é"}, "short": [1, 2]}, ["kept a while"])] * 4
    server.clock.advance(seconds=30)
    assert everyone() == [(None, {"long": {"a": "é"}}, [])] * 4
    server.clock.advance(minutes=10)
    assert everyone() == [(None, {}, [])] * 4
    sync.close()


def _text(result: Any) -> str:
    return str(getattr(result.content[0], "text", ""))


async def _mcp(server: Server, api_key: str, tool: str, /, **args: Any) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {api_key}"},
                                  timeout=60) as http, \
            Client(streamable_http_client(f"{server.url}/mcp/", http_client=http)) as c:
        result = await c.call_tool(tool, {"namespace": NS} | args)
    if result.is_error:
        return result
    content = result.structured_content
    if content:
        return content.get("result", content)
    return json.loads(getattr(result.content[0], "text", "null"))


def test_mcp_tools_set_delete_and_scoping(server: Server) -> None:
    writer = server.keys.create([NS], "writer")[1]
    reader = server.keys.create([NS], "reader")[1]
    outsider = server.keys.create(["elsewhere"], "admin")[1]
    entry = asyncio.run(_mcp(server, writer, "context_set", session_id="m-1", key="task",
                             value={"state": "running"}, ttl=300))
    assert entry["value"] == {"state": "running"}
    assert asyncio.run(_mcp(server, writer, "message_add", session_id="m-1",
                            message={"role": "tool", "content": "ok"}))["expires_at"]
    assert asyncio.run(_mcp(server, reader, "context_get", session_id="m-1",
                            key="task"))["found"] is True
    denied = asyncio.run(_mcp(server, reader, "context_set", session_id="m-1", key="task",
                              value="overwritten"))
    assert denied.is_error and "writer role" in _text(denied)
    foreign = asyncio.run(_mcp(server, outsider, "context_list", session_id="m-1"))
    assert foreign.is_error and "may not use" in _text(foreign)
    bad = asyncio.run(_mcp(server, writer, "context_set", session_id="m-1", key="a b",
                           value=1))
    assert bad.is_error and "invalid key" in _text(bad)
    assert server.mem.context_list("m-1", namespace=NS) == {"task": {"state": "running"}}
    assert asyncio.run(_mcp(server, writer, "context_delete", session_id="m-1",
                            key="task")) == {"deleted": 1}
    assert asyncio.run(_mcp(server, writer, "context_get", session_id="m-1",
                            key="task"))["found"] is False


def test_the_key_scopes_every_route(server: Server) -> None:
    server.mem.context_set("scoped", "k", "secret", namespace=NS)
    server.mem.message_add("scoped", "hello", namespace=NS)
    reader, outsider = _h(server, "reader"), _h(server, "admin", ["elsewhere"])
    q = {"namespace": NS}
    assert httpx.get(_url(server, "scoped", "/context/k"), headers=reader,
                     params=q).json()["value"] == "secret"
    for method, tail, body in (("PUT", "/context/k", {"value": "x"}),
                               ("DELETE", "/context/k", None), ("DELETE", "/context", None),
                               ("POST", "/messages", {"message": "x"}),
                               ("DELETE", "/messages", None)):
        r = httpx.request(method, _url(server, "scoped", tail), headers=reader, params=q,
                          json=body)
        assert r.status_code == 403, (method, tail, r.text)
    for method, tail, body in (("GET", "/context", None), ("GET", "/context/k", None),
                               ("GET", "/messages", None),
                               ("PUT", "/context/k", {"value": "x"})):
        r = httpx.request(method, _url(server, "scoped", tail), headers=outsider,
                          params=q, json=body)
        assert r.status_code == 403, (method, tail, r.text)
    assert httpx.get(_url(server, "scoped", "/context"), params=q).status_code == 401
    assert server.mem.context_list("scoped", namespace=NS) == {"k": "secret"}
    assert server.mem.messages("scoped", namespace=NS) == ["hello"]
    with pytest.raises(ForbiddenError):
        GraphMemClient(server.url, server.keys.create([NS], "reader")[1]).context_set(
            "scoped", "k", "x", namespace=NS)


@pytest.mark.parametrize(("method", "tail", "body", "code"), [
    ("PUT", "/context/a%20b", {"value": 1}, "invalid_request"),
    ("PUT", "/context/k", {"value": 1, "ttl": 0}, "invalid_request"),
    ("PUT", "/context/k", {"value": 1, "ttl": 31 * 86400}, "invalid_request"),
    ("PUT", "/context/k", {"value": 1, "ttl": "soon"}, "invalid_request"),
    ("PUT", "/context/k", {"ttl": 5}, "invalid_request"),
    ("PUT", "/context/k", {"value": 1, "extra": True}, "invalid_request"),
    ("PUT", "/context/k", {"value": "x" * 40_000}, "limit_exceeded"),
    ("POST", "/messages", {"message": "é" * 20_000}, "limit_exceeded"),
    ("POST", "/messages", {}, "invalid_request"),
    ("GET", "/messages", None, "invalid_input"),
])
def test_bad_input_is_a_422_that_writes_nothing(server: Server, method: str, tail: str,
                                                body: Any, code: str) -> None:
    r = httpx.request(method, _url(server, "bad", tail), headers=_h(server),
                      params={"namespace": NS} | ({"limit": 0} if method == "GET" else {}),
                      json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == code
    assert server.mem.context_list("bad", namespace=NS) == {}
    assert server.mem.messages("bad", namespace=NS) == []


def test_clients_check_names_before_sending(server: Server) -> None:
    client = GraphMemClient(server.url, server.keys.create([NS], "writer")[1])
    with pytest.raises(ValidationError):
        client.context_set("a/b", "k", 1, namespace=NS)
    with pytest.raises(ValidationError):
        client.context_get("s", "../k", namespace=NS)
    with pytest.raises(LimitExceededError):
        client.context_set("s", "k", "x" * 40_000, namespace=NS)
    assert client.context_get("s", "never-set", namespace=NS) is None
    assert client.context_delete("s", namespace=NS) == 0
    client.close()
