"""The graphmem calls ``GraphMemStore`` (``graphmem.integrations.langgraph``) makes, on a
``GraphMemory`` or a ``GraphMemClient`` (the client mirrors the facade's verbs), and on an
``AsyncGraphMemClient``; without LangGraph."""

from __future__ import annotations

import contextlib
from typing import Any

from graphmem.errors import NotFoundError
from graphmem.models import Memory

#: a listing's page (the REST bound)
PAGE = 1000


class Backend:
    """The calls the op logic makes, on a ``GraphMemory`` or a ``GraphMemClient``.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     calls = Backend(mem)
        ...     calls.store("lg:docs", "a", "a note\\n[a]", {"k": 1}, None, True)
        ...     calls.get("lg:docs", "a").metadata, calls.get("lg:docs", "b")
        ({'k': 1}, None)
    """

    def __init__(self, target: Any) -> None:
        self.target = target

    def get(self, ns: str, id: str) -> Memory | None:
        try:
            return self.target.get(id, namespace=ns)
        except NotFoundError:
            return None

    def store(self, ns: str, id: str, content: str, metadata: dict[str, Any],
              ttl: float | None, pinned: bool) -> None:
        extra = {} if ttl is None else {"ttl": ttl}
        self.target.store(content, namespace=ns, id=id, metadata=metadata, pinned=pinned,
                          source="langgraph", **extra)

    def update(self, ns: str, id: str, content: str, metadata: dict[str, Any],
               ttl: float | None) -> None:
        extra = {} if ttl is None else {"ttl": ttl}
        self.target.update(id, namespace=ns, content=content, metadata=metadata, **extra)

    def refresh(self, ns: str, id: str, ttl: float) -> None:
        self.target.update(id, namespace=ns, ttl=ttl)

    def delete(self, ns: str, id: str) -> None:
        with contextlib.suppress(NotFoundError):
            self.target.delete(id, namespace=ns)

    def listing(self, ns: str, limit: int | None = None) -> list[Memory]:
        out: list[Memory] = []
        cursor = None
        while True:
            page = self.target.list_page(namespace=ns, sort="created_at", order="asc",
                                         limit=min(PAGE, limit or PAGE), cursor=cursor)
            out += page.items
            if page.next_cursor is None or (limit and len(out) >= limit):
                return out
            cursor = page.next_cursor

    def retrieve(self, ns: str, query: str, limit: int) -> list[tuple[str, float]]:
        return [(r.memory.id, r.score)
                for r in self.target.retrieve(query, namespace=ns, limit=limit)]

    def namespaces(self) -> list[str]:
        return list(self.target.namespaces())


class AsyncBackend(Backend):
    """The same calls on an ``AsyncGraphMemClient``.

    Example:
        >>> import inspect
        >>> inspect.iscoroutinefunction(AsyncBackend.get)
        True
    """

    async def get(self, ns: str, id: str) -> Memory | None:  # type: ignore[override]
        try:
            return await self.target.get(id, namespace=ns)
        except NotFoundError:
            return None

    async def store(self, ns: str, id: str, content: str,  # type: ignore[override]
                    metadata: dict[str, Any], ttl: float | None, pinned: bool) -> None:
        extra = {} if ttl is None else {"ttl": ttl}
        await self.target.store(content, namespace=ns, id=id, metadata=metadata,
                                pinned=pinned, source="langgraph", **extra)

    async def update(self, ns: str, id: str, content: str,  # type: ignore[override]
                     metadata: dict[str, Any], ttl: float | None) -> None:
        extra = {} if ttl is None else {"ttl": ttl}
        await self.target.update(id, namespace=ns, content=content, metadata=metadata,
                                 **extra)

    async def refresh(self, ns: str, id: str, ttl: float) -> None:  # type: ignore[override]
        await self.target.update(id, namespace=ns, ttl=ttl)

    async def delete(self, ns: str, id: str) -> None:  # type: ignore[override]
        with contextlib.suppress(NotFoundError):
            await self.target.delete(id, namespace=ns)

    async def listing(self, ns: str,  # type: ignore[override]
                   limit: int | None = None) -> list[Memory]:
        out: list[Memory] = []
        cursor = None
        while True:
            page = await self.target.list_page(namespace=ns, sort="created_at", order="asc",
                                               limit=min(PAGE, limit or PAGE), cursor=cursor)
            out += page.items
            if page.next_cursor is None or (limit and len(out) >= limit):
                return out
            cursor = page.next_cursor

    async def retrieve(self, ns: str, query: str,  # type: ignore[override]
                       limit: int) -> list[tuple[str, float]]:
        return [(r.memory.id, r.score)
                for r in await self.target.retrieve(query, namespace=ns, limit=limit)]

    async def namespaces(self) -> list[str]:  # type: ignore[override]
        return list(await self.target.namespaces())
