"""The MCP server, driven by the official SDK's own client: in-process and over stdio."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from mcp import Client

from graphmem import GraphMemory
from graphmem.api.mcp import build_server
from tests.conftest import Clock, FakeEmbedder

TOOLS = {"remember", "recall", "recall_index", "timeline", "entries", "relate", "feedback",
         "pin"}


def _text(result: Any) -> str:
    """The text of a tool result's first content block."""
    text = getattr(result.content[0], "text", None)
    assert isinstance(text, str), result.content
    return text


def _payload(result: Any) -> Any:
    content = result.structured_content
    if content:
        return content.get("result", content)
    return json.loads(result.content[0].text)


def test_tools_in_process(tmp_path: Path) -> None:
    with GraphMemory.open(tmp_path, clock=Clock(), embedder=FakeEmbedder()) as mem:
        server = build_server(mem, ["agent"])

        async def go() -> None:
            async with Client(server) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert names >= TOOLS
                a = _payload(await client.call_tool("remember", {
                    "content": "deploy failed: migration locked users", "namespace": "agent",
                    "importance": 0.7}))
                b = _payload(await client.call_tool("remember", {
                    "content": "split work into batches", "namespace": "agent"}))
                rel = _payload(await client.call_tool("relate", {
                    "source_id": a["id"], "target_id": b["id"], "type": "CAUSES",
                    "namespace": "agent"}))
                assert rel["type"] == "CAUSES"
                hits = _payload(await client.call_tool("recall", {
                    "query": "why did the deploy fail", "namespace": "agent"}))
                assert hits[0]["memory"]["id"] == a["id"]
                index = _payload(await client.call_tool("recall_index", {
                    "query": "deploy", "namespace": "agent"}))
                assert index[0]["id"] == a["id"] and "token_estimate" in index[0]
                full = _payload(await client.call_tool("entries", {
                    "ids": [b["id"]], "namespace": "agent"}))
                assert full[0]["content"] == "split work into batches"
                around = _payload(await client.call_tool("timeline", {
                    "anchor_id": a["id"], "namespace": "agent"}))
                assert a["id"] in [m["id"] for m in around]
                fb = _payload(await client.call_tool("feedback", {
                    "id": b["id"], "namespace": "agent", "outcome": "success"}))
                assert fb["success_count"] == 1
                pinned = _payload(await client.call_tool("pin", {"id": a["id"],
                                                                 "namespace": "agent"}))
                assert pinned["pinned"] is True
                refused = await client.call_tool("remember", {"content": "x",
                                                              "namespace": "other"})
                assert refused.is_error and "does not serve" in _text(refused)
                bad = await client.call_tool("remember", {"content": "", "namespace": "agent"})
                assert bad.is_error and "empty" in _text(bad)

        asyncio.run(go())
        assert mem.stats(namespace="agent")["memories"] == 2
        assert mem.stats(namespace="other")["memories"] == 0


