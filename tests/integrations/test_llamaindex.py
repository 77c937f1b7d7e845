"""The LlamaIndex adapter: ``GraphMemBlock`` inside a real ``Memory`` (what it flushes out of
its short-term history lands in graphmem as the chat's session, in order; what is relevant
comes back in the system message), scoping, truncation and bad input; ``GraphMemRetriever``'s
``NodeWithScore``s. On the embedded store and through both clients against a real server,
with every connection off loopback refused (nothing may download: tokenizer, nltk data)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory
from llama_index.core.schema import MetadataMode

from graphmem.errors import ForbiddenError, InvalidNamespaceError, LimitExceededError
from graphmem.integrations.llamaindex import GraphMemBlock, GraphMemRetriever
from graphmem.models import RelationType
from tests.integrations.backends import KINDS, Backends, play, server_fixture

server = server_fixture()

CHAT = [("user", "I like green tea in the morning"), ("assistant", "Noted, green tea it is"),
        ("user", "my cat is called Miso"), ("assistant", "A fine name for a cat"),
        ("user", "the weather is grey today"), ("assistant", "Grey skies indeed"),
        ("user", "what tea do I like?")]


LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any look-up or connection off loopback fails the test (a download would need one)."""
    connect, resolve = socket.socket.connect, socket.getaddrinfo

    def loopback_only(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] not in LOOPBACK:
            raise AssertionError(f"a connection to {address} was attempted")
        return connect(self, address)

    def resolve_loopback(host: Any, *args: Any, **kw: Any) -> Any:
        if host not in LOOPBACK:
            raise AssertionError(f"{host} was looked up")
        return resolve(host, *args, **kw)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    monkeypatch.setattr(socket, "getaddrinfo", resolve_loopback)
    yield




@pytest.mark.parametrize("kind", KINDS)
def test_memory_flushes_into_graphmem_and_recalls_what_is_relevant(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        memory = Memory.from_defaults(  # its own bundled tokenizer: no download
            session_id="chat-1", token_limit=60, token_flush_size=20,
            chat_history_token_ratio=0.5,
            memory_blocks=[GraphMemBlock(mem=store, namespace="agents", limit=2)])
        for role, text in CHAT:
            await memory.aput(ChatMessage(role=role, content=text))
        assert b.direct is not None
        kept = b.direct.list_page(namespace="agents", session_id="chat-1", order="asc").items
        assert [m.content for m in kept] == [f"{r}: {t}" for r, t in CHAT[:4]]  # in order
        assert [m.metadata["role"] for m in kept] == ["user", "assistant"] * 2
        follows = {(e.source_id, e.target_id) for m in kept
                   for e in b.direct.relations(m.id, namespace="agents")
                   if e.type is RelationType.FOLLOWS}
        assert follows == {(kept[i].id, kept[i + 1].id) for i in range(3)}
        system, *recent = await memory.aget()
        assert system.role.value == "system"
        assert "- user: I like green tea in the morning" in str(system.content)
        assert "Miso" not in str(system.content)  # only the relevant two
        assert [m.content for m in recent] == [t for _, t in CHAT[4:]]

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_the_block_recalls_across_sessions_unless_told_not_to(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        wide = GraphMemBlock(mem=store, namespace="agents")
        narrow = GraphMemBlock(mem=store, namespace="agents", session_only=True)
        other_ns = GraphMemBlock(mem=store, namespace="agents-b")
        await wide.aput([ChatMessage(role="user", content="I like green tea")],
                        session_id="chat-1")
        await wide.aput([ChatMessage(role="user", content="I like green tea")],
                        session_id="chat-2")  # said again: the memory is reinforced
        assert b.direct is not None
        rows = b.direct.list_page(namespace="agents").items
        assert [(m.content, m.session_id) for m in rows] == [("user: I like green tea",
                                                              "chat-1")]
        ask = [ChatMessage(role="user", content="which tea?")]
        assert await wide.aget(ask, session_id="chat-3") == "- user: I like green tea"
        assert await narrow.aget(ask, session_id="chat-3") == ""
        assert await narrow.aget(ask, session_id="chat-1") == "- user: I like green tea"
        assert await other_ns.aget(ask) == ""
        assert await wide.aget([]) == "" and await wide.aget(
            [ChatMessage(role="user", content="  ")]) == ""
        await wide.aput([ChatMessage(role="user", content="")])  # nothing to keep
        assert len(b.direct.list_page(namespace="agents", status=None).items) == 1
        await wide.aput([ChatMessage(role="user", content="put outside any chat")])
        rows = b.direct.list_page(namespace="agents").items
        assert [m.session_id for m in rows if m.content.endswith("outside any chat")] == [None]

    play(kind, tmp_path, request, scenario)


def test_truncation_drops_the_weakest_lines() -> None:
    block = GraphMemBlock(mem=None)
    text = "- first memory\n- second memory\n- third memory"
    assert asyncio.run(block.atruncate(text, 3)) == "- first memory\n- second memory"
    assert asyncio.run(block.atruncate(text, 7)) == "- first memory"
    assert asyncio.run(block.atruncate(text, 100)) is None


@pytest.mark.parametrize("kind", KINDS)
def test_bad_input_is_a_typed_error_and_stores_nothing(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        with pytest.raises(InvalidNamespaceError):
            GraphMemBlock(mem=store, namespace="no spaces")
        with pytest.raises(LimitExceededError):
            GraphMemBlock(mem=store, limit=0)
        with pytest.raises(InvalidNamespaceError):
            GraphMemRetriever(store, namespace="")
        with pytest.raises(LimitExceededError):
            GraphMemRetriever(store, k=5000)
        if kind != "embedded":  # the key may not write there: a 403, nothing kept
            with pytest.raises(ForbiddenError):
                await GraphMemBlock(mem=store, namespace="outside").aput(
                    [ChatMessage(role="user", content="hello")])
            assert b.direct is not None
            assert b.direct.list_page(namespace="outside", status=None).items == []

    play(kind, tmp_path, request, scenario)


@pytest.mark.parametrize("kind", KINDS)
def test_the_retriever_gives_nodes_with_score_and_path(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    async def scenario(store: Any, b: Backends) -> None:
        mem = b.direct
        assert mem is not None
        failed = mem.store("the deploy failed on friday", namespace="agents")
        cause = mem.store("a schema migration locked the orders table", namespace="agents",
                          relations=[{"type": "CAUSES", "target_id": failed.id}])
        mem.store("the deploy failed again", namespace="agents-b")
        r = GraphMemRetriever(store, namespace="agents", k=3)
        nodes = await (r.aretrieve("why did the deploy fail?") if kind == "async_client"
                       else asyncio.to_thread(r.retrieve, "why did the deploy fail?"))
        assert [n.node.node_id for n in nodes] == [failed.id, cause.id]
        top, walked = nodes
        assert top.score is not None and walked.score is not None and top.score > walked.score
        assert top.node.get_content() == failed.content and top.node.metadata["path"] == "seed"
        assert walked.node.metadata["path_steps"] == [{"type": "CAUSES", "outgoing": False}]
        assert walked.node.metadata["terms"]["walk"] > 0
        # what an LLM reads of a node: its text and the short fields, not the score's parts
        assert "terms" not in walked.node.get_content(metadata_mode=MetadataMode.LLM)

    play(kind, tmp_path, request, scenario)
