"""graphmem as a Model Context Protocol server (official ``mcp`` SDK): the tools an agent
needs - remember, recall, recall_index, timeline, entries, relate, feedback, pin, and what
agents remember: list_memories, history, supersede, capture_tool, record_consensus,
record_dissent, find_similar, stream, summarize; and the session context: context_set /
context_get / context_list / context_delete, message_add / messages.

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


def build_server(memory: GraphMemory | Callable[[], GraphMemory],
                 allowed: Collection[str] = ("*",)) -> MCPServer:
    """The MCP server over ``memory`` (or a function returning it, for the API's lifespan)."""
    server = MCPServer(name="graphmem", instructions=(
        "Long-term memory. remember() what is worth keeping; recall() before answering; "
        "recall_index() for cheap previews, then entries() for the few you need; "
        "feedback() on what helped."))
    allow = set(allowed)
    get = memory if callable(memory) else (lambda: memory)

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
    def remember(content: str, namespace: str, importance: float | None = None,
                 session_id: str | None = None, source: str | None = None,
                 metadata: dict[str, Any] | None = None, type: str | None = None,
                 ttl: float | None = None) -> dict[str, Any]:
        """Store a memory (an exact duplicate reinforces the existing one). ``type``:
        observation (default), decision, pattern, reflexion, conflict, ... (sets the entry
        tier and importance unless given). ``ttl``: seconds it lives; then recall leaves it
        out and it shows status expired (restorable)."""
        return get().store(content, namespace=ns(namespace, "writer"), importance=importance,
                         session_id=session_id, source=source, metadata=metadata,
                         type=type, ttl=ttl).to_dict()

    @tool
    def recall(query: str, namespace: str, limit: int = 5, depth: int | None = None,
               include_archived: bool | None = None, record_access: bool = True,
               type: list[str] | None = None, since: str | None = None,
               until: str | None = None, as_of: str | None = None,
               now: str | None = None) -> list[dict[str, Any]]:
        """Full retrieval: memories with score, score terms, path and disputed flag.
        Archived memories are reached through their summaries, below active ones;
        ``include_archived`` true ranks them as if active, false leaves them out;
        ``record_access=False`` looks without counting an access; ``type`` keeps those
        memory types; ``since`` / ``until`` bound the event time (ISO 8601); ``as_of``
        answers as of that time (what was known and valid then). A time the query names
        ("in July 2023", "last week") lifts that time's memories; ``now`` (ISO 8601) is the
        reference of relative ones (default: the server's clock)."""
        return [r.to_dict() for r in get().retrieve(
            query, namespace=ns(namespace), limit=limit, depth=depth,
            include_archived=include_archived, record_access=record_access,
            filters={"type": type} if type else None, since=since, until=until,
            as_of=as_of, now=now)]

    @tool
    def recall_index(query: str, namespace: str, limit: int = 10,
                     type: list[str] | None = None, since: str | None = None,
                     until: str | None = None, now: str | None = None
                     ) -> list[dict[str, Any]]:
        """Compact previews (id, ~80 characters, tier, score, token estimate); ``type``,
        ``since``, ``until`` and ``now`` as in recall."""
        return [e.to_dict() for e in get().search_index(
            query, namespace=ns(namespace), limit=limit,
            filters={"type": type} if type else None, since=since, until=until, now=now)]

    @tool
    def timeline(anchor_id: str, namespace: str, before: int = 3, after: int = 3
                 ) -> list[dict[str, Any]]:
        """The memories around one memory in time (its session when it has one)."""
        return [m.to_dict() for m in get().timeline(anchor_id, namespace=ns(namespace),
                                                  before=before, after=after)]

    @tool
    def entries(ids: list[str], namespace: str, agent: str | None = None
                ) -> list[dict[str, Any]]:
        """Full records of the given memory ids (agent: who reads them; memories several
        agents use are promoted)."""
        return [m.to_dict() for m in get().entries(ids, namespace=ns(namespace), agent=agent)]

    @tool
    def relate(source_id: str, target_id: str, type: str, namespace: str) -> dict[str, Any]:
        """Relate two memories: CAUSES, REFERENCES, SIMILAR_TO or CONTRADICTS."""
        return get().relate(source_id, target_id, type,
                            namespace=ns(namespace, "writer")).to_dict()

    @tool
    def feedback(id: str, namespace: str, useful: bool | None = None,
                 outcome: str | None = None, agent: str | None = None) -> dict[str, Any]:
        """Say whether a recalled memory helped (useful) or led to success / failure
        (agent: who says it; memories several agents use are promoted)."""
        return get().feedback(id, namespace=ns(namespace, "writer"), useful=useful,
                              outcome=outcome, agent=agent).to_dict()

    @tool
    def pin(id: str, namespace: str) -> dict[str, Any]:
        """Pin a memory: never demoted, expired or evicted."""
        return get().pin(id, namespace=ns(namespace, "writer")).to_dict()

    @tool
    def list_memories(namespace: str, type: str | None = None, source: str | None = None,
                      since: str | None = None, until: str | None = None,
                      sort: str = "created_at", order: str = "desc", limit: int = 20,
                      cursor: str | None = None) -> dict[str, Any]:
        """List memories with filters (type, source = agent, event time since / until),
        sorted, a page at a time: pass next_cursor for the next page."""
        return get().list_page(namespace=ns(namespace), type=type, source=source, since=since,
                               until=until, sort=sort, order=order, limit=limit,
                               cursor=cursor).to_dict()

    @tool
    def history(id: str, namespace: str) -> list[dict[str, Any]]:
        """Every version of a memory's content and every change, oldest first."""
        return [e.to_dict() for e in get().history(id, namespace=ns(namespace))]

    @tool
    def supersede(old_id: str, new_id: str, namespace: str) -> dict[str, Any]:
        """new_id replaces old_id: the old memory's validity ends, the two are linked."""
        return get().supersede(old_id, new_id, namespace=ns(namespace, "writer")).to_dict()

    @tool
    def capture_tool(agent: str, tool: str, input: str, output: str, ok: bool,
                     namespace: str) -> dict[str, Any]:
        """Record one tool call (fast tier); captured is false when skipped or over the cap."""
        m = get().capture_tool(agent=agent, tool=tool, input=input, output=output, ok=ok,
                               namespace=ns(namespace, "writer"))
        return {"captured": m is not None, "memory": None if m is None else m.to_dict()}

    @tool
    def record_consensus(topic: str, conclusion: str, namespace: str,
                         participants: list[str] | None = None, confidence: float = 0.8,
                         evidence_ids: list[str] | None = None) -> dict[str, Any]:
        """Record a debate's consensus on a topic."""
        return get().record_consensus(topic, conclusion, namespace=ns(namespace, "writer"),
                                      participants=participants or [], confidence=confidence,
                                      evidence_ids=evidence_ids or []).to_dict()

    @tool
    def record_dissent(topic: str, agent: str, position: str, namespace: str,
                       against: str | None = None) -> dict[str, Any]:
        """Record an agent's dissent on a topic, against a consensus id."""
        return get().record_dissent(topic, agent, position, namespace=ns(namespace, "writer"),
                                    against=against).to_dict()

    @tool
    def find_similar(topic: str, namespace: str, limit: int = 5) -> list[dict[str, Any]]:
        """Past consensus on topics like this one, with the dissent against each."""
        return [r.to_dict() for r in get().find_similar(topic, namespace=ns(namespace),
                                                        limit=limit)]

    @tool
    def stream(agent: str, namespace: str, since: str | None = None, until: str | None = None,
               limit: int = 20, cursor: str | None = None) -> dict[str, Any]:
        """An agent's memories in event-time order, oldest first (next_cursor pages on)."""
        return get().stream(agent, namespace=ns(namespace), since=since, until=until,
                            limit=limit, cursor=cursor).to_dict()

    @tool
    def summarize(namespace: str, agent: str | None = None, session_id: str | None = None,
                  since: str | None = None, until: str | None = None) -> dict[str, Any]:
        """An extractive summary of an agent's (or a session's) memories in a time range,
        with the ids it stands for."""
        return get().summarize(namespace=ns(namespace), agent=agent, session_id=session_id,
                               since=since, until=until).to_dict()

    # the session context (ADR 0063): a session's keys and recent messages, with a TTL
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

    return server
