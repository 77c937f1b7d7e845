"""The session-backed adapters (OpenAI Agents ``GraphMemSession``, LangChain
``GraphMemChatHistory``, the LlamaIndex block) on every store the facade runs on: SQLite,
FalkorDB and Neo4j keep the items' order (event times one millisecond apart), page through a
long session with the cursor, and delete what they pop and clear."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from llama_index.core.llms import ChatMessage

from graphmem import GraphMemory
from graphmem.integrations import _log
from graphmem.integrations.langchain import GraphMemChatHistory
from graphmem.integrations.llamaindex import GraphMemBlock
from graphmem.integrations.openai_agents import GraphMemSession
from tests.conftest import Clock, FakeEmbedder


def check_sessions(mem: GraphMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_log, "PAGE", 3)  # a long session: read a page at a time
    items: list[Any] = [{"role": "user" if i % 2 else "assistant", "content": f"turn {i}"}
                        for i in range(8)]
    items[5] = {"role": "user", "content": "turn 1"}  # a repeat stays its own item

    async def chat() -> None:
        s = GraphMemSession("chat-1", mem, namespace="ops")
        await s.add_items(items[:5])
        mem.store("a note of the session, not an item", namespace="ops", session_id="chat-1")
        await s.add_items(items[5:])
        assert await s.get_items() == items
        assert await s.get_items(limit=4) == items[4:]
        assert await s.pop_item() == items[-1]
        await s.clear_session()
        assert await s.get_items() == []

    asyncio.run(chat())
    left = mem.list_page(namespace="ops", session_id="chat-1", status=None).items
    assert [m.content for m in left] == ["a note of the session, not an item"]

    history = GraphMemChatHistory("chat-2", mem, namespace="ops")
    sent = [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1"), HumanMessage("hi")]
    history.add_messages(sent)
    assert history.messages == sent

    block = GraphMemBlock(mem=mem, namespace="ops")
    said = [ChatMessage(role="user", content="the build broke at noon"),
            ChatMessage(role="assistant", content="I will look at the build")]
    asyncio.run(block.aput(said, session_id="chat-3"))
    kept = mem.list_page(namespace="ops", session_id="chat-3", order="asc").items
    assert [m.content for m in kept] == ["user: the build broke at noon",
                                         "assistant: I will look at the build"]


def test_sessions_keep_order_page_and_delete_on_sqlite(
        tmp_path: Path, clock: Clock, fake_embedder: FakeEmbedder,
        monkeypatch: pytest.MonkeyPatch) -> None:
    with GraphMemory.open(tmp_path / "data", clock=clock, embedder=fake_embedder) as mem:
        check_sessions(mem, monkeypatch)


@pytest.mark.slow  # Neo4j: ~40 s to start and ~80 s for the test on a loaded 2-core machine
def test_sessions_keep_order_page_and_delete_on_every_store(
        mem: GraphMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    check_sessions(mem, monkeypatch)
