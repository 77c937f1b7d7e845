"""Connection limits for ``graphmem serve``: the HTTP protocol layer sheds abusive connections.

uvicorn alone holds a connection that sends its request head slowly for as long as the client
keeps it open (no header-read timeout), accepts connections until the process runs out of file
descriptors (``limit_concurrency`` answers 503 only once a request head is complete, so it never
sees a head that does not complete), and logs nothing of either. With ``ulimit -n 1024``, 1,100
such sockets from a client without a key made every keyed request fail. Here the protocol
uvicorn would pick (httptools, else h11) gains three limits:

- **header timeout**: a connection must complete its request head within ``header_timeout``
  seconds of being opened or of its previous response; otherwise it is closed.
- **a bound on open connections** (``max_connections``; by default derived from the soft
  ``RLIMIT_NOFILE`` minus the descriptors in use at start and ``fd_reserve`` kept for the
  store): a connection beyond it makes room by closing the connection that has waited longest
  for a request head (a slow or idle one: never one whose request is being served); when every
  open connection has a request in flight, the new connection is closed at once. Without
  uvloop the listen backlog is kept within the reserve, so a burst of connects cannot exhaust
  the descriptors between the accept and the bound.
- **idle keep-alive**: uvicorn's keep-alive timeout, ``keep_alive_timeout`` seconds.
- **head size**: a request head over ``max_head_bytes`` is answered 431 and closed (httptools
  buffers a head of any size, and a fast client fills memory in seconds: BENCHMARKS, History).

When they bite, one line per ``log_seconds`` (WARNING when connections were shed, INFO for idle
keep-alive closes only) counts what was closed since the last line.

Example:
    >>> limits = ConnectionLimits(header_timeout=10, keep_alive_timeout=5, max_connections=700)
    >>> protocol = guarded_protocol(limits)  # uvicorn.run(app, http=protocol, ...)
    >>> protocol.__name__
    'GuardedHttpToolsProtocol'
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

log = logging.getLogger(__name__)

#: the bound derived from the open-files limit never exceeds this (memory, not descriptors,
#: is then the limit: set ``GRAPHMEM_MAX_CONNECTIONS`` for more)
AUTO_MAX_CONNECTIONS = 8192
#: the live events' route (``api/routes/events.py``): a response that lasts until the client
#: goes, so a shutdown closes it rather than waiting for it
EVENTS_PATH = "/v1/events"
#: uvicorn's listen backlog (the kernel's queue of connections not yet accepted)
DEFAULT_BACKLOG = 2048
#: the answer to a request head over ``max_head_bytes`` (httptools alone bounds none)
HEAD_TOO_LARGE = (b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain"
                  b"\r\ncontent-length: 24\r\nconnection: close\r\n\r\nrequest head too large\r\n")

if TYPE_CHECKING:  # the mixin's methods extend those of uvicorn's protocols
    from uvicorn.protocols.http.h11_impl import H11Protocol as _ProtocolBase
else:
    _ProtocolBase = object


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits in effect (``from_settings`` derives the bound from the open-files limit).

    Example:
        >>> limits = ConnectionLimits.from_settings(
        ...     header_timeout=10, keep_alive_timeout=5, max_connections=None, fd_reserve=256,
        ...     max_head_bytes=65536, log_seconds=60)
        >>> 0 < limits.max_connections <= AUTO_MAX_CONNECTIONS
        True
    """

    header_timeout: float
    keep_alive_timeout: float
    max_connections: int
    #: a request head (request line and headers) larger than this is answered 431
    max_head_bytes: int = 64 * 1024
    #: at most one log line per this many seconds while the limits bite
    log_seconds: float = 60.0
    #: uvicorn's listen backlog
    backlog: int = DEFAULT_BACKLOG

    @classmethod
    def from_settings(cls, header_timeout: float, keep_alive_timeout: float,
                      max_connections: int | None, fd_reserve: int, max_head_bytes: int,
                      log_seconds: float) -> ConnectionLimits:
        """Limits for this process: ``max_connections`` (None: derived) never above what the
        open-files limit leaves once ``fd_reserve`` and the descriptors open now are set
        aside; without uvloop, the backlog within half the reserve."""
        soft = fd_soft_limit()
        in_use = open_fds()
        room = None if soft is None else soft - in_use - fd_reserve
        floor = 1 if soft is None else max(1, soft // 4)
        if max_connections is None:
            bound = AUTO_MAX_CONNECTIONS if room is None else min(AUTO_MAX_CONNECTIONS,
                                                                  max(floor, room))
        elif room is not None and max_connections > max(floor, room):
            bound = max(floor, room)
            log.warning("GRAPHMEM_MAX_CONNECTIONS=%d does not fit the open-files limit (%d, "
                        "%d in use, %d reserved): at most %d connections", max_connections,
                        soft, in_use, fd_reserve, bound)
        else:
            bound = max_connections
        if room is not None and room < floor:
            log.warning("the open-files limit (%d) leaves little room: %d in use, %d reserved "
                        "for the store; at most %d connections (raise ulimit -n)", soft,
                        in_use, fd_reserve, bound)
        # uvloop hands each connection to its protocol as it accepts it; asyncio's loop
        # accepts up to the backlog first, so there the backlog must fit in the reserve
        uvloop = importlib.util.find_spec("uvloop") is not None
        backlog = DEFAULT_BACKLOG if uvloop else max(16, min(DEFAULT_BACKLOG, fd_reserve // 2))
        limits = cls(header_timeout=header_timeout, keep_alive_timeout=keep_alive_timeout,
                     max_connections=bound, max_head_bytes=max_head_bytes,
                     log_seconds=log_seconds, backlog=backlog)
        log.info("connection limits: at most %d open (open files %s, %d in use, %d reserved), "
                 "request heads within %g s, idle keep-alive %g s, backlog %d", bound,
                 soft if soft is not None else "unlimited", in_use, fd_reserve,
                 header_timeout, keep_alive_timeout, backlog)
        return limits


def fd_soft_limit() -> int | None:
    """The soft ``RLIMIT_NOFILE`` of this process (None when unlimited or unknown)."""
    try:
        import resource
    except ImportError:  # not on a POSIX system
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def open_fds() -> int:
    """How many file descriptors this process has open (0 when it cannot tell)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return max(0, len(os.listdir(folder)) - 1)  # the listing's own descriptor
        except OSError:
            continue
    return 0


class ConnectionGuard:
    """The open connections of one server, the ones waiting for a request head (oldest
    first) and the counts of what the limits closed since the last log line.

    Example:
        >>> guard = ConnectionGuard(ConnectionLimits(header_timeout=10, keep_alive_timeout=5,
        ...                                          max_connections=700))
        >>> len(guard.open), guard.counts["evicted"]
        (0, 0)
    """

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open: set[_GuardedMixin] = set()
        #: connection -> when it began to wait (the loop's clock); the oldest first
        self.waiting: OrderedDict[_GuardedMixin, float] = OrderedDict()
        self.counts = {"evicted": 0, "refused": 0, "slow_head": 0, "large_head": 0, "idle": 0}
        self._last_line = float("-inf")
        self._flush: asyncio.TimerHandle | None = None
        self._sweeper: asyncio.TimerHandle | None = None

    def admit(self, conn: _GuardedMixin) -> bool:
        """A new connection: within the bound it is admitted; beyond it the connection that
        has waited longest for a request head is closed to make room, or, when every open
        connection has a request in flight, this one is refused (False)."""
        self.open.add(conn)
        if len(self.open) <= self.limits.max_connections:
            return True
        while self.waiting:
            oldest, _ = self.waiting.popitem(last=False)
            if oldest is conn or oldest not in self.open:
                continue
            self.forget(oldest)
            oldest.shed()
            self.bit(conn, "evicted")
            return True
        self.forget(conn)
        self.bit(conn, "refused")
        return False

    def forget(self, conn: _GuardedMixin) -> None:
        self.open.discard(conn)
        self.waiting.pop(conn, None)

    def sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close the connections that have waited ``header_timeout`` for a request head, and
        look again in a moment: one timer for all of them (a timer per request costs more CPU
        on a trivial keep-alive request: BENCHMARKS, History), so a
        head times out at most a fifth of the timeout (or a second) after its deadline."""
        cutoff = loop.time() - self.limits.header_timeout
        while self.waiting:
            conn, since = next(iter(self.waiting.items()))
            if since > cutoff:
                break
            del self.waiting[conn]
            conn.head_timed_out()
        self._sweeper = loop.call_later(min(1.0, self.limits.header_timeout / 5), self.sweep,
                                        loop)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._sweeper is None:
            self.sweep(loop)

    def bit(self, conn: _GuardedMixin, kind: str) -> None:
        """Count one closed connection; the line is written a second after the first of a
        burst, and then at most once per ``log_seconds``."""
        self.counts[kind] += 1
        if self._flush is None:
            now = time.monotonic()
            delay = max(1.0, self._last_line + self.limits.log_seconds - now)
            self._flush = conn.loop.call_later(delay, self.write_line)

    def write_line(self) -> None:
        self._flush = None
        self._last_line = time.monotonic()
        c, lim = self.counts, self.limits
        if not any(c.values()):
            return
        level = logging.INFO if c["idle"] == sum(c.values()) else logging.WARNING
        parts = [text for n, text in (
            (c["evicted"], f"{c['evicted']} closed to stay within {lim.max_connections} open "
                           "(the longest waiting for a request head)"),
            (c["refused"], f"{c['refused']} refused at {lim.max_connections} open (every one "
                           "with a request in flight)"),
            (c["slow_head"], f"{c['slow_head']} closed whose request head was not complete "
                             f"within {lim.header_timeout:g} s"),
            (c["large_head"], f"{c['large_head']} answered 431 whose request head exceeded "
                              f"{lim.max_head_bytes} bytes"),
            (c["idle"], f"{c['idle']} idle keep-alive closed after "
                        f"{lim.keep_alive_timeout:g} s")) if n]
        log.log(level, "connection limits: %s; %d open now", "; ".join(parts), len(self.open))
        self.counts = dict.fromkeys(c, 0)


class _StreamsEndOnShutdown(_ProtocolBase):
    """A graceful shutdown waits for the responses in flight; an event stream never ends by
    itself, so its connection is closed at once (its client resumes elsewhere, or after the
    restart, with Last-Event-ID)."""

    def shutdown(self) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and \
                cycle.scope.get("path") == EVENTS_PATH and not self.transport.is_closing():
            self.transport.close()
            return
        super().shutdown()


def _auto_protocol(prefix: str, mixin: type, **attrs: Any) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (the one ``http="auto"`` picks) with ``mixin``'s methods."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return type(f"{prefix}{AutoHTTPProtocol.__name__}", (mixin, AutoHTTPProtocol),
                {"__module__": __name__, **attrs})


def stream_closing_protocol() -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol whose shutdown closes live event streams, for a server without
    the connection limits (``graphmem viewer``: an open page would hold Ctrl+C)."""
    return _auto_protocol("StreamClosing", _StreamsEndOnShutdown)


class _GuardedMixin(_StreamsEndOnShutdown):
    """What the limits add to uvicorn's HTTP protocol (httptools or h11: the same hooks)."""

    guard: ConnectionGuard  # set on the class guarded_protocol makes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_keep_alive = self.guard.limits.keep_alive_timeout  # type: ignore[assignment]
        self._head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.guard.start(self.loop)
        if self.guard.admit(self):
            self._await_head()
        else:
            self.shed()

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.forget(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        super().data_received(data)
        waiting = self.guard.waiting
        if self in waiting:
            if self.cycle is not before:  # a request head is complete
                del waiting[self]
                return
            self._head_bytes += len(data)
            if self._head_bytes > self.guard.limits.max_head_bytes:
                self._refuse_large_head()

    def _refuse_large_head(self) -> None:
        if not self.transport.is_closing():
            self.guard.forget(self)
            self.guard.bit(self, "large_head")
            self.transport.write(HEAD_TOO_LARGE)
            self.transport.close()

    # httptools' callbacks (h11 has its own bound, ``h11_max_incomplete_event_size``) ----------
    def on_headers_complete(self) -> None:
        """A head that arrived whole in one read never reached ``data_received``'s count:
        measured here, before the app sees it; nothing more is parsed once closing."""
        if self.transport.is_closing():
            return
        heads = getattr(self, "headers", ())
        size = len(getattr(self, "url", b"")) + sum(len(n) + len(v) + 4 for n, v in heads)
        if size > self.guard.limits.max_head_bytes:
            self._refuse_large_head()
            return
        super().on_headers_complete()  # type: ignore[misc]

    def on_body(self, body: bytes) -> None:
        if not self.transport.is_closing():
            super().on_body(body)  # type: ignore[misc]

    def on_message_complete(self) -> None:
        if not self.transport.is_closing():
            super().on_message_complete()  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()
        busy = (self.cycle is not None and not self.cycle.response_complete) or \
            bool(getattr(self, "pipeline", None))
        if not busy and not self.transport.is_closing():
            self._await_head()  # the next request's head, within the timeout

    def timeout_keep_alive_handler(self) -> None:
        if not self.transport.is_closing():
            self.guard.bit(self, "idle")
        super().timeout_keep_alive_handler()

    def handle_websocket_upgrade(self, *args: Any) -> None:
        self.guard.forget(self)  # the WebSocket protocol owns the connection from here
        super().handle_websocket_upgrade(*args)

    def shed(self) -> None:
        """Close the connection at once (no response: it has not sent a request); the guard
        has forgotten it already."""
        if not self.transport.is_closing():
            self.transport.abort()

    def _await_head(self) -> None:
        waiting = self.guard.waiting
        waiting.pop(self, None)
        waiting[self] = self.loop.time()  # the newest waits longest to be swept or evicted
        self._head_bytes = 0

    def head_timed_out(self) -> None:
        if self.transport.is_closing():
            return
        # nothing sent since the last response: an idle keep-alive longer than the timeout
        self.guard.bit(self, "slow_head" if self._head_bytes else "idle")
        self.guard.forget(self)
        self.shed()


def guarded_protocol(limits: ConnectionLimits) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (the one ``http="auto"`` picks) with ``limits``, for
    ``uvicorn.run(app, http=...)``; the class's connections share one guard."""
    return _auto_protocol("Guarded", _GuardedMixin, guard=ConnectionGuard(limits))
