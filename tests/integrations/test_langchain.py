"""The LangChain adapter: ``GraphMemChatHistory`` (message types and fields round-trip, order,
clear, scoping, bad input) and ``GraphMemRetriever`` (score, terms and walk path in each
``Document``'s metadata) on the embedded store and through both clients against a real
server; the history under ``RunnableWithMessageHistory`` with LangChain's own
``GenericFakeChatModel`` (no network, no LLM)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from graphmem.errors import (
    ForbiddenError,
    InvalidNamespaceError,
    LimitExceededError,
    ValidationError,
)
from graphmem.integrations.langchain import GraphMemChatHistory, GraphMemRetriever
from graphmem.models import RelationType
from tests.integrations.backends import KINDS, Backends, play, server_fixture

server = server_fixture()

CHAT: list[BaseMessage] = [
    SystemMessage("You are terse."),
    HumanMessage("I like green tea", id="h1", name="ana", additional_kwargs={"lang": "en"}),
    AIMessage("", tool_calls=[{"name": "recall", "args": {"query": "tea"}, "id": "t1"}],
              usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
              response_metadata={"model": "fake"}),
    ToolMessage("- green tea", tool_call_id="t1", name="recall"),
    AIMessage([{"type": "text", "text": "Green tea, noted."}]),
    HumanMessage("ok"),
    HumanMessage("ok")]




async def messages(h: GraphMemChatHistory, kind: str) -> list[BaseMessage]:
    # the sync methods run in a worker thread: they block, as LangChain's callers expect
    return await (h.aget_messages() if kind == "async_client"
                  else asyncio.to_thread(lambda: h.messages))


async def add(h: GraphMemChatHistory, kind: str, batch: list[BaseMessage]) -> None:
    await (h.aadd_messages(batch) if kind == "async_client"
           else asyncio.to_thread(h.add_messages, batch))


@pytest.mark.parametrize("kind", KINDS)
def test_messages_round_trip_with_their_types_and_fields(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        h = GraphMemChatHistory("chat-1", store, namespace="agents")
        assert await messages(h, kind) == []
        await add(h, kind, CHAT[:3])
        await add(h, kind, CHAT[3:])
        back = await messages(h, kind)
        assert back == CHAT  # every field, in order, the repeated "ok" twice
        assert [type(m) for m in back] == [type(m) for m in CHAT]
        assert await h.aget_messages() == CHAT
        await (h.aclear() if kind == "async_client" else asyncio.to_thread(h.clear))
        assert await messages(h, kind) == []
        assert b.direct is not None
        assert b.direct.list_page(namespace="agents", status=None).items == []

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_histories_are_scoped_and_their_messages_recallable(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        a = GraphMemChatHistory("chat-1", store, namespace="agents")
        other = GraphMemChatHistory("chat-2", store, namespace="agents")
        elsewhere = GraphMemChatHistory("chat-1", store, namespace="agents-b")
        await add(a, kind, CHAT[1:2])
        await add(other, kind, CHAT[5:6])
        await add(elsewhere, kind, CHAT[0:1])
        assert b.direct is not None
        b.direct.store("a note of the same session", namespace="agents", session_id="chat-1")
        await a.aclear()
        assert await messages(other, kind) == CHAT[5:6]
        assert await messages(elsewhere, kind) == CHAT[0:1]
        left = b.direct.list_page(namespace="agents", session_id="chat-1").items
        assert [m.content for m in left] == ["a note of the same session"]
        await add(a, kind, CHAT[1:3])
        hits = b.direct.retrieve("green tea", namespace="agents",
                                 filters={"session_id": "chat-1"})
        assert "human: I like green tea [chat-1#1]" in [h.memory.content for h in hits]

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_is_a_typed_error_and_stores_nothing(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        h = GraphMemChatHistory("chat-1", store, namespace="agents")
        for bad in ([CHAT[1], "not a message"], [HumanMessage("bell \x07")],
                    [HumanMessage("x", additional_kwargs={"when": object()})]):
            with pytest.raises(ValidationError):
                await h.aadd_messages(bad)  # type: ignore[arg-type]
        assert await h.aget_messages() == []
        with pytest.raises(InvalidNamespaceError):
            GraphMemChatHistory("chat-1", store, namespace="no spaces")
        with pytest.raises(ValidationError):
            GraphMemChatHistory("", store)
        if kind == "async_client":  # the sync methods cannot drive an async client
            with pytest.raises(ValidationError, match="async methods"):
                _ = h.messages
        if kind != "embedded":
            with pytest.raises(ForbiddenError):
                await GraphMemChatHistory("c", store, namespace="outside").aadd_messages(
                    CHAT[:1])
            assert b.direct is not None
            assert b.direct.list_page(namespace="outside", status=None).items == []

    play(kind, tmp_path, request, scenario)


# LangChain 1.x deprecates RunnableWithMessageHistory for LangGraph's persistence (GraphMemStore)
@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
@pytest.mark.parametrize("kind", ["embedded", "client"])
def test_a_chain_with_message_history_keeps_the_conversation(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        prompts: list[list[BaseMessage]] = []

        def seen(value: Any) -> Any:
            prompts.append(value.to_messages())
            return value

        model = GenericFakeChatModel(messages=iter(["Hello Ana.", "You are Ana."]))
        prompt = ChatPromptTemplate.from_messages(
            [("system", "Be brief."), MessagesPlaceholder("history"), ("human", "{input}")])
        chain = RunnableWithMessageHistory(
            prompt | RunnableLambda(seen) | model,
            lambda sid: GraphMemChatHistory(sid, store, namespace="agents"),
            input_messages_key="input", history_messages_key="history")
        config: Any = {"configurable": {"session_id": "chat-9"}}

        def talk() -> tuple[Any, Any]:
            return (chain.invoke({"input": "I am Ana"}, config),
                    chain.invoke({"input": "Who am I?"}, config))

        first, second = await asyncio.to_thread(talk)
        assert (first.content, second.content) == ("Hello Ana.", "You are Ana.")
        assert [m.content for m in prompts[1]] == ["Be brief.", "I am Ana", "Hello Ana.",
                                                   "Who am I?"]
        kept = GraphMemChatHistory("chat-9", store, namespace="agents")
        assert [(m.type, m.content) for m in await asyncio.to_thread(lambda: kept.messages)] \
            == [("human", "I am Ana"), ("ai", "Hello Ana."), ("human", "Who am I?"),
                ("ai", "You are Ana.")]

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_the_retriever_gives_documents_with_score_terms_and_path(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        mem = b.direct if kind == "embedded" else b.server.mem  # type: ignore[union-attr]
        assert mem is not None
        failed = mem.store("the deploy failed on friday", namespace="agents")
        cause = mem.store("a schema migration locked the orders table", namespace="agents",
                          relations=[{"type": "CAUSES", "target_id": failed.id}])
        mem.store("lunch is at noon", namespace="agents")
        mem.store("the deploy failed again", namespace="agents-b")
        r = GraphMemRetriever(mem=store, namespace="agents", k=3)
        docs = await (r.ainvoke("why did the deploy fail?") if kind == "async_client"
                      else asyncio.to_thread(r.invoke, "why did the deploy fail?"))
        by_id = {d.id: d for d in docs}
        assert docs[0].id == failed.id and docs[0].page_content == failed.content
        assert docs[0].metadata["path"] == "seed" and docs[0].metadata["path_steps"] == []
        walked = by_id[cause.id].metadata
        assert walked["path_nodes"] == [failed.id, cause.id]
        assert walked["path_steps"] == [{"type": RelationType.CAUSES.value, "outgoing": False}]
        assert walked["terms"]["walk"] > 0 and walked["score"] < docs[0].metadata["score"]
        assert set(docs[0].metadata["terms"]) >= {"semantic", "keyword", "walk"}
        assert "the deploy failed again" not in [d.page_content for d in docs]
        one = GraphMemRetriever(mem=store, namespace="agents", k=1,
                                filters={"session_id": "none-such"})
        assert await one.ainvoke("deploy") == []
        with pytest.raises(InvalidNamespaceError):
            GraphMemRetriever(mem=store, namespace="no spaces")
        with pytest.raises(LimitExceededError):
            GraphMemRetriever(mem=store, k=0)

    play(kind, tmp_path, request, scenario)
