"""LangChain on graphmem (``pip install "graphmem[langchain]"``): ``GraphMemChatHistory``, a
``BaseChatMessageHistory`` that keeps a chat as a graphmem session, and ``GraphMemRetriever``,
a ``BaseRetriever`` whose ``Document``s carry the retrieval's score, its terms and the path
of the graph walk that reached each memory.

Each message is one memory with the session's id: the message whole (``message_to_dict``)
in its metadata, so its type and fields come back as they went in, and its text as the
content, so the chat is linked by FOLLOWS and recalled like any memory. The store may be a
``GraphMemory``, a ``GraphMemClient`` or an ``AsyncGraphMemClient`` (async methods only).

"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, field_validator

from graphmem.errors import ValidationError
from graphmem.integrations._log import (
    Backend,
    Entry,
    SessionLog,
    arun,
    call,
    hit_fields,
    run,
    to_json,
)
from graphmem.models import Memory, RetrievalResult, utcnow
from graphmem.rules import validation as v

#: the metadata key holding a message (it also marks the session's memories as messages)
MESSAGE_KEY = "langchain_message"


def _entry(message: Any) -> Entry:
    if not isinstance(message, BaseMessage):
        raise ValidationError(f"a chat message is a BaseMessage, got {type(message).__name__}")
    return Entry(message.text or message.type, message.type, to_json(message_to_dict(message)))


def _messages(rows: list[Memory]) -> list[BaseMessage]:
    return messages_from_dict([json.loads(m.metadata[MESSAGE_KEY]) for m in rows])


class GraphMemChatHistory(BaseChatMessageHistory):
    """A chat's messages as a graphmem session, oldest first: for
    ``RunnableWithMessageHistory(chain, lambda sid: GraphMemChatHistory(sid, mem))``.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     history = GraphMemChatHistory("chat-1", mem)
        ...     history.add_messages([HumanMessage("hi"), AIMessage("hello")])
        ...     [(m.type, m.content) for m in history.messages]
        [('human', 'hi'), ('ai', 'hello')]
    """

    def __init__(self, session_id: str, mem: Backend, *, namespace: str = "default",
                 clock: Callable[[], datetime] | None = None) -> None:
        # the messages' event times: the facade's clock by default, a client's is UTC now
        times = clock if clock is not None else getattr(mem, "clock", utcnow)
        self._log = SessionLog(session_id, namespace, MESSAGE_KEY, times)
        self.session_id, self.namespace, self.mem = self._log.session_id, namespace, mem
        self._lock, self._alock = threading.Lock(), asyncio.Lock()

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return _messages(run(self._log.read(None), self.mem, self._lock))

    async def aget_messages(self) -> list[BaseMessage]:
        return _messages(await arun(self._log.read(None), self.mem, self._lock, self._alock))

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in order, all or (on an invalid one) none."""
        entries = [_entry(m) for m in messages]
        run(self._log.append(entries), self.mem, self._lock)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        entries = [_entry(m) for m in messages]
        await arun(self._log.append(entries), self.mem, self._lock, self._alock)

    def clear(self) -> None:
        run(self._log.clear(), self.mem, self._lock)

    async def aclear(self) -> None:
        await arun(self._log.clear(), self.mem, self._lock, self._alock)


def to_document(hit: RetrievalResult) -> Document:
    """A retrieval result as a ``Document``: the memory's content, its id, and in the
    metadata the score, the terms, the path (``str`` and ``nodes`` / ``steps``) and the
    memory's own fields."""
    m = hit.memory
    return Document(page_content=m.content, id=m.id, metadata={
        "id": m.id, "score": hit.score, "disputed": hit.disputed, **hit_fields(hit)})


class GraphMemRetriever(BaseRetriever):
    """The best ``k`` memories of ``namespace`` for a query, through graphmem's whole
    pipeline (seeds, graph walk, rerank); ``filters`` / ``strategy`` / ``depth`` as
    ``GraphMemory.retrieve`` takes them.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     m = mem.store("the deploy failed", namespace="ops")
        ...     doc = GraphMemRetriever(mem=mem, namespace="ops").invoke("deploy")[0]
        ...     doc.id == m.id, doc.metadata["path"], sorted(doc.metadata["terms"])[:2]
        (True, 'seed', ['context_keyword', 'context_semantic'])
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    mem: Any
    namespace: str = "default"
    k: int = 4
    filters: dict[str, Any] | None = None
    strategy: str | None = None
    depth: int | None = None

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        return v.namespace(value)

    @field_validator("k")
    @classmethod
    def _k(cls, value: int) -> int:
        return v.bounded(value, "k", 1, 1000)

    def _options(self) -> dict[str, Any]:
        options = {"filters": self.filters, "strategy": self.strategy, "depth": self.depth}
        return {"namespace": self.namespace, "limit": self.k,
                **{k: val for k, val in options.items() if val is not None}}

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = run(call("retrieve", query, **self._options()), self.mem)
        return [to_document(h) for h in hits]

    async def _aget_relevant_documents(
            self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        hits = await arun(call("retrieve", query, **self._options()), self.mem)
        return [to_document(h) for h in hits]