def test_agent_tools_in_process(tmp_path: Path) -> None:
    """Types, listing, history, supersede, tool capture, consensus / dissent and streams."""
    with GraphMemory.open(tmp_path, clock=Clock(), embedder=FakeEmbedder()) as mem:
        server = build_server(mem, ["agent"])

        async def go() -> None:
            async with Client(server) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert names >= {"list_memories", "history", "supersede", "capture_tool",
                                 "record_consensus", "record_dissent", "find_similar",
                                 "stream"}

                async def call(name: str, **args: Any) -> Any:
                    return _payload(await client.call_tool(name, {"namespace": "agent"}
                                                           | args))

                d = await call("remember", content="we ship on tuesdays", type="decision")
                assert (d["type"], d["importance"]) == ("decision", 0.7)
                page = await call("list_memories", type="decision")
                assert [m["id"] for m in page["items"]] == [d["id"]]
                new = await call("remember", content="we ship on wednesdays now")
                closed = await call("supersede", old_id=d["id"], new_id=new["id"])
                assert closed["superseded_by"] == new["id"]
                steps = await call("history", id=d["id"])
                assert [s["event"] for s in steps] == ["created", "supersede"]
                cap = await call("capture_tool", agent="coder", tool="Bash", input="ls",
                                 output="a", ok=True)
                assert cap["captured"] and cap["memory"]["tier"] == "fast"
                flow = await call("stream", agent="coder")
                assert [m["id"] for m in flow["items"]] == [cap["memory"]["id"]]
                c = await call("record_consensus", topic="ship day", conclusion="wednesday",
                               participants=["a", "b"])
                x = await call("record_dissent", topic="ship day", agent="c",
                               position="friday", against=c["id"])
                found = await call("find_similar", topic="ship day")
                assert found[0]["consensus"]["id"] == c["id"]
                assert [m["id"] for m in found[0]["dissent"]] == [x["id"]]
                typed = await call("recall", query="ship", type=["decision"],
                                   record_access=False)
                assert [r["memory"]["id"] for r in typed] == [d["id"]]
                then = await call("recall", query="ship", record_access=False,
                                  as_of="2000-01-01T00:00:00+00:00")  # nothing known then
                assert then == []
                idx = await call("recall_index", query="ship", type=["decision"])
                assert [e["id"] for e in idx] == [d["id"]]
                summary = await call("summarize", agent="coder")
                assert summary["ids"] == [cap["memory"]["id"]]
                read = await call("entries", ids=[new["id"]], agent="coder")
                told = await call("feedback", id=new["id"], useful=True, agent="qa")
                assert set(read[0]["used_by"]) == {"coder"}
                assert set(told["used_by"]) == {"coder", "qa"}
                bad = await client.call_tool("list_memories", {"namespace": "agent",
                                                               "cursor": "nonsense"})
                assert bad.is_error and "cursor" in _text(bad)

        asyncio.run(go())


def test_stdio_server(tmp_path: Path) -> None:
    from mcp import StdioServerParameters

    gm = (shutil.which("graphmem", path=str(Path(sys.executable).parent))
          or shutil.which("graphmem"))
    assert gm
    params = StdioServerParameters(command=gm, args=["mcp", "--data", str(tmp_path), "--create",
                                                     "-n", "team"])

    async def go() -> Any:
        async with Client(params, read_timeout_seconds=120) as client:
            await client.call_tool("remember", {"content": "the VPN password rotates monthly",
                                                "namespace": "team"})
            return _payload(await client.call_tool("recall", {"query": "VPN password",
                                                              "namespace": "team"}))

    hits = asyncio.run(go())
    assert hits[0]["memory"]["content"] == "the VPN password rotates monthly"


def test_streamable_http_behind_api_keys(tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.api.test_rest import Server

    with Server(tmp_path) as srv:
        writer = srv.keys.create(["team"], "writer")[1]
        reader = srv.keys.create(["team"], "reader")[1]

        async def call(key: str | None, tool: str, args: dict[str, Any]) -> Any:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
                    Client(streamable_http_client(f"{srv.url}/mcp/", http_client=http)) as c:
                return await c.call_tool(tool, args)

        stored = asyncio.run(call(writer, "remember", {"content": "standup moved to 10:00",
                                                       "namespace": "team"}))
        assert not stored.is_error
        hits = _payload(asyncio.run(call(reader, "recall", {"query": "standup",
                                                            "namespace": "team"})))
        assert hits[0]["memory"]["content"] == "standup moved to 10:00"
        denied = asyncio.run(call(reader, "remember", {"content": "x", "namespace": "team"}))
        assert denied.is_error and "writer role" in denied.content[0].text
        foreign = asyncio.run(call(writer, "recall", {"query": "x", "namespace": "other"}))
        assert foreign.is_error and "may not use" in foreign.content[0].text
        import httpx

        assert httpx.post(f"{srv.url}/mcp/", json={}).status_code == 401
