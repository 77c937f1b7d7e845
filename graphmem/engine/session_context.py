"""The short-term session context of the Aurora design (issue 48): per-session key/value
entries and a capped list of recent messages, each expiring ``ttl`` after its write.

They live in the store (``MemoryStore.context_*``), so every replica sharing it sees the same
context; time is the facade's clock: an entry past its expiry is never returned (the stores
compare at read time) and maintenance purges it. ``SessionContext`` does the work of the
facade's session-context methods over a ``Core``."""

from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from graphmem.errors import LimitExceededError, ValidationError
from graphmem.rules import validation as v

if TYPE_CHECKING:
    from graphmem.engine.core import Core

log = logging.getLogger(__name__)

#: a session id or key: path-safe in REST (no "/", no leading dot), as a namespace name
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}"
_NAME = re.compile(NAME_PATTERN)


@dataclass(frozen=True, slots=True)
class ContextEntry:
    """One key of a session's context and when it expires.

    Example:
        >>> from datetime import UTC, datetime
        >>> ContextEntry("plan", {"step": 2}, datetime(2026, 1, 1, tzinfo=UTC)).to_dict()
        {'key': 'plan', 'value': {'step': 2}, 'expires_at': '2026-01-01T00:00:00+00:00'}
    """

    key: str
    value: Any
    expires_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "expires_at": self.expires_at.isoformat()}


def name(value: Any, what: str) -> str:
    """A session id or key, else ``ValidationError``.

    Example:
        >>> name("chat-42", "session id")
        'chat-42'
    """
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValidationError(f"invalid {what} {value!r}: 1-128 characters of letters, "
                              "digits and _.:@- starting with a letter or digit")
    return value


def encode(value: Any, limit: int, what: str = "value") -> str:
    """``value`` as compact JSON, bounded by ``limit`` UTF-8 bytes (as memory metadata).

    Example:
        >>> encode({"step": "ünïcode"}, 100)
        '{"step":"ünïcode"}'
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        size = len(text.encode("utf-8"))
    except (TypeError, ValueError, RecursionError) as exc:  # a lone surrogate: ValueError
        raise ValidationError(f"the {what} cannot be stored as JSON: {exc}") from None
    if size > limit:
        raise LimitExceededError(f"the value is too large: the {what} is {size} bytes of UTF-8 "
                                 f"JSON, the limit is {limit}")
    return text


def ttl_seconds(value: Any, default: float, longest: float) -> float:
    """A TTL in seconds (a number or a ``timedelta``; None: ``default``), in (0, longest].

    Example:
        >>> ttl_seconds(None, 3600, 86400), ttl_seconds(timedelta(minutes=5), 3600, 86400)
        (3600, 300.0)
    """
    if value is None:
        return default
    if isinstance(value, timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or value <= 0:
        raise ValidationError(f"ttl must be a positive number of seconds, got {value!r}")
    if value > longest:
        raise LimitExceededError(f"ttl must be at most {longest:g} seconds, got {value:g}")
    return float(value)


class SessionContext:
    """Session context entries and recent messages in the core's store, on the core's clock
    (``GraphMemory.context_*`` and ``message*`` delegate here).

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     _ = mem.context_set("chat-1", "plan", {"step": 2}, namespace="ops")
        ...     _ = mem.message_add("chat-1", {"role": "user", "content": "hi"}, namespace="ops")
        ...     mem.context_list("chat-1", namespace="ops"), mem.messages("chat-1", namespace="ops")
        ({'plan': {'step': 2}}, [{'role': 'user', 'content': 'hi'}])
    """

    def __init__(self, core: Core) -> None:
        self.core = core

    def _expiry(self, ttl: Any) -> tuple[datetime, datetime]:
        cfg = self.core.config.sessions
        now = self.core.clock()
        return now, now + timedelta(seconds=ttl_seconds(ttl, cfg.ttl_seconds,
                                                        cfg.max_ttl_seconds))

    def context_set(self, namespace: str, session_id: str, key: str, value: Any,
                    ttl: float | timedelta | None) -> ContextEntry:
        ns, sid, k = v.namespace(namespace), name(session_id, "session id"), name(key, "key")
        text = encode(value, self.core.config.sessions.max_value_bytes)
        _, expires_at = self._expiry(ttl)
        self.core.store.context_put(ns, sid, k, text, expires_at)
        return ContextEntry(k, json.loads(text), expires_at)

    def context_entry(self, namespace: str, session_id: str, key: str) -> ContextEntry | None:
        ns, sid, k = v.namespace(namespace), name(session_id, "session id"), name(key, "key")
        found = self.core.store.context_get(ns, sid, k, self.core.clock())
        return None if found is None else ContextEntry(k, json.loads(found[0]), found[1])

    def context_entries(self, namespace: str, session_id: str) -> list[ContextEntry]:
        ns, sid = v.namespace(namespace), name(session_id, "session id")
        return [ContextEntry(k, json.loads(text), at) for k, text, at in
                self.core.store.context_list(ns, sid, self.core.clock())]

    def context_delete(self, namespace: str, session_id: str, key: str | None) -> int:
        ns, sid = v.namespace(namespace), name(session_id, "session id")
        return self.core.store.context_delete(ns, sid, None if key is None
                                              else name(key, "key"))

    def message_add(self, namespace: str, session_id: str, message: Any,
                    ttl: float | timedelta | None) -> datetime:
        ns, sid = v.namespace(namespace), name(session_id, "session id")
        cfg = self.core.config.sessions
        text = encode(message, cfg.max_value_bytes, "message")
        now, expires_at = self._expiry(ttl)
        self.core.store.message_append(ns, sid, text, cfg.max_messages, now, expires_at)
        return expires_at

    def messages(self, namespace: str, session_id: str, limit: int | None) -> list[Any]:
        ns, sid = v.namespace(namespace), name(session_id, "session id")
        cap = self.core.config.sessions.max_messages
        n = cap if limit is None else min(cap, v.bounded(limit, "limit", 1, 10_000))
        return [json.loads(text) for text, _, _ in
                self.core.store.messages(ns, sid, self.core.clock(), n)]

    def messages_clear(self, namespace: str, session_id: str) -> int:
        ns, sid = v.namespace(namespace), name(session_id, "session id")
        return self.core.store.messages_clear(ns, sid)
