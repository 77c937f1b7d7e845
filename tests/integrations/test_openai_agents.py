"""The OpenAI Agents SDK adapter: ``GraphMemSession`` as the SDK's ``Session`` (round trip,
order, pop, clear, limits, scoping, bad input) on the embedded store and through both
clients against a real server; inside a real ``Runner.run`` driven by the SDK's own
``ScriptedModel`` (no network, no LLM), with ``memory_tools`` as the agent's tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, Runner
from agents.memory import Session
from agents.testing import ScriptedModel, assistant_message, function_call

from graphmem.errors import ForbiddenError, InvalidNamespaceError, ValidationError
from graphmem.integrations import _log
from graphmem.integrations.openai_agents import ITEM_KEY, GraphMemSession, memory_tools
from graphmem.models import RelationType
from tests.integrations.backends import KINDS, Backends, play, server_fixture

server = server_fixture()

CHAT: list[Any] = [{"role": "user", "content": "I like green tea"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Noted: green tea",
                                           "annotations": []}]},
        {"role": "user", "content": "ok"},
        {"type": "function_call", "call_id": "c1", "name": "recall",
         "arguments": "{\"query\":\"tea\"}"},
        {"type": "function_call_output", "call_id": "c1", "output": "- green tea"},
        {"role": "user", "content": "ok"}]




@pytest.mark.parametrize("kind", KINDS)
def test_items_round_trip_in_order_and_pop_and_clear(kind: str, tmp_path: Path,
                                                     request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        s = GraphMemSession("chat-1", store, namespace="agents")
        assert isinstance(s, Session)
        assert await s.get_items() == [] and await s.pop_item() is None
        await s.add_items(CHAT[:2])
        await s.add_items(CHAT[2:])  # a second batch in the same clock instant
        assert await s.get_items() == CHAT  # whole, in order, the repeated "ok" twice
        assert await s.get_items(limit=2) == CHAT[-2:]
        assert await s.get_items(limit=100) == CHAT
        assert await s.pop_item() == CHAT[-1]
        assert await s.get_items() == CHAT[:-1]
        await s.add_items([{"role": "user", "content": "again"}])
        assert (await s.get_items())[-2:] == [CHAT[-2], {"role": "user", "content": "again"}]
        await s.clear_session()
        assert await s.get_items() == []
        assert b.direct is not None
        assert b.direct.list_page(namespace="agents", status=None).items == []

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_items_are_a_linked_recallable_session(kind: str, tmp_path: Path,
                                               request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        s = GraphMemSession("chat-1", store, namespace="agents")
        await s.add_items(CHAT[:3])
        mem = b.direct
        assert mem is not None
        rows = mem.list_page(namespace="agents", session_id="chat-1", order="asc").items
        assert [r.content for r in rows] == [
            "user: I like green tea [chat-1#1]", "assistant: Noted: green tea [chat-1#2]",
            "user: ok [chat-1#3]"]
        assert [json.loads(r.metadata[ITEM_KEY]) for r in rows] == CHAT[:3]
        follows = {(e.source_id, e.target_id) for r in rows
                   for e in mem.relations(r.id, namespace="agents")
                   if e.type is RelationType.FOLLOWS}
        assert follows == {(rows[0].id, rows[1].id), (rows[1].id, rows[2].id)}
        hits = mem.retrieve("I like tea", namespace="agents", filters={"session_id": "chat-1"})
        assert rows[0].id in [h.memory.id for h in hits]

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_sessions_are_scoped_by_id_and_namespace(kind: str, tmp_path: Path,
                                                 request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        a = GraphMemSession("chat-1", store, namespace="agents")
        other = GraphMemSession("chat-2", store, namespace="agents")
        elsewhere = GraphMemSession("chat-1", store, namespace="agents-b")
        await a.add_items(CHAT[:1])
        await other.add_items(CHAT[1:2])
        await elsewhere.add_items(CHAT[2:3])
        assert b.direct is not None  # a memory of the session not written as an item
        b.direct.store("a note of the same session", namespace="agents", session_id="chat-1")
        assert await a.get_items() == CHAT[:1]
        assert await a.get_items(limit=1) == CHAT[:1]
        assert await other.get_items() == CHAT[1:2]
        assert await elsewhere.get_items() == CHAT[2:3]
        await a.clear_session()
        assert await other.get_items() == CHAT[1:2]
        assert await elsewhere.get_items() == CHAT[2:3]
        notes = b.direct.list_page(namespace="agents", session_id="chat-1").items
        assert [m.content for m in notes] == ["a note of the same session"]

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_is_a_typed_error_and_stores_nothing(kind: str, tmp_path: Path,
                                                       request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        s = GraphMemSession("chat-1", store, namespace="agents")
        await s.add_items(CHAT[:1])
        for bad in (["not an item"], [CHAT[1], {"role": "user", "content": "bell \x07"}],
                    [{"role": "user", "content": "x", "when": object()}],
                    [{"role": "user", "content": "y" * 40_000}]):
            with pytest.raises(ValidationError):
                await s.add_items(bad)  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            await s.get_items(limit=-1)
        assert await s.get_items() == CHAT[:1]
        for args in (("", store), ("x" * 300, store)):
            with pytest.raises(ValidationError):
                GraphMemSession(*args, namespace="agents")
        with pytest.raises(InvalidNamespaceError):
            GraphMemSession("chat-1", store, namespace="no spaces")
        if kind != "embedded":  # the key may not write this namespace: a 403, nothing kept
            with pytest.raises(ForbiddenError):
                await GraphMemSession("chat-1", store, namespace="outside").add_items(CHAT[:1])
            assert b.direct is not None
            assert b.direct.list_page(namespace="outside", status=None).items == []

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", ["embedded", "async_client"])
def test_concurrent_adds_on_one_session_keep_every_item(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        s = GraphMemSession("chat-1", store, namespace="agents")
        batches: list[list[Any]] = [
            [{"role": "user", "content": f"message {i}.{j}"} for j in range(2)]
            for i in range(6)]
        await asyncio.gather(*(s.add_items(batch) for batch in batches))
        items: list[Any] = await s.get_items()
        assert len(items) == 12  # none reinforced another through a shared turn
        for batch in batches:  # each batch contiguous and in its order
            at = items.index(batch[0])
            assert items[at:at + 2] == batch

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", ["embedded", "client"])
def test_a_runner_keeps_its_conversation_and_uses_the_memory_tools(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        model = ScriptedModel([
            [function_call("remember", {"content": "the user drinks green tea",
                                        "importance": 0.8}, call_id="c1")],
            [assistant_message("I will remember that.")],
            [function_call("recall", {"query": "what does the user drink?"}, call_id="c2")],
            [assistant_message("Green tea.")]])
        agent = Agent(name="helper", instructions="Be brief.", model=model,
                      tools=memory_tools(store, namespace="agents", session_id="chat-1"))
        session = GraphMemSession("chat-1", store, namespace="agents")
        config = RunConfig(tracing_disabled=True)
        first = await Runner.run(agent, "I drink green tea", session=session,
                                 run_config=config)
        assert first.final_output == "I will remember that."
        second = await Runner.run(agent, "What do I drink?", session=session,
                                  run_config=config)
        assert second.final_output == "Green tea."
        # the second run's first model call saw the first run's conversation
        seen = json.dumps(model.calls[2].input)
        assert "I drink green tea" in seen and "I will remember that." in seen
        # the recall tool answered with the remembered memory
        assert "- the user drinks green tea" in json.dumps(model.calls[3].input)
        items: list[Any] = await session.get_items()
        kinds = [i.get("type") or i.get("role") for i in items]
        assert kinds[0] == "user" and kinds.count("function_call") == 2
        assert kinds.count("function_call_output") == 2 and len(items) == 8
        assert items[-1]["content"][0]["text"] == "Green tea."
        assert b.direct is not None
        facts = b.direct.list_page(namespace="agents", session_id="chat-1").items
        assert "the user drinks green tea" in [m.content for m in facts]

    play(kind, tmp_path, request, scenario)


def test_the_tools_report_bad_arguments_and_store_nothing(tmp_path: Path,
                                                         request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        from agents.tool_context import ToolContext

        recall, remember = memory_tools(store, namespace="agents")
        assert isinstance(recall, FunctionTool) and isinstance(remember, FunctionTool)
        assert (recall.name, remember.name) == ("recall", "remember")

        def ctx(name: str, args: str) -> ToolContext[None]:
            return ToolContext(context=None, tool_name=name, tool_call_id="t1",
                               tool_arguments=args)

        blank = '{"content": " ", "importance": 0.5}'
        out = await remember.on_invoke_tool(ctx("remember", blank), blank)
        assert out == "graphmem refused the call: content is empty"
        out = await remember.on_invoke_tool(ctx("remember", "{}"),
                                            '{"content": "tea", "importance": 7}')
        assert str(out).startswith("graphmem refused the call: importance")
        assert b.direct is not None
        assert b.direct.list_page(namespace="agents", status=None).items == []
        stored = await remember.on_invoke_tool(ctx("remember", "{}"),
                                               '{"content": "tea at four", "importance": 0.5}')
        assert str(stored).startswith("remembered as ")
        assert "- tea at four" in str(await recall.on_invoke_tool(
            ctx("recall", "{}"), '{"query": "tea"}'))

    play("embedded", tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_a_long_session_is_read_a_page_at_a_time(kind: str, tmp_path: Path,
                                                 request: pytest.FixtureRequest,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_log, "PAGE", 3)  # the client's list_page cursor, several pages

    async def scenario(store: Any, b: Backends) -> None:
        s = GraphMemSession("chat-1", store, namespace="agents")
        items: list[Any] = [{"role": "user", "content": f"line {i}"} for i in range(10)]
        await s.add_items(items[:4])
        assert b.direct is not None  # memories of the session that are not items, between
        for i in range(4):
            b.direct.store(f"note {i}", namespace="agents", session_id="chat-1")
        await s.add_items(items[4:])
        assert await s.get_items() == items
        assert await s.get_items(limit=7) == items[3:]

    play(kind, tmp_path, request, scenario)
