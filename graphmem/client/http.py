"""``GraphMemClient`` / ``AsyncGraphMemClient``: the REST API from Python (httpx), mirroring
the facade: the same models come back (``Memory``, ``RetrievalResult``, ``Relation``,
``IndexEntry``) and the same ``graphmem.errors`` types are raised, by their codes. A server
that cannot be reached is an ``UnavailableError``; reads that are safe to repeat are retried.

Example:
    >>> from graphmem.client import GraphMemClient
    >>> client = GraphMemClient("http://127.0.0.1:8765", "gm_...")  # doctest: +SKIP
    >>> hits = client.retrieve("why did the deploy fail?", namespace="ops")  # doctest: +SKIP
    >>> hits[0].memory.content  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx

from graphmem import errors
from graphmem.client import events as _events
from graphmem.client import routes, wire
from graphmem.client.sessions import AsyncSessionMethods, SessionMethods
from graphmem.engine.events import MemoryEvent
from graphmem.models import IndexEntry, Memory, MemoryPage, Relation, RetrievalResult

_BY_STATUS: dict[int, type[errors.GraphMemError]] = {
    401: errors.AuthError, 403: errors.ForbiddenError, 404: errors.NotFoundError,
    409: errors.ConflictError, 422: errors.ValidationError, 503: errors.StoreError}
_BY_CODE = {cls.code: cls for cls in (
    errors.InvalidContentError, errors.InvalidImportanceError, errors.InvalidNamespaceError,
    errors.InvalidRelationError, errors.LimitExceededError, errors.NotFoundError,
    errors.ConflictError, errors.StoreError, errors.StoreLockedError, errors.EmbeddingError)}
#: kept for callers of 0.x: the auth errors are ``errors.AuthError`` / ``ForbiddenError``
ApiAuthError = errors.AuthError
_RETRY_STATUS = {502, 503, 504}


def _raise(response: httpx.Response) -> Any:
    if response.status_code < 400:
        return None if response.status_code == 204 else response.json()
    try:
        err = response.json()["error"]
        code, message = err["code"], err["message"]
    except Exception:
        code, message = "http_error", response.text
    if response.status_code in (401, 403):
        raise _BY_STATUS[response.status_code](message, response.status_code)
    cls = _BY_CODE.get(code) or _BY_STATUS.get(response.status_code, errors.GraphMemError)
    raise cls(message)


def _safe(method: str, path: str) -> bool:
    """A call safe to repeat after a failure: it changes nothing (search/index records no
    access)."""
    return method == "GET" or (method, path) == ("POST", "/v1/search/index")


def _unavailable(base: str, exc: Exception) -> errors.UnavailableError:
    return errors.UnavailableError(f"graphmem at {base} could not be reached: "
                                   f"{type(exc).__name__}: {exc}")


def _many(parse: Callable[[Any], Any], rows: Any) -> list[Any]:
    return [parse(r) for r in rows]


def _page(d: Any) -> MemoryPage:
    return MemoryPage(_many(wire.memory, d["items"]), d.get("next_cursor"))


class GraphMemClient(SessionMethods):  # the session context: client.sessions
    """Synchronous client: ``GraphMemClient(url, api_key)``. ``retries``: how often a call
    that changes nothing is repeated after a connection failure or a 502/503/504 (waiting
    ``backoff`` seconds, doubling); a write is never repeated.

    Example:
        >>> client = GraphMemClient("http://127.0.0.1:8765", "gm_...")  # doctest: +SKIP
        >>> m = client.store("the deploy failed", namespace="ops")  # doctest: +SKIP
        >>> client.entries([m.id], namespace="ops")[0].content  # doctest: +SKIP
        'the deploy failed'
    """

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float = 30.0, retries: int = 2, backoff: float = 0.2,
                 transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout,
                                  transport=transport)
        self.retries, self.backoff = retries, backoff

    def _do(self, call: tuple[str, str, Any, Any]) -> Any:
        method, path, params, body = call
        tries = 1 + (self.retries if _safe(method, path) else 0)
        for attempt in range(tries):
            last = attempt == tries - 1
            try:
                response = self._http.request(method, path, params=params, json=body)
            except httpx.TransportError as exc:
                if last:
                    raise _unavailable(str(self._http.base_url), exc) from exc
            else:
                if last or response.status_code not in _RETRY_STATUS:
                    return _raise(response)
            time.sleep(self.backoff * 2 ** attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GraphMemClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- live events (``GET /v1/events``, ADR 0062) -------------------------------------------
    def events(self, *, namespace: str, last_event_id: str | None = None,
               reconnect: bool = True) -> Iterator[MemoryEvent]:
        """What happens to the namespace's memories, as it happens (``MemoryEvent``s, as
        ``GraphMemory.events`` gives them); blocks between events. ``last_event_id``: resume
        after it. A dropped connection is resumed after the last event seen (``reconnect``);
        a ``missed`` event says the server no longer had some. Stop by leaving the loop."""
        return _events.follow(self._http, namespace, last_event_id, reconnect=reconnect,
                              attempts=self.retries, check=_raise)

    def store(self, content: str, *, namespace: str, **fields: Any) -> Memory:
        return wire.memory(self._do(routes.store(namespace, content, **fields)))

    def store_many(self, items: list[dict[str, Any]], *, namespace: str) -> list[Memory]:
        return _many(wire.memory, self._do(routes.store_many(namespace, items)))

    def get(self, id: str, *, namespace: str) -> Memory:
        return wire.memory(self._do(routes.get(namespace, id)))

    def update(self, id: str, *, namespace: str, **fields: Any) -> Memory:
        return wire.memory(self._do(routes.update(namespace, id, **fields)))

    def delete(self, id: str, *, namespace: str) -> None:
        self._do(routes.delete(namespace, id))

    def pin(self, id: str, *, namespace: str) -> Memory:
        return wire.memory(self._do(routes.action(namespace, id, "pin")))

    def unpin(self, id: str, *, namespace: str) -> Memory:
        return wire.memory(self._do(routes.action(namespace, id, "unpin")))

    def restore(self, id: str, *, namespace: str, ttl: float | None = None) -> Memory:
        """Active again; one whose TTL ran out comes back without one unless ``ttl``."""
        return wire.memory(self._do(routes.restore(namespace, id, ttl)))

    def feedback(self, id: str, *, namespace: str, **body: Any) -> Memory:
        return wire.memory(self._do(routes.action(namespace, id, "feedback", body)))

    def relate(self, source_id: str, target_id: str, type: str, *, namespace: str,
               score: float | None = None) -> Relation:
        return wire.relation(self._do(routes.relate(namespace, source_id, target_id, type,
                                                    score)))

    def unrelate(self, source_id: str, target_id: str, type: str, *, namespace: str) -> None:
        self._do(routes.unrelate(namespace, source_id, target_id, type))

    def relations(self, id: str, *, namespace: str) -> list[Relation]:
        return _many(wire.relation, self._do(routes.relations(namespace, id)))

    def retrieve(self, query: str, *, namespace: str, **options: Any
                 ) -> list[RetrievalResult]:
        return _many(wire.result, self._do(routes.search(namespace, query, **options)))

    def search_index(self, query: str, *, namespace: str, **options: Any) -> list[IndexEntry]:
        return _many(wire.index_entry, self._do(routes.search(namespace, query,
                                                              "/v1/search/index", **options)))

    def timeline(self, anchor_id: str, *, namespace: str, before: int = 3,
                 after: int = 3) -> list[Memory]:
        return _many(wire.memory, self._do(routes.timeline(namespace, anchor_id, before,
                                                           after)))

    def entries(self, ids: list[str], *, namespace: str) -> list[Memory]:
        return _many(wire.memory, self._do(routes.entries(namespace, ids)))

    def stats(self, *, namespace: str) -> dict[str, Any]:
        return dict(self._do(routes.stats(namespace)))

    # -- listing (the adapters in graphmem.integrations page through sessions with it) ----
    def list_page(self, *, namespace: str, status: str | None = "active",
                  **filters: Any) -> MemoryPage:
        """``GraphMemory.list_page`` over REST (``GET /v1/memories``): the same filters,
        sort, order, limit and cursor; ``status=None``: every status."""
        return _page(self._do(routes.list_page(namespace, {"status": status, **filters})))

    # -- the namespaces the key may use (LangGraph's store lists its namespaces with it) --
    def namespaces(self) -> list[str]:
        """``GraphMemory.namespaces`` over REST (``GET /v1/whoami``): those holding memories
        that the key may use, and every one it names."""
        return list(self._do(("GET", "/v1/whoami", None, None))["namespaces"])


class AsyncGraphMemClient(AsyncSessionMethods):  # session context: client.sessions
    """The same calls, async (``await client.retrieve(...)``).

    Example:
        >>> async def main():  # doctest: +SKIP
        ...     async with AsyncGraphMemClient("http://127.0.0.1:8765", "gm_...") as client:
        ...         return await client.retrieve("deploy", namespace="ops")
    """

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float = 30.0, retries: int = 2, backoff: float = 0.2,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout,
                                       transport=transport)
        self.retries, self.backoff = retries, backoff

    async def _do(self, call: tuple[str, str, Any, Any]) -> Any:
        method, path, params, body = call
        tries = 1 + (self.retries if _safe(method, path) else 0)
        for attempt in range(tries):
            last = attempt == tries - 1
            try:
                response = await self._http.request(method, path, params=params, json=body)
            except httpx.TransportError as exc:
                if last:
                    raise _unavailable(str(self._http.base_url), exc) from exc
            else:
                if last or response.status_code not in _RETRY_STATUS:
                    return _raise(response)
            await asyncio.sleep(self.backoff * 2 ** attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncGraphMemClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- live events (``GET /v1/events``, ADR 0062) -------------------------------------------
    def events(self, *, namespace: str, last_event_id: str | None = None,
               reconnect: bool = True) -> AsyncIterator[MemoryEvent]:
        """``GraphMemClient.events``, async: ``async for event in client.events(...)``."""
        return _events.afollow(self._http, namespace, last_event_id, reconnect=reconnect,
                               attempts=self.retries, check=_raise)

    async def store(self, content: str, *, namespace: str, **fields: Any) -> Memory:
        return wire.memory(await self._do(routes.store(namespace, content, **fields)))

    async def store_many(self, items: list[dict[str, Any]], *, namespace: str
                         ) -> list[Memory]:
        return _many(wire.memory, await self._do(routes.store_many(namespace, items)))

    async def get(self, id: str, *, namespace: str) -> Memory:
        return wire.memory(await self._do(routes.get(namespace, id)))

    async def retrieve(self, query: str, *, namespace: str, **options: Any
                       ) -> list[RetrievalResult]:
        return _many(wire.result, await self._do(routes.search(namespace, query, **options)))

    async def search_index(self, query: str, *, namespace: str, **options: Any
                           ) -> list[IndexEntry]:
        return _many(wire.index_entry, await self._do(
            routes.search(namespace, query, "/v1/search/index", **options)))

    async def entries(self, ids: list[str], *, namespace: str) -> list[Memory]:
        return _many(wire.memory, await self._do(routes.entries(namespace, ids)))

    async def feedback(self, id: str, *, namespace: str, **body: Any) -> Memory:
        return wire.memory(await self._do(routes.action(namespace, id, "feedback", body)))

    async def restore(self, id: str, *, namespace: str, ttl: float | None = None) -> Memory:
        return wire.memory(await self._do(routes.restore(namespace, id, ttl)))

    async def relate(self, source_id: str, target_id: str, type: str, *, namespace: str,
                     score: float | None = None) -> Relation:
        return wire.relation(await self._do(routes.relate(namespace, source_id, target_id,
                                                          type, score)))

    async def stats(self, *, namespace: str) -> dict[str, Any]:
        return dict(await self._do(routes.stats(namespace)))

    # -- listing and edits (the adapters in graphmem.integrations use them) ---------------
    async def list_page(self, *, namespace: str, status: str | None = "active",
                        **filters: Any) -> MemoryPage:
        return _page(await self._do(routes.list_page(namespace,
                                                     {"status": status, **filters})))

    async def update(self, id: str, *, namespace: str, **fields: Any) -> Memory:
        return wire.memory(await self._do(routes.update(namespace, id, **fields)))

    async def delete(self, id: str, *, namespace: str) -> None:
        await self._do(routes.delete(namespace, id))

    async def namespaces(self) -> list[str]:
        return list((await self._do(("GET", "/v1/whoami", None, None)))["namespaces"])
