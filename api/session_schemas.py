"""The REST shapes of the session context (ADR 0063): a key's value, a message, their TTL."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field

from graphmem.config import SessionContextConfig
from graphmem.engine.session_context import NAME_PATTERN

#: a session id or a context key (path-safe: no "/", no leading dot)
SESSION_PATTERN = f"^{NAME_PATTERN}$"
_DEFAULTS = SessionContextConfig()
_JSON_VALUE = {"description": "any JSON value, at most "
                              f"{_DEFAULTS.max_value_bytes} bytes as compact UTF-8 JSON",
               "x-max-bytes": _DEFAULTS.max_value_bytes}
SessionPath = Annotated[str, Path(description="a session id", pattern=SESSION_PATTERN,
                                  examples=["chat-42"])]
KeyPath = Annotated[str, Path(description="a context key", pattern=SESSION_PATTERN,
                              examples=["plan"])]
Ttl = Annotated[float | None, Field(
    default=None, gt=0, le=_DEFAULTS.max_ttl_seconds,
    description="seconds until it expires (default: the server's sessions.ttl_seconds, "
                "one hour)")]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContextIn(_In):
    """A value to set under a key of the session's context.

    Example:
        >>> ContextIn(value={"step": 2}, ttl=60).ttl
        60.0
    """

    value: Annotated[Any, Field(json_schema_extra=_JSON_VALUE)]
    ttl: Ttl = None


class MessageIn(_In):
    """A message to append to the session's recent messages.

    Example:
        >>> MessageIn(message={"role": "user", "content": "hi"}).ttl is None
        True
    """

    message: Annotated[Any, Field(json_schema_extra=_JSON_VALUE)]
    ttl: Ttl = None


class ContextEntryOut(BaseModel):
    """One key of a session's context and when it expires.

    Example:
        >>> ContextEntryOut(key="plan", value=[1], expires_at="2026-01-01T00:00:00Z").value
        [1]
    """

    key: str
    value: Any
    expires_at: datetime


class ContextOut(BaseModel):
    """A session's unexpired context, by key.

    Example:
        >>> ContextOut(session_id="chat-42", entries=[]).entries
        []
    """

    session_id: str
    entries: list[ContextEntryOut]


class MessagesOut(BaseModel):
    """A session's unexpired messages, oldest first.

    Example:
        >>> MessagesOut(session_id="chat-42", messages=["hi"]).messages
        ['hi']
    """

    session_id: str
    messages: list[Any]


class MessageAddedOut(BaseModel):
    """When the message just added expires.

    Example:
        >>> MessageAddedOut(expires_at="2026-01-01T00:00:00Z").expires_at.year
        2026
    """

    expires_at: datetime


class RemovedOut(BaseModel):
    """How many context entries or messages a delete removed (0 when there were none).

    Example:
        >>> RemovedOut(deleted=2).deleted
        2
    """

    deleted: int
