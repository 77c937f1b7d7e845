"""Live memory events: an in-process log of what happened to memories, fed by ``Core.apply``
(the one write point) and by consolidation run states, read by listeners (the facade's
``events``, REST's ``/v1/events``).

The log keeps the last ``retain`` events of all namespaces (a ring) so a listener that
reconnects resumes after its last id; ids are ``<epoch>-<seq>``: ``seq`` increases in this
process, ``epoch`` names the process's log, so an id from another process (a restart, another
replica) is recognised as one the log cannot resume from. A listener holds a bounded queue:
an event it could not keep is counted, never waited for (writers are never slowed).

Example:
    >>> from datetime import UTC, datetime
    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> log = EventLog(retain=3, epoch="e1", clock=lambda: at)
    >>> for i in range(4):
    ...     log.publish([MemoryEvent("stored", "ops", at, f"m{i}")])
    >>> [e.memory_id for e in log.subscribe("ops", after="e1-3").take()]  # a resume
    ['m3']
    >>> [(e.type, e.id) for e in log.subscribe("ops", after="e0-7").take()]  # a restart
    [('missed', 'e1-1'), ('stored', 'e1-2'), ('stored', 'e1-3'), ('stored', 'e1-4')]
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphmem.errors import LimitExceededError, ValidationError

log = logging.getLogger(__name__)

#: events kept for resuming (all namespaces together)
DEFAULT_RETAIN = 10_000
#: events one listener may hold before it has read them
DEFAULT_QUEUE = 1_000
#: listeners at once in one process (each holds a connection on a server)
DEFAULT_MAX_LISTENERS = 1_000


@dataclass(slots=True)
class MemoryEvent:
    """One thing that happened to memories of ``namespace``: ``type`` (stored, reinforced,
    updated, deleted, related, unrelated, pinned, unpinned, promoted, demoted, archived,
    expired, restored, superseded, consolidation; and for a listener missed, overflow),
    ``memory_id`` when one memory is concerned, ``data`` what else is known (tier, status,
    a content preview, the edge, the run). ``id`` is given by the log.

    Example:
        >>> from datetime import UTC
        >>> e = MemoryEvent("deleted", "ops", datetime(2026, 1, 1, tzinfo=UTC), "m1", id="a-7")
        >>> e.to_dict()["type"], e.to_dict()["at"]
        ('deleted', '2026-01-01T00:00:00+00:00')
    """

    type: str
    namespace: str
    at: datetime
    memory_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    seq: int = 0
    #: its wire form, made once for all the listeners it goes to (``api/routes/events``)
    wire: str | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {**self.data, "id": self.id, "type": self.type, "namespace": self.namespace,
                "at": self.at.isoformat(), "memory_id": self.memory_id}


class Subscription:
    """One listener's bounded queue. ``take`` returns what arrived (at once), ``wait`` blocks
    until something did; ``waker`` is called (from the writer's thread) when the queue goes
    from empty to not empty, so an asyncio consumer can be woken thread-safely. Close it.

    Example:
        >>> from datetime import UTC
        >>> at = datetime(2026, 1, 1, tzinfo=UTC)
        >>> log = EventLog(epoch="e1", clock=lambda: at)
        >>> with log.subscribe("ops") as sub:
        ...     log.publish([MemoryEvent("stored", "ops", at)])
        ...     [(e.id, e.type) for e in sub.take()], sub.last_id
        ([('e1-1', 'stored')], 'e1-1')
    """

    def __init__(self, log_: EventLog, namespace: str, capacity: int) -> None:
        self.log, self.namespace, self.capacity = log_, namespace, capacity
        self.queue: deque[MemoryEvent] = deque()
        #: events that arrived while the queue was full, since the last ``take``
        self.dropped = 0
        #: the id of the last event handed out (where a resume starts)
        self.last_id: str | None = None
        self.closed = False
        self.waker: Callable[[], None] | None = None
        self._ready = threading.Event()

    def offer(self, event: MemoryEvent) -> None:  # the log's lock is held
        """Queue ``event``; counted in ``dropped`` when the queue is full."""
        if len(self.queue) >= self.capacity:
            self.dropped += 1
            return
        was_empty = not self.queue
        self.queue.append(event)
        if was_empty:
            self._ready.set()
            if self.waker is not None:
                self.waker()

    def take(self) -> list[MemoryEvent]:
        """What is queued now. After an overflow: an ``overflow`` event (how many were not
        kept) and, from the retained window, the events after the last one handed out."""
        with self.log.lock:
            out = list(self.queue)
            self.queue.clear()
            if not self.closed:
                self._ready.clear()
            dropped, self.dropped = self.dropped, 0
            if dropped:
                after = out[-1].seq if out else self._last_seq()
                anchor = out[-1].id if out else self.last_id
                notice = self.log.notice("overflow", self.namespace, anchor, {
                    "dropped": dropped, "after": anchor})
                out.append(notice)
                out.extend(self.log.backlog(self.namespace, after, notice))
        real = [e for e in out if e.seq]  # a notice has no seq: not where a resume starts
        if real:
            self.last_id = real[-1].id
        return out

    def wait(self, timeout: float | None = None) -> bool:
        """Whether something is queued (or the log closed) within ``timeout`` seconds."""
        return self._ready.wait(timeout)

    def __iter__(self) -> Iterator[MemoryEvent]:
        """Events as they come, blocking, until the subscription (or the log) is closed."""
        while True:
            closed = self.closed  # what was queued before the close is still handed out
            yield from self.take()
            if closed:
                return
            self.wait(1.0)

    def close(self) -> None:
        self.log.unsubscribe(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _last_seq(self) -> int:
        if self.last_id is None:
            return self.log.seq
        return self.log.parse(self.last_id) or 0


class EventLog:
    """The process's events: a ring of the last ``retain`` and the listeners by namespace.
    Publishing costs a lock and an append when nobody listens.

    Example:
        >>> from datetime import UTC
        >>> at = datetime(2026, 1, 1, tzinfo=UTC)
        >>> log = EventLog(retain=2, epoch="e1", clock=lambda: at)
        >>> log.publish([MemoryEvent("stored", "ops", at)])
        >>> log.parse("e1-1"), log.parse("e9-1"), log.listening()
        (1, None, 0)
    """

    def __init__(self, *, retain: int = DEFAULT_RETAIN, queue: int = DEFAULT_QUEUE,
                 max_listeners: int = DEFAULT_MAX_LISTENERS, epoch: str | None = None,
                 clock: Callable[[], datetime]) -> None:
        self.epoch = epoch or uuid.uuid4().hex[:8]
        #: the time of a notice (missed, overflow)
        self.clock = clock
        self.lock = threading.Lock()
        self.ring: deque[MemoryEvent] = deque(maxlen=retain)
        self.queue, self.max_listeners = queue, max_listeners
        self.seq = 0
        #: namespace -> seq of the newest of its events the ring no longer holds
        self.forgotten: dict[str, int] = {}
        self.listeners: dict[str, list[Subscription]] = {}
        #: consolidation run id -> the status last published (its saves repeat it)
        self.run_states: dict[str, Any] = {}

    def publish(self, events: Iterable[MemoryEvent]) -> None:
        with self.lock:
            for e in events:
                self.seq += 1
                e.seq, e.id = self.seq, f"{self.epoch}-{self.seq}"
                if len(self.ring) == self.ring.maxlen:
                    self.forgotten[self.ring[0].namespace] = self.ring[0].seq
                self.ring.append(e)
                for sub in self.listeners.get(e.namespace, ()):
                    sub.offer(e)

    def subscribe(self, namespace: str, *, after: str | None = None,
                  queue: int | None = None) -> Subscription:
        """A listener of ``namespace`` from now on, or (``after``: an event id) from the event
        after it: the retained ones first, a ``missed`` event when some are gone (older than
        the window, or ``after`` is from another process)."""
        sub = Subscription(self, namespace, queue or self.queue)
        with self.lock:
            if sum(len(v) for v in self.listeners.values()) >= self.max_listeners:
                raise LimitExceededError(f"{self.max_listeners} event listeners already")
            if after is not None:
                seq = self.parse(after)
                gone = seq is None or seq > self.seq or self.forgotten.get(namespace, 0) > seq
                start = 0 if seq is None or seq > self.seq else seq
                if gone:  # its id: where a resume from it starts without being told again
                    resume = f"{self.epoch}-{max(start, self.forgotten.get(namespace, 0))}"
                    sub.queue.append(self.notice("missed", namespace, resume, {
                        "after": after, "reason": "older than the retained window"
                        if seq is not None and seq <= self.seq else
                        "not an event of this server process (restarted, or another replica)"}))
                sub.queue.extend(self.backlog(namespace, start))
                if sub.queue:
                    sub._ready.set()
            self.listeners.setdefault(namespace, []).append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self.lock:
            subs = self.listeners.get(sub.namespace, [])
            if sub in subs:
                subs.remove(sub)
            if not subs:
                self.listeners.pop(sub.namespace, None)
        sub.closed = True
        sub._ready.set()
        if sub.waker is not None:
            sub.waker()

    def close(self) -> None:
        """Every listener ends (the process is stopping)."""
        for subs in list(self.listeners.values()):
            for sub in list(subs):
                self.unsubscribe(sub)

    def backlog(self, namespace: str, after: int,
                notice: MemoryEvent | None = None) -> list[MemoryEvent]:
        """Retained events of ``namespace`` after seq ``after`` (the lock is held)."""
        out = [e for e in self.ring if e.seq > after and e.namespace == namespace]
        if notice is not None and self.forgotten.get(namespace, 0) > after:
            notice.data["lost"] = True  # some of the dropped ones left the window too
        return out

    def notice(self, type_: str, namespace: str, anchor: str | None,
               data: dict[str, Any]) -> MemoryEvent:
        """An event for one listener (missed, overflow): not in the log, no seq of its own;
        its id (``anchor``) is where the events after it resume."""
        anchor = anchor or f"{self.epoch}-{self.seq}"
        return MemoryEvent(type_, namespace, self.clock(), None, data, id=str(anchor))

    def parse(self, event_id: str) -> int | None:
        """The seq of an id of this log; None for one of another process."""
        epoch, _, seq = str(event_id).rpartition("-")
        if not seq.isdigit() or len(seq) > 18:
            raise ValidationError(f"not an event id: {event_id!r}")
        return int(seq) if epoch == self.epoch else None

    def listening(self) -> int:
        with self.lock:
            return sum(len(v) for v in self.listeners.values())

