"""graphmem as a Model Context Protocol server (official ``mcp`` SDK): the tools an agent
needs - remember, recall, recall_index, timeline, entries, relate, feedback, pin.

Every tool takes a ``namespace``; the server only serves the namespaces it was started for
(``allowed``; ``*`` for all). Tool errors come back as MCP tool errors with graphmem's message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from graphmem.api.auth import Principal, authorize
from graphmem.errors import GraphMemError
from graphmem.memory import GraphMemory

#: who is calling over HTTP (set by the API's key check); None on stdio, where the command
#: line's allow-list decides
PRINCIPAL: ContextVar[Principal | None] = ContextVar("graphmem_mcp_principal", default=None)
WRITE_TOOLS = {"remember", "relate", "feedback", "pin"}


def build_server(memory: GraphMemory | Callable[[], GraphMemory],
                 allowed: Collection[str] = ("*",)) -> MCPServer:
    """The MCP server over ``memory`` (or a function returning it, for the API's lifespan)."""
    server = MCPServer(name="graphmem", instructions=(
        "Long-term memory. remember() what is worth keeping; recall() before answering; "
        "recall_index() for cheap previews, then entries() for the few you need; "
        "feedback() on what helped."))
    allow = set(allowed)
    get = memory if callable(memory) and not isinstance(memory, GraphMemory) else (
        lambda: memory)

    def ns(namespace: str, role: str = "reader") -> str:
        return authorize(PRINCIPAL.get(), namespace, role, served=allow)

    def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn``; graphmem's errors reach the agent with their message."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except GraphMemError as exc:
                raise ToolError(f"{exc.code}: {exc}") from exc

        return server.tool()(wrapper)

    @tool
    def remember(content: str, namespace: str, importance: float = 0.5,
                 session_id: str | None = None, source: str | None = None,
                 metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """Store a memory (an exact duplicate reinforces the existing one)."""
        return get().store(content, namespace=ns(namespace, "writer"), importance=importance,
                         session_id=session_id, source=source, metadata=metadata).to_dict()

    @tool
    def recall(query: str, namespace: str, limit: int = 5, depth: int | None = None,
               include_archived: bool | None = None, record_access: bool = True
               ) -> list[dict[str, Any]]:
        """Full retrieval: memories with score, score terms, path and disputed flag.
        ``include_archived`` reaches archived memories through their summaries;
        ``record_access=False`` looks without counting an access."""
        return [r.to_dict() for r in get().retrieve(query, namespace=ns(namespace), limit=limit,
                                                  depth=depth, include_archived=include_archived,
                                                  record_access=record_access)]

    @tool
    def recall_index(query: str, namespace: str, limit: int = 10) -> list[dict[str, Any]]:
        """Compact previews (id, ~80 characters, tier, score, token estimate)."""
        return [e.to_dict() for e in get().search_index(query, namespace=ns(namespace),
                                                      limit=limit)]

    @tool
    def timeline(anchor_id: str, namespace: str, before: int = 3, after: int = 3
                 ) -> list[dict[str, Any]]:
        """The memories around one memory in time (its session when it has one)."""
        return [m.to_dict() for m in get().timeline(anchor_id, namespace=ns(namespace),
                                                  before=before, after=after)]

    @tool
    def entries(ids: list[str], namespace: str) -> list[dict[str, Any]]:
        """Full records of the given memory ids."""
        return [m.to_dict() for m in get().entries(ids, namespace=ns(namespace))]

    @tool
    def relate(source_id: str, target_id: str, type: str, namespace: str) -> dict[str, Any]:
        """Relate two memories: CAUSES, REFERENCES, SIMILAR_TO or CONTRADICTS."""
        return get().relate(source_id, target_id, type,
                            namespace=ns(namespace, "writer")).to_dict()

    @tool
    def feedback(id: str, namespace: str, useful: bool | None = None,
                 outcome: str | None = None) -> dict[str, Any]:
        """Say whether a recalled memory helped (useful) or led to success / failure."""
        return get().feedback(id, namespace=ns(namespace, "writer"), useful=useful,
                            outcome=outcome).to_dict()

    @tool
    def pin(id: str, namespace: str) -> dict[str, Any]:
        """Pin a memory: never demoted, expired or evicted."""
        return get().pin(id, namespace=ns(namespace, "writer")).to_dict()

    return server
