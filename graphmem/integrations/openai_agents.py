"""The OpenAI Agents SDK on graphmem (``pip install "graphmem[openai-agents]"``):
``GraphMemSession``, a ``Session`` that keeps a conversation as a graphmem session, and
``memory_tools``, recall and remember as the SDK's function tools.

Each item the runner adds is one memory with the session's id: the item whole (what
``get_items`` gives back, unchanged) in its metadata, its text as the content, so the
conversation is also linked by FOLLOWS and recalled like any memory. The store may be a
``GraphMemory``, a ``GraphMemClient`` or an ``AsyncGraphMemClient``.

"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from agents import RunContextWrapper, Tool, default_tool_error_function, function_tool

from graphmem.errors import ValidationError
from graphmem.integrations._log import (
    Backend,
    Entry,
    SessionLog,
    arun,
    call,
    to_json,
)
from graphmem.models import Memory, utcnow

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory.session_settings import SessionSettings

#: the metadata key holding an item (it also marks the session's memories as items)
ITEM_KEY = "openai_agents_item"


def item_text(item: Any) -> tuple[str, str]:
    """An input item's (role, text): a message's text parts, a tool call's name and
    arguments, a tool's output; its type when it has no text.

    Example:
        >>> item_text({"role": "user", "content": [{"type": "input_text", "text": "hi"}]})
        ('user', 'hi')
        >>> item_text({"type": "function_call", "name": "recall", "arguments": '{"q":1}'})
        ('function_call', 'recall({"q":1})')
    """
    if not isinstance(item, dict):
        raise ValidationError(f"a session item is a JSON object, got {type(item).__name__}")
    role = str(item.get("role") or item.get("type") or "item")
    kind = item.get("type")
    if kind == "function_call":
        return role, f"{item.get('name')}({item.get('arguments', '')})"
    body = item.get("content", item.get("output", item.get("summary")))
    if isinstance(body, str):
        return role, body
    parts = [p.get("text") or p.get("refusal") or "" for p in body or ()
             if isinstance(p, dict)]
    return role, " ".join(p for p in parts if p) or str(kind or role)


def _entry(item: Any) -> Entry:
    if hasattr(item, "model_dump"):  # a pydantic item of the openai package
        item = item.model_dump(exclude_unset=True, mode="json")
    role, text = item_text(item)
    return Entry(text, role, to_json(item))


def _item(m: Memory) -> TResponseInputItem:
    return json.loads(m.metadata[ITEM_KEY])


class GraphMemSession:
    """The SDK's ``Session`` protocol over a graphmem session: ``Runner.run(agent, text,
    session=GraphMemSession("chat-1", mem))`` keeps the conversation in graphmem. One
    object serialises its own writes; two writers of one session in separate processes may
    give two items the same turn (the second then reinforces the first).

    Example:
        >>> import asyncio, tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> async def chat(mem):
        ...     session = GraphMemSession("chat-1", mem)
        ...     await session.add_items([{"role": "user", "content": "hi"},
        ...                              {"role": "assistant", "content": "hello"}])
        ...     return await session.pop_item(), await session.get_items()
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     asyncio.run(chat(mem))
        ({'role': 'assistant', 'content': 'hello'}, [{'role': 'user', 'content': 'hi'}])
    """

    session_settings: SessionSettings | None = None

    def __init__(self, session_id: str, mem: Backend, *, namespace: str = "default",
                 session_settings: SessionSettings | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        # the items' event times: the facade's clock by default, a client's is UTC now
        times = clock if clock is not None else getattr(mem, "clock", utcnow)
        self._log = SessionLog(session_id, namespace, ITEM_KEY, times)
        self.session_id, self.namespace, self.mem = self._log.session_id, namespace, mem
        self.session_settings = session_settings
        self._lock, self._alock = threading.Lock(), asyncio.Lock()

    async def _run(self, plan: Any) -> Any:
        return await arun(plan, self.mem, self._lock, self._alock)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The latest ``limit`` items (all when None), oldest first."""
        return [_item(m) for m in await self._run(self._log.read(limit))]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` in order, all or (on an invalid one) none."""
        entries = [_entry(i) for i in items]  # bad input fails before anything is read
        await self._run(self._log.append(entries))

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the latest item (None when the session is empty)."""
        latest = await self._run(self._log.pop())
        return None if latest is None else _item(latest)

    async def clear_session(self) -> None:
        """Delete every item of the session."""
        await self._run(self._log.clear())


def memory_tools(mem: Backend, *, namespace: str = "default", session_id: str | None = None,
                 limit: int = 5) -> list[Tool]:
    """``recall`` and ``remember`` as function tools for an ``Agent(tools=...)``: recall
    answers the best ``limit`` memories of ``namespace`` as lines; remember stores a memory
    (with ``session_id`` when given). A bad argument is reported to the model as the tool's
    error, as the SDK does for any tool, and stores nothing."""
    lock = threading.Lock()

    async def _do(name: str, *args: Any, **kw: Any) -> Any:
        return await arun(call(name, *args, **kw), mem, lock)

    async def recall(query: str) -> str:
        """Recall what is remembered about something: the best matching memories, best
        first, one a line.

        Args:
            query: what to recall, in words.
        """
        hits = await _do("retrieve", query, namespace=namespace, limit=limit)
        return "\n".join(f"- {h.memory.content}" for h in hits) or "nothing remembered"

    async def remember(content: str, importance: float) -> str:
        """Remember a fact, preference or decision for later conversations.

        Args:
            content: what to remember, one self-contained statement.
            importance: 0 to 1; 0.5 for an ordinary fact, higher for what must not be lost.
        """
        m = await _do("store", content, namespace=namespace, importance=importance,
                      session_id=session_id)
        return f"remembered as {m.id}"

    return [function_tool(recall, failure_error_function=_tool_error),
            function_tool(remember, failure_error_function=_tool_error)]


def _tool_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model is told of a failed call: a refusal of its own arguments in full
    (so it can correct them); anything else (a store or server fault) as the SDK's default."""
    if isinstance(error, ValidationError):
        return f"graphmem refused the call: {error}"
    return default_tool_error_function(ctx, error)
