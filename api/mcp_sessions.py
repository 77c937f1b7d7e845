"""The session context as MCP tools (issue 48): context_set / context_get / context_list /
context_delete, message_add / messages. ``register`` adds them to ``build_server``'s server
with its error wrapper and namespace check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphmem.memory import GraphMemory


def register(tool: Callable[[Callable[..., Any]], Any], get: Callable[[], GraphMemory],
             ns: Callable[..., str]) -> None:
    """Register the tools: ``tool`` wraps and registers one, ``get`` gives the memory,
    ``ns(namespace, role)`` checks the caller may use the namespace."""

    @tool
    def context_set(session_id: str, key: str, value: Any, namespace: str,
                    ttl: float | None = None) -> dict[str, Any]:
        """Set a key of a session's short-term context (any JSON value); it expires ttl
        seconds from now (default one hour)."""
        return get().context_set(session_id, key, value, ttl=ttl,
                                 namespace=ns(namespace, "writer")).to_dict()

    @tool
    def context_get(session_id: str, key: str, namespace: str) -> dict[str, Any]:
        """One key of a session's context: found false when missing or expired."""
        entry = get().context_entry(session_id, key, namespace=ns(namespace))
        return {"found": False, "key": key, "value": None} if entry is None else {
            "found": True} | entry.to_dict()

    @tool
    def context_list(session_id: str, namespace: str) -> dict[str, Any]:
        """A session's unexpired context as {key: value}."""
        return get().context_list(session_id, namespace=ns(namespace))

    @tool
    def context_delete(session_id: str, namespace: str, key: str | None = None
                       ) -> dict[str, int]:
        """Delete one key of a session's context, or (no key) all of it."""
        return {"deleted": get().context_delete(session_id, key,
                                                namespace=ns(namespace, "writer"))}

    @tool
    def message_add(session_id: str, message: Any, namespace: str,
                    ttl: float | None = None) -> dict[str, str]:
        """Append a message (any JSON value) to a session's recent messages (the newest 50
        are kept; each expires ttl seconds from now, default one hour)."""
        at = get().message_add(session_id, message, ttl=ttl, namespace=ns(namespace, "writer"))
        return {"expires_at": at.isoformat()}

    @tool
    def messages(session_id: str, namespace: str, limit: int | None = None) -> list[Any]:
        """A session's unexpired recent messages, oldest first (limit: only the newest)."""
        return get().messages(session_id, namespace=ns(namespace), limit=limit)
