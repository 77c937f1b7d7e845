"""A graphmem session as an ordered log of a framework's items (the OpenAI Agents ``Session``
and LangChain's chat history): each item is one memory with the session's id (the FOLLOWS
chain links them; recall finds them), its text as the content, the item whole as JSON under
the adapter's metadata key. Works on a ``GraphMemory``, a ``GraphMemClient`` or an
``AsyncGraphMemClient``: the log's steps are written once as plans (generators yielding the
backend calls they need) that ``run`` drives synchronously and ``arun`` asynchronously.

Two rules of the store shape it: a twin content in a namespace reinforces the first memory
instead of making a second one, so each item's content ends with the session and its turn
(``[chat-1#3]``) and a repeated "ok" stays two items; and memories of one batch share the
clock's instant, so an item's event time is one millisecond after the one before it, which
keeps the order of ``list_page`` and of the FOLLOWS chain the order items were added in.

Example:
    >>> import tempfile
    >>> from graphmem import GraphMemory
    >>> from graphmem.testing import RandomEmbedder
    >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
    ...     log = SessionLog("chat-1", "default", "demo_item", mem.clock)
    ...     _ = run(log.append([Entry("ok", "user", '"ok"'), Entry("ok", "user", '"ok"')]), mem)
    ...     [m.content for m in run(log.read(None), mem)]
    ['user: ok [chat-1#1]', 'user: ok [chat-1#2]']
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from graphmem.errors import ValidationError
from graphmem.models import Memory, RetrievalResult
from graphmem.rules import validation as v

#: a ``GraphMemory``, a ``GraphMemClient`` or an ``AsyncGraphMemClient`` (the integrations
#: sit beside the faces: they name neither client, the layers forbid it)
Backend = Any

T = TypeVar("T")
#: a backend method's name, its positional arguments and its keywords
Call = tuple[str, tuple[Any, ...], dict[str, Any]]
Plan = Generator[Call, Any, T]

#: the gap between consecutive items' event times (SQLite keeps times as float seconds)
STEP = timedelta(milliseconds=1)
#: the most of an item's text kept as the memory's content (the item whole is in metadata)
MAX_TEXT = 16_000
PAGE = 1000


@dataclass(frozen=True, slots=True)
class Entry:
    """One item to append: its text (the memory's content), role and the item as JSON.

    Example:
        >>> Entry("hi", "user", to_json({"role": "user", "content": "hi"})).payload
        '{"role":"user","content":"hi"}'
    """

    text: str
    role: str
    payload: str


def to_json(item: Any) -> str:
    """An item as compact JSON (ValidationError when it is not JSON)."""
    try:
        return json.dumps(item, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"the item cannot be kept as JSON: {exc}") from None


def is_async(backend: Any) -> bool:
    """An ``AsyncGraphMemClient`` (its verbs are coroutines), told without importing it."""
    return inspect.iscoroutinefunction(getattr(backend, "retrieve", None))


def run(plan: Plan[T], backend: Backend, lock: threading.Lock | None = None) -> T:
    """Drive ``plan`` on a synchronous backend (a ``GraphMemory`` or ``GraphMemClient``)."""
    if is_async(backend):
        plan.close()
        raise ValidationError("an AsyncGraphMemClient answers the async methods only")
    with lock or threading.Lock():
        step, result = plan.send, None
        while True:
            try:
                name, args, kw = step(result)
            except StopIteration as done:
                return done.value
            try:  # a plan may answer a failed call (a missing memory ...); else it is raised
                step, result = plan.send, getattr(backend, name)(*args, **kw)
            except Exception as exc:
                step, result = plan.throw, exc


async def arun(plan: Plan[T], backend: Backend, lock: threading.Lock | None = None,
               alock: asyncio.Lock | None = None) -> T:
    """Drive ``plan`` on any backend: a synchronous one in a worker thread."""
    if not is_async(backend):
        return await asyncio.to_thread(run, plan, backend, lock)
    async with alock or asyncio.Lock():
        step, result = plan.send, None
        while True:
            try:
                name, args, kw = step(result)
            except StopIteration as done:
                return done.value
            try:
                step, result = plan.send, await getattr(backend, name)(*args, **kw)
            except Exception as exc:
                step, result = plan.throw, exc


def hit_fields(hit: RetrievalResult) -> dict[str, Any]:
    """What the adapters keep beside a retrieved memory's text: the score's terms, the walk's
    path (``str``, ``nodes``, ``steps``) and the memory's own fields."""
    m, path = hit.memory, hit.path.to_dict()
    return {"terms": dict(hit.terms), "path": str(hit.path), "path_nodes": path.get("nodes"),
            "path_steps": path.get("steps"), "tier": m.tier.value, "type": m.type,
            "session_id": m.session_id, "created_at": m.created_at.isoformat(),
            "metadata": dict(m.metadata)}


def call(name: str, *args: Any, **kw: Any) -> Plan[Any]:
    """A plan of one backend call (for the adapters' single reads and writes)."""
    return (yield (name, args, kw))


class SessionLog:
    """The items of one session that carry ``marker`` in their metadata, oldest first: its
    methods are plans for ``run`` / ``arun``.

    Example:
        >>> from graphmem.models import utcnow
        >>> log = SessionLog("chat-1", "ops", "demo_item", utcnow)
        >>> name, args, kw = next(log.read(5))  # the first call the read needs
        >>> name, kw["session_id"], kw["order"], kw["status"]
        ('list_page', 'chat-1', 'desc', None)
    """

    def __init__(self, session_id: str, namespace: str, marker: str,
                 clock: Callable[[], datetime]) -> None:
        sid = v.optional_text(session_id, "session_id")
        if not sid or not sid.strip() or len(sid) > 256:
            raise ValidationError("session_id must be 1-256 characters of text")
        self.session_id, self.namespace = sid, v.namespace(namespace)
        self.marker, self.clock = marker, clock

    def read(self, limit: int | None) -> Plan[list[Memory]]:
        """The latest ``limit`` items (all when None), oldest first."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 0):
            raise ValidationError(f"limit must be a whole number >= 0 or None, got {limit!r}")
        if limit == 0:
            return []
        out: list[Memory] = []
        cursor = None
        while limit is None or len(out) < limit:
            page = yield ("list_page", (), {
                "namespace": self.namespace, "session_id": self.session_id, "status": None,
                "sort": "created_at", "order": "asc" if limit is None else "desc",
                "limit": PAGE if limit is None else min(PAGE, limit - len(out) + 10),
                "cursor": cursor})
            out += [m for m in page.items if self.marker in m.metadata]
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return out if limit is None else out[:limit][::-1]

    def append(self, entries: Sequence[Entry]) -> Plan[list[Memory]]:
        if not entries:
            return []
        latest = yield from self.read(1)
        turn = int(latest[0].metadata.get("turn", 0)) + 1 if latest else 1
        start = self.clock()
        if latest and latest[0].created_at + STEP > start:
            start = latest[0].created_at + STEP
        items = [{"content": f"{e.role}: {e.text[:MAX_TEXT]} [{self.session_id}#{turn + i}]",
                  "session_id": self.session_id, "created_at": start + i * STEP,
                  "metadata": {self.marker: e.payload, "role": e.role, "turn": turn + i}}
                 for i, e in enumerate(entries)]
        stored: list[Memory] = yield ("store_many", (items,), {"namespace": self.namespace})
        return stored

    def pop(self) -> Plan[Memory | None]:
        latest = yield from self.read(1)
        if not latest:
            return None
        yield ("delete", (latest[0].id,), {"namespace": self.namespace})
        return latest[0]

    def clear(self) -> Plan[int]:
        items = yield from self.read(None)
        for m in items:
            yield ("delete", (m.id,), {"namespace": self.namespace})
        return len(items)
