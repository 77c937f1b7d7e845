"""/v1/sessions/{session_id}: the short-term session context (ADR 0063): keys with a TTL and
the capped list of recent messages, scoped by the key's namespaces as every route."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from graphmem.api import session_schemas as c
from graphmem.api.auth import authorize
from graphmem.api.deps import Auth, Mem, NsQuery
from graphmem.errors import NotFoundError

router = APIRouter(prefix="/v1/sessions/{session_id}", tags=["sessions"])


@router.get("/context", response_model=c.ContextOut)
def list_context(session_id: c.SessionPath, namespace: NsQuery, who: Auth, mem: Mem) -> Any:
    """Every unexpired key of the session's context, by key."""
    entries = mem.context_entries(session_id, namespace=authorize(who, namespace))
    return {"session_id": session_id, "entries": [e.to_dict() for e in entries]}


@router.delete("/context", response_model=c.RemovedOut)
def delete_context(session_id: c.SessionPath, namespace: NsQuery, who: Auth,
                   mem: Mem) -> Any:
    """Delete the session's whole context."""
    return {"deleted": mem.context_delete(session_id,
                                          namespace=authorize(who, namespace, "writer"))}


@router.put("/context/{key}", response_model=c.ContextEntryOut)
def set_context(session_id: c.SessionPath, key: c.KeyPath, namespace: NsQuery,
                body: c.ContextIn, who: Auth, mem: Mem) -> Any:
    """Set or replace one key; it expires ``ttl`` seconds from now (default one hour)."""
    return mem.context_set(session_id, key, body.value, ttl=body.ttl,
                           namespace=authorize(who, namespace, "writer")).to_dict()


@router.get("/context/{key}", response_model=c.ContextEntryOut)
def get_context(session_id: c.SessionPath, key: c.KeyPath, namespace: NsQuery, who: Auth,
                mem: Mem) -> Any:
    """One key's value and expiry; 404 when it is missing or expired."""
    entry = mem.context_entry(session_id, key, namespace=authorize(who, namespace))
    if entry is None:
        raise NotFoundError(f"no context key {key!r} in session {session_id!r}")
    return entry.to_dict()


@router.delete("/context/{key}", response_model=c.RemovedOut)
def delete_context_key(session_id: c.SessionPath, key: c.KeyPath, namespace: NsQuery,
                       who: Auth, mem: Mem) -> Any:
    """Delete one key (``deleted``: 0 when there was none)."""
    return {"deleted": mem.context_delete(session_id, key,
                                          namespace=authorize(who, namespace, "writer"))}


@router.get("/messages", response_model=c.MessagesOut)
def list_messages(session_id: c.SessionPath, namespace: NsQuery, who: Auth, mem: Mem,
                  limit: Annotated[int | None, Query(ge=1, le=10_000)] = None) -> Any:
    """The session's unexpired messages, oldest first (``limit``: only the newest)."""
    found = mem.messages(session_id, namespace=authorize(who, namespace), limit=limit)
    return {"session_id": session_id, "messages": found}


@router.post("/messages", status_code=201, response_model=c.MessageAddedOut)
def add_message(session_id: c.SessionPath, namespace: NsQuery, body: c.MessageIn,
                who: Auth, mem: Mem) -> Any:
    """Append a message; the session keeps its newest ``sessions.max_messages`` (50)."""
    return {"expires_at": mem.message_add(session_id, body.message, ttl=body.ttl,
                                          namespace=authorize(who, namespace, "writer"))}


@router.delete("/messages", response_model=c.RemovedOut)
def clear_messages(session_id: c.SessionPath, namespace: NsQuery, who: Auth,
                   mem: Mem) -> Any:
    """Delete every message of the session."""
    return {"deleted": mem.messages_clear(session_id,
                                          namespace=authorize(who, namespace, "writer"))}
