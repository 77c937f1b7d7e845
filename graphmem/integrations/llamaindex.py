"""LlamaIndex on graphmem (``pip install "graphmem[llamaindex]"``): ``GraphMemBlock``, a
long-term memory block for its ``Memory`` (``llama_index.core.memory``), and
``GraphMemRetriever``, a ``BaseRetriever`` answering ``NodeWithScore``s.

The block takes the messages ``Memory`` flushes out of its short-term history (``put``)
and stores each as a memory of the chat's session; on ``get`` it recalls the memories most
relevant to the latest messages, from every session of the namespace (``session_only`` for
this chat's alone), through graphmem's whole pipeline. A message said again reinforces the
memory it repeats. The store may be a ``GraphMemory``, a ``GraphMemClient`` or an
``AsyncGraphMemClient``.

No data is downloaded: neither class tokenizes, and ``Memory.from_defaults`` reads its
tokenizer from the copy bundled with llama-index-core (or give it ``tokenizer_fn``).

"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, TextBlock
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from pydantic import Field, PrivateAttr, field_validator

from graphmem.integrations._log import STEP, arun, call, hit_fields, run
from graphmem.models import RetrievalResult, utcnow
from graphmem.rules import validation as v

#: how many characters a token is taken to be when the block's text must shrink
CHARS_PER_TOKEN = 4


def message_text(message: ChatMessage) -> str:
    return "".join(b.text for b in message.blocks if isinstance(b, TextBlock)).strip()


def _options(namespace: str, limit: int, filters: dict[str, Any] | None) -> dict[str, Any]:
    return {"namespace": namespace, "limit": limit, **({"filters": filters} if filters else {})}


class GraphMemBlock(BaseMemoryBlock[str]):
    """Long-term memory for ``Memory.from_defaults(memory_blocks=[GraphMemBlock(mem=mem)])``:
    the ``limit`` memories most relevant to the last ``context_window`` messages, one a line,
    best first.

    Example:
        >>> import asyncio, tempfile
        >>> from llama_index.core.llms import ChatMessage
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     block = GraphMemBlock(mem=mem, namespace="chat")
        ...     asyncio.run(block.aput([ChatMessage(role="user", content="I like green tea")]))
        ...     asyncio.run(block.aget([ChatMessage(role="user", content="green tea?")]))
        '- user: I like green tea'
    """

    name: str = Field(default="graphmem", description="The name of the memory block.")
    mem: Any = Field(description="a GraphMemory, GraphMemClient or AsyncGraphMemClient")
    namespace: str = "default"
    limit: int = 5
    context_window: int = 3
    session_only: bool = False
    _last: datetime | None = PrivateAttr(default=None)

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        return v.namespace(value)

    @field_validator("limit", "context_window")
    @classmethod
    def _counts(cls, value: int) -> int:
        return v.bounded(value, "limit", 1, 1000)

    async def _aget(self, messages: list[ChatMessage] | None = None,
                    session_id: str | None = None, **block_kwargs: Any) -> str:
        query = " ".join(t for t in map(message_text, (messages or [])[-self.context_window:])
                         if t)
        if not query:
            return ""
        scope = {"session_id": session_id} if self.session_only and session_id else None
        hits = await arun(call("retrieve", query, **_options(self.namespace, self.limit,
                                                             scope)), self.mem)
        return "\n".join(f"- {h.memory.content}" for h in hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        # an image or a bare tool call: nothing to recall
        texts = [(m, t) for m in messages if (t := message_text(m))]
        if not texts:
            return
        # a message's event time follows the one before it, so the session keeps its order
        clock = getattr(self.mem, "clock", utcnow)
        start = clock() if self._last is None else max(clock(), self._last + STEP)
        items = [{"content": f"{m.role.value}: {t}", "metadata": {"role": m.role.value},
                  "created_at": start + i * STEP,
                  "session_id": m.additional_kwargs.get("session_id")}  # Memory's chat, if any
                 for i, (m, t) in enumerate(texts)]
        await arun(call("store_many", items, namespace=self.namespace), self.mem)
        self._last = start + (len(items) - 1) * STEP

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the weakest lines (the last) until about ``tokens_to_truncate`` are gone."""
        lines = content.split("\n")
        goal = len(content) - tokens_to_truncate * CHARS_PER_TOKEN
        while lines and len("\n".join(lines)) > goal:
            lines.pop()
        return "\n".join(lines) or None


def to_node(hit: RetrievalResult) -> NodeWithScore:
    """A retrieval result as a ``NodeWithScore``: the memory's content and id, and in the
    metadata the terms, the walk's path (``str``, ``nodes``, ``steps``) and its fields."""
    node = TextNode(id_=hit.memory.id, text=hit.memory.content, metadata=hit_fields(hit),
                    excluded_llm_metadata_keys=["terms", "path_nodes", "path_steps", "metadata"])
    return NodeWithScore(node=node, score=hit.score)


class GraphMemRetriever(BaseRetriever):
    """The best ``k`` memories of ``namespace`` for a query as ``NodeWithScore``s, for a
    query engine or ``retriever.retrieve(text)``.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     m = mem.store("the deploy failed", namespace="ops")
        ...     hit = GraphMemRetriever(mem, namespace="ops").retrieve("deploy")[0]
        ...     hit.node.node_id == m.id, hit.node.metadata["path"], hit.score > 0
        (True, 'seed', True)
    """

    def __init__(self, mem: Any, *, namespace: str = "default", k: int = 4,
                 filters: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mem, self.namespace = mem, v.namespace(namespace)
        self.k, self.filters = v.bounded(k, "k", 1, 1000), filters

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        opts = _options(self.namespace, self.k, self.filters)
        return [to_node(h) for h in run(call("retrieve", query_bundle.query_str, **opts),
                                         self.mem)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        opts = _options(self.namespace, self.k, self.filters)
        return [to_node(h) for h in await arun(
            call("retrieve", query_bundle.query_str, **opts), self.mem)]
