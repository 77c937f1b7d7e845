"""/v1/events: what happens to a namespace's memories, live, as Server-Sent Events.

Each event is ``id:`` / ``event:`` / ``data:`` (JSON) lines; a comment line every
``HEARTBEAT_SECONDS`` keeps an idle connection (and any proxy) open. A client that reconnects
sends ``Last-Event-ID`` (or ``?after=``) and gets what it missed from the retained window, or a
``missed`` event saying some are gone. The key is checked, and the namespace authorised,
before the stream starts: a 401 / 403 / 422 is an ordinary JSON error. Events are those of
this server process (the writes it applied): a replica sees its own.

The route is async (it waits on the event loop, not in the thread pool): the writer's thread
hands an event to the listener's queue and wakes the loop; a slow reader never blocks it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from graphmem.api.auth import authorize
from graphmem.api.deps import Auth, Config, Mem, NsQuery
from graphmem.api.server import EVENTS_PATH, fd_soft_limit
from graphmem.api.settings import Settings
from graphmem.engine.events import DEFAULT_MAX_LISTENERS, MemoryEvent, Subscription

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["events"])

#: a comment line this often on an idle stream (proxies close silent connections)
HEARTBEAT_SECONDS = 15.0
#: how long a browser's EventSource waits before it reconnects (the ``retry:`` field)
RETRY_MS = 2000


def sse(event: MemoryEvent) -> str:
    """One event as SSE lines.

    Example:
        >>> from datetime import UTC, datetime
        >>> e = MemoryEvent("deleted", "ops", datetime(2026, 1, 1, tzinfo=UTC), "m1", id="a-1")
        >>> print(sse(e), end="")
        id: a-1
        event: deleted
        data: {"id": "a-1", "type": "deleted", "namespace": "ops", "at": "2026-01-01T00:00:00+00:00", "memory_id": "m1"}
        <BLANKLINE>
    """  # noqa: E501
    if event.wire is None:  # once, however many listeners it goes to
        data = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
        event.wire = f"id: {event.id}\nevent: {event.type}\ndata: {data}\n\n"
    return event.wire


@router.get(EVENTS_PATH.removeprefix("/v1"), include_in_schema=False)
async def events(request: Request, namespace: NsQuery, who: Auth, mem: Mem, settings: Config,
                 after: Annotated[str | None, Query(max_length=64)] = None,
                 last_event_id: Annotated[str | None, Header(max_length=64)] = None
                 ) -> StreamingResponse:
    """Stream the namespace's events (``text/event-stream``); the reader role suffices.
    Kept out of the OpenAPI document: a generated client would read it to its end."""
    ns = authorize(who, namespace)
    mem.core.events.max_listeners = listener_bound(settings)
    sub = mem.events(ns, after=last_event_id or after)  # a bad id: 422 before the stream
    heartbeat = float(getattr(request.app.state, "events_heartbeat", HEARTBEAT_SECONDS))
    return StreamingResponse(_stream(sub, heartbeat), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def listener_bound(settings: Settings) -> int:
    """Listeners at once: half the connections the server keeps open (a listener's request
    never completes, so the connection limits never shed it; the other half stays for
    ordinary requests).

    Example:
        >>> listener_bound(Settings(max_connections=700))
        350
    """
    if settings.max_connections:
        return max(1, settings.max_connections // 2)
    soft = fd_soft_limit()
    room = DEFAULT_MAX_LISTENERS if soft is None else (soft - settings.fd_reserve) // 2
    return max(1, min(DEFAULT_MAX_LISTENERS, room))


class _Wakes:
    """The listeners of one event loop woken together: a write's event reaches every
    listener of its namespace, and one hand-off to the loop (a write to its self-pipe)
    serves them all, not one per listener.

    Example:
        >>> async def main() -> bool:
        ...     ready = asyncio.Event()
        ...     _Wakes.of(asyncio.get_running_loop()).wake(ready)
        ...     await asyncio.wait_for(ready.wait(), 5)
        ...     return ready.is_set()
        >>> asyncio.run(main())
        True
    """

    _by_loop: dict[asyncio.AbstractEventLoop, _Wakes] = {}

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.pending: set[asyncio.Event] = set()
        self.scheduled = False

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> _Wakes:
        found = cls._by_loop.get(loop)
        if found is None:
            found = cls._by_loop.setdefault(loop, cls(loop))
            for gone in [x for x in cls._by_loop if x.is_closed()]:
                cls._by_loop.pop(gone, None)
        return found

    def wake(self, ready: asyncio.Event) -> None:  # from a writer's thread
        with self.lock:
            self.pending.add(ready)
            if self.scheduled:
                return
            self.scheduled = True
        with contextlib.suppress(RuntimeError):  # the loop is gone: its streams ended too
            self.loop.call_soon_threadsafe(self._flush)

    def _flush(self) -> None:
        with self.lock:
            ready, self.pending, self.scheduled = self.pending, set(), False
        for event in ready:
            event.set()


async def _stream(sub: Subscription, heartbeat: float) -> AsyncIterator[str]:
    ready = asyncio.Event()
    wakes = _Wakes.of(asyncio.get_running_loop())
    sub.waker = lambda: wakes.wake(ready)
    try:
        yield f"retry: {RETRY_MS}\n: listening\n\n"
        while not sub.closed:
            ready.clear()
            for event in sub.take():
                yield sse(event)
            if sub.closed:
                break
            try:
                await asyncio.wait_for(ready.wait(), heartbeat)
            except TimeoutError:
                yield ": heartbeat\n\n"
    finally:  # the client went away (the response is cancelled) or the memory closed
        sub.close()
