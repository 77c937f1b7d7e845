"""The session context over REST (ADR 0063), mixed into both clients: the facade's
``context_*`` and ``message*`` methods, the same answers (a missing or expired key: None)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from graphmem.engine.session_context import ContextEntry, name
from graphmem.errors import NotFoundError
from graphmem.rules import validation as v

Call = tuple[str, str, Any, Any]


def _path(session_id: str, tail: str = "") -> str:
    """The session's route; ids are checked here, so a bad one is a ValidationError (not a
    route the server does not have)."""
    return f"/v1/sessions/{quote(name(session_id, 'session id'), safe='')}{tail}"


def _key_path(session_id: str, key: str) -> str:
    return _path(session_id, f"/context/{quote(name(key, 'key'), safe='')}")


def _ttl(ttl: float | timedelta | None) -> float | None:
    return ttl.total_seconds() if isinstance(ttl, timedelta) else ttl


def _entry(row: dict[str, Any]) -> ContextEntry:
    at = v.timestamp(row["expires_at"])
    assert at is not None  # the schema requires it
    return ContextEntry(row["key"], row["value"], at)


# the session routes as (method, path, params, json)
def _put(ns: str, sid: str, key: str, value: Any, ttl: float | timedelta | None) -> Call:
    return "PUT", _key_path(sid, key), {"namespace": ns}, {"value": value, "ttl": _ttl(ttl)}


def _key(method: str, ns: str, sid: str, key: str) -> Call:
    return method, _key_path(sid, key), {"namespace": ns}, None


def _session(method: str, ns: str, sid: str, tail: str, params: Any = None,
             body: Any = None) -> Call:
    return method, _path(sid, tail), {"namespace": ns} | (params or {}), body


class SessionMethods:
    """``GraphMemClient``'s session-context methods.

    Example:
        >>> from graphmem.client import GraphMemClient
        >>> client = GraphMemClient("http://127.0.0.1:8765", "gm_...")
        >>> _ = client.context_set("chat-42", "plan", {"step": 2},  # doctest: +SKIP
        ...                        namespace="ops", ttl=600)
        >>> client.context_get("chat-42", "plan", namespace="ops")  # doctest: +SKIP
        {'step': 2}
    """

    if TYPE_CHECKING:
        def _do(self, call: Call) -> Any: ...

    def context_set(self, session_id: str, key: str, value: Any, *, namespace: str,
                    ttl: float | timedelta | None = None) -> ContextEntry:
        return _entry(self._do(_put(namespace, session_id, key, value, ttl)))

    def context_entry(self, session_id: str, key: str, *, namespace: str
                      ) -> ContextEntry | None:
        try:
            return _entry(self._do(_key("GET", namespace, session_id, key)))
        except NotFoundError:
            return None

    def context_get(self, session_id: str, key: str, *, namespace: str) -> Any | None:
        entry = self.context_entry(session_id, key, namespace=namespace)
        return None if entry is None else entry.value

    def context_entries(self, session_id: str, *, namespace: str) -> list[ContextEntry]:
        out = self._do(_session("GET", namespace, session_id, "/context"))
        return [_entry(row) for row in out["entries"]]

    def context_list(self, session_id: str, *, namespace: str) -> dict[str, Any]:
        return {e.key: e.value for e in self.context_entries(session_id, namespace=namespace)}

    def context_delete(self, session_id: str, key: str | None = None, *,
                       namespace: str) -> int:
        call = (_session("DELETE", namespace, session_id, "/context") if key is None
                else _key("DELETE", namespace, session_id, key))
        return int(self._do(call)["deleted"])

    def message_add(self, session_id: str, message: Any, *, namespace: str,
                    ttl: float | timedelta | None = None) -> datetime:
        out = self._do(_session("POST", namespace, session_id, "/messages",
                                body={"message": message, "ttl": _ttl(ttl)}))
        return datetime.fromisoformat(out["expires_at"])

    def messages(self, session_id: str, *, namespace: str, limit: int | None = None
                 ) -> list[Any]:
        params = {} if limit is None else {"limit": limit}
        return list(self._do(_session("GET", namespace, session_id, "/messages",
                                      params))["messages"])

    def messages_clear(self, session_id: str, *, namespace: str) -> int:
        return int(self._do(_session("DELETE", namespace, session_id, "/messages"))["deleted"])


class AsyncSessionMethods:
    """``AsyncGraphMemClient``'s session-context methods (the same, awaited).

    Example:
        >>> from graphmem.client import AsyncGraphMemClient
        >>> client = AsyncGraphMemClient("http://127.0.0.1:8765", "gm_...")
        >>> _ = await client.context_set("chat-42", "plan", {"step": 2},  # doctest: +SKIP
        ...                              namespace="ops", ttl=600)
        >>> await client.context_get("chat-42", "plan", namespace="ops")  # doctest: +SKIP
        {'step': 2}
    """

    if TYPE_CHECKING:
        async def _do(self, call: Call) -> Any: ...

    async def context_set(self, session_id: str, key: str, value: Any, *, namespace: str,
                          ttl: float | timedelta | None = None) -> ContextEntry:
        return _entry(await self._do(_put(namespace, session_id, key, value, ttl)))

    async def context_entry(self, session_id: str, key: str, *, namespace: str
                            ) -> ContextEntry | None:
        try:
            return _entry(await self._do(_key("GET", namespace, session_id, key)))
        except NotFoundError:
            return None

    async def context_get(self, session_id: str, key: str, *, namespace: str) -> Any | None:
        entry = await self.context_entry(session_id, key, namespace=namespace)
        return None if entry is None else entry.value

    async def context_entries(self, session_id: str, *, namespace: str
                              ) -> list[ContextEntry]:
        out = await self._do(_session("GET", namespace, session_id, "/context"))
        return [_entry(row) for row in out["entries"]]

    async def context_list(self, session_id: str, *, namespace: str) -> dict[str, Any]:
        entries = await self.context_entries(session_id, namespace=namespace)
        return {e.key: e.value for e in entries}

    async def context_delete(self, session_id: str, key: str | None = None, *,
                             namespace: str) -> int:
        call = (_session("DELETE", namespace, session_id, "/context") if key is None
                else _key("DELETE", namespace, session_id, key))
        return int((await self._do(call))["deleted"])

    async def message_add(self, session_id: str, message: Any, *, namespace: str,
                          ttl: float | timedelta | None = None) -> datetime:
        out = await self._do(_session("POST", namespace, session_id, "/messages",
                                      body={"message": message, "ttl": _ttl(ttl)}))
        return datetime.fromisoformat(out["expires_at"])

    async def messages(self, session_id: str, *, namespace: str, limit: int | None = None
                       ) -> list[Any]:
        params = {} if limit is None else {"limit": limit}
        out = await self._do(_session("GET", namespace, session_id, "/messages", params))
        return list(out["messages"])

    async def messages_clear(self, session_id: str, *, namespace: str) -> int:
        out = await self._do(_session("DELETE", namespace, session_id, "/messages"))
        return int(out["deleted"])
