"""The live events of ``GET /v1/events`` for both clients: Server-Sent Events parsed into the
facade's ``MemoryEvent``, reconnecting from the last id seen (``Last-Event-ID``) when the
connection drops, so nothing inside the server's retained window is missed.

Example:
    >>> lines = ["retry: 2000", ": listening", "", "id: a-1", "event: deleted",
    ...          'data: {"id": "a-1", "type": "deleted", "namespace": "ops",',
    ...          'data:  "at": "2026-01-01T00:00:00+00:00", "memory_id": "m1"}', ""]
    >>> parser = _Parser()
    >>> [(e.id, e.type, e.memory_id) for e in map(parser.line, lines) if e]
    [('a-1', 'deleted', 'm1')]
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime
from typing import Any

import httpx

from graphmem import errors
from graphmem.engine.events import MemoryEvent

log = logging.getLogger(__name__)

PATH = "/v1/events"
#: a stream silent this long is dead (several of the server's heartbeats missed: ADR 0062)
READ_TIMEOUT = 60.0
#: the wait before reconnecting when the server sent no ``retry:``
RETRY_SECONDS = 1.0
_KNOWN = {"id", "type", "namespace", "at", "memory_id"}


def to_event(fields: dict[str, Any]) -> MemoryEvent:
    """A ``MemoryEvent`` from its JSON form."""
    return MemoryEvent(fields["type"], fields["namespace"], datetime.fromisoformat(fields["at"]),
                       fields.get("memory_id"),
                       {k: v for k, v in fields.items() if k not in _KNOWN}, id=fields["id"])


class _Parser:
    """The SSE line protocol: fields until a blank line; comments and ``retry`` aside."""

    def __init__(self) -> None:
        self.data: list[str] = []
        self.retry: float | None = None

    def line(self, line: str) -> MemoryEvent | None:
        if not line:
            if not self.data:
                return None
            text, self.data = "\n".join(self.data), []
            return to_event(json.loads(text))
        if line.startswith(":"):
            return None  # a comment: the heartbeat
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self.data.append(value)
        elif name == "retry" and value.isdigit():
            self.retry = int(value) / 1000
        return None  # id and event are repeated inside data


def _request(namespace: str, last: str | None) -> dict[str, Any]:
    return {"params": {"namespace": namespace},
            "headers": {"Last-Event-ID": last} if last else {},
            "timeout": httpx.Timeout(10.0, read=READ_TIMEOUT)}


def follow(http: httpx.Client, namespace: str, last_event_id: str | None, *,
           reconnect: bool, attempts: int, check: Callable[[httpx.Response], Any]
           ) -> Iterator[MemoryEvent]:
    """Events as they come; a dropped connection is resumed after the last id seen
    (``attempts`` failed connections in a row: ``UnavailableError``)."""
    last, failures, parser = last_event_id, 0, _Parser()
    while True:
        try:
            with http.stream("GET", PATH, **_request(namespace, last)) as response:
                if response.status_code >= 400:
                    response.read()
                    check(response)
                failures = 0
                for line in response.iter_lines():
                    event = parser.line(line)
                    if event is not None:
                        last = event.id
                        yield event
        except httpx.TransportError as exc:
            failures += 1
            if not reconnect or failures > attempts:
                raise errors.UnavailableError(f"the event stream of {http.base_url} broke: "
                                              f"{type(exc).__name__}: {exc}") from exc
            log.info("event stream interrupted (%s): resuming after %s", exc, last)
        if not reconnect:
            return
        time.sleep(parser.retry or RETRY_SECONDS)


async def afollow(http: httpx.AsyncClient, namespace: str, last_event_id: str | None, *,
                  reconnect: bool, attempts: int, check: Callable[[httpx.Response], Any]
                  ) -> AsyncIterator[MemoryEvent]:
    """``follow`` for the async client."""
    last, failures, parser = last_event_id, 0, _Parser()
    while True:
        try:
            async with http.stream("GET", PATH, **_request(namespace, last)) as response:
                if response.status_code >= 400:
                    await response.aread()
                    check(response)
                failures = 0
                async for line in response.aiter_lines():
                    event = parser.line(line)
                    if event is not None:
                        last = event.id
                        yield event
        except httpx.TransportError as exc:
            failures += 1
            if not reconnect or failures > attempts:
                raise errors.UnavailableError(f"the event stream of {http.base_url} broke: "
                                              f"{type(exc).__name__}: {exc}") from exc
            log.info("event stream interrupted (%s): resuming after %s", exc, last)
        if not reconnect:
            return
        await asyncio.sleep(parser.retry or RETRY_SECONDS)
