"""``GraphMemClient`` / ``AsyncGraphMemClient``: the REST API from Python (httpx), mirroring
the facade. Errors come back as the same ``graphmem.errors`` types, by their codes."""

from __future__ import annotations

from typing import Any

import httpx

from graphmem import errors

_BY_STATUS: dict[int, type[errors.GraphMemError]] = {
    404: errors.NotFoundError, 409: errors.ConflictError, 422: errors.ValidationError,
    503: errors.StoreError}
_BY_CODE = {cls.code: cls for cls in (
    errors.InvalidContentError, errors.InvalidImportanceError, errors.InvalidNamespaceError,
    errors.InvalidRelationError, errors.LimitExceededError, errors.NotFoundError,
    errors.ConflictError, errors.StoreError, errors.EmbeddingError)}


class ApiAuthError(errors.GraphMemError):
    """401 (no or bad key) or 403 (namespace or role not allowed)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _raise(response: httpx.Response) -> Any:
    if response.status_code < 400:
        return None if response.status_code == 204 else response.json()
    try:
        err = response.json()["error"]
        code, message = err["code"], err["message"]
    except Exception:
        code, message = "http_error", response.text
    if response.status_code in (401, 403):
        raise ApiAuthError(response.status_code, message)
    cls = _BY_CODE.get(code) or _BY_STATUS.get(response.status_code, errors.GraphMemError)
    raise cls(message)


def _requests(namespace: str) -> dict[str, Any]:
    return {"namespace": namespace}


class _Calls:
    """The routes, as (method, path, params, json) - shared by both clients."""

    @staticmethod
    def store(namespace: str, content: str, **fields: Any) -> tuple[str, str, Any, Any]:
        return "POST", "/v1/memories", None, {"namespace": namespace, "content": content,
                                              **fields}

    @staticmethod
    def store_many(namespace: str, items: list[dict[str, Any]]) -> tuple[str, str, Any, Any]:
        return "POST", "/v1/memories", None, {"namespace": namespace, "items": items}

    @staticmethod
    def get(namespace: str, id: str) -> tuple[str, str, Any, Any]:
        return "GET", f"/v1/memories/{id}", _requests(namespace), None

    @staticmethod
    def update(namespace: str, id: str, **fields: Any) -> tuple[str, str, Any, Any]:
        return "PATCH", f"/v1/memories/{id}", _requests(namespace), fields

    @staticmethod
    def delete(namespace: str, id: str) -> tuple[str, str, Any, Any]:
        return "DELETE", f"/v1/memories/{id}", _requests(namespace), None

    @staticmethod
    def action(namespace: str, id: str, action: str, body: Any = None
               ) -> tuple[str, str, Any, Any]:
        return "POST", f"/v1/memories/{id}/{action}", _requests(namespace), body

    @staticmethod
    def relate(namespace: str, source_id: str, target_id: str, type: str,
               score: float | None = None) -> tuple[str, str, Any, Any]:
        return "POST", "/v1/relations", None, {"namespace": namespace, "source_id": source_id,
                                               "target_id": target_id, "type": type,
                                               "score": score}

    @staticmethod
    def unrelate(namespace: str, source_id: str, target_id: str, type: str
                 ) -> tuple[str, str, Any, Any]:
        return "DELETE", "/v1/relations", None, {"namespace": namespace,
                                                 "source_id": source_id,
                                                 "target_id": target_id, "type": type}

    @staticmethod
    def relations(namespace: str, id: str) -> tuple[str, str, Any, Any]:
        return "GET", f"/v1/memories/{id}/relations", _requests(namespace), None

    @staticmethod
    def search(namespace: str, query: str, path: str = "/v1/search",
               **options: Any) -> tuple[str, str, Any, Any]:
        return "POST", path, None, {"namespace": namespace, "query": query, **options}

    @staticmethod
    def timeline(namespace: str, anchor_id: str, before: int, after: int
                 ) -> tuple[str, str, Any, Any]:
        return "GET", "/v1/search/timeline", {"namespace": namespace, "anchor_id": anchor_id,
                                              "before": before, "after": after}, None

    @staticmethod
    def entries(namespace: str, ids: list[str]) -> tuple[str, str, Any, Any]:
        return "POST", "/v1/entries", None, {"namespace": namespace, "ids": ids}

    @staticmethod
    def stats(namespace: str) -> tuple[str, str, Any, Any]:
        return "GET", "/v1/stats", _requests(namespace), None


class GraphMemClient:
    """Synchronous client. ``GraphMemClient(url, api_key)``; methods return JSON dicts."""

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout,
                                  transport=transport)

    def _do(self, call: tuple[str, str, Any, Any]) -> Any:
        method, path, params, body = call
        return _raise(self._http.request(method, path, params=params, json=body))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GraphMemClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def store(self, content: str, *, namespace: str, **fields: Any) -> Any:
        return self._do(_Calls.store(namespace, content, **fields))

    def store_many(self, items: list[dict[str, Any]], *, namespace: str) -> Any:
        return self._do(_Calls.store_many(namespace, items))

    def get(self, id: str, *, namespace: str) -> Any:
        return self._do(_Calls.get(namespace, id))

    def update(self, id: str, *, namespace: str, **fields: Any) -> Any:
        return self._do(_Calls.update(namespace, id, **fields))

    def delete(self, id: str, *, namespace: str) -> None:
        self._do(_Calls.delete(namespace, id))

    def pin(self, id: str, *, namespace: str) -> Any:
        return self._do(_Calls.action(namespace, id, "pin"))

    def unpin(self, id: str, *, namespace: str) -> Any:
        return self._do(_Calls.action(namespace, id, "unpin"))

    def restore(self, id: str, *, namespace: str) -> Any:
        return self._do(_Calls.action(namespace, id, "restore"))

    def feedback(self, id: str, *, namespace: str, **body: Any) -> Any:
        return self._do(_Calls.action(namespace, id, "feedback", body))

    def relate(self, source_id: str, target_id: str, type: str, *, namespace: str,
               score: float | None = None) -> Any:
        return self._do(_Calls.relate(namespace, source_id, target_id, type, score))

    def unrelate(self, source_id: str, target_id: str, type: str, *, namespace: str) -> None:
        self._do(_Calls.unrelate(namespace, source_id, target_id, type))

    def relations(self, id: str, *, namespace: str) -> Any:
        return self._do(_Calls.relations(namespace, id))

    def retrieve(self, query: str, *, namespace: str, **options: Any) -> Any:
        return self._do(_Calls.search(namespace, query, **options))

    def search_index(self, query: str, *, namespace: str, **options: Any) -> Any:
        return self._do(_Calls.search(namespace, query, "/v1/search/index", **options))

    def timeline(self, anchor_id: str, *, namespace: str, before: int = 3,
                 after: int = 3) -> Any:
        return self._do(_Calls.timeline(namespace, anchor_id, before, after))

    def entries(self, ids: list[str], *, namespace: str) -> Any:
        return self._do(_Calls.entries(namespace, ids))

    def stats(self, *, namespace: str) -> Any:
        return self._do(_Calls.stats(namespace))


class AsyncGraphMemClient:
    """The same calls, async (``await client.retrieve(...)``)."""

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=base_url, headers=headers, timeout=timeout,
                                       transport=transport)

    async def _do(self, call: tuple[str, str, Any, Any]) -> Any:
        method, path, params, body = call
        return _raise(await self._http.request(method, path, params=params, json=body))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncGraphMemClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def store(self, content: str, *, namespace: str, **fields: Any) -> Any:
        return await self._do(_Calls.store(namespace, content, **fields))

    async def store_many(self, items: list[dict[str, Any]], *, namespace: str) -> Any:
        return await self._do(_Calls.store_many(namespace, items))

    async def get(self, id: str, *, namespace: str) -> Any:
        return await self._do(_Calls.get(namespace, id))

    async def retrieve(self, query: str, *, namespace: str, **options: Any) -> Any:
        return await self._do(_Calls.search(namespace, query, **options))

    async def search_index(self, query: str, *, namespace: str, **options: Any) -> Any:
        return await self._do(_Calls.search(namespace, query, "/v1/search/index", **options))

    async def entries(self, ids: list[str], *, namespace: str) -> Any:
        return await self._do(_Calls.entries(namespace, ids))

    async def feedback(self, id: str, *, namespace: str, **body: Any) -> Any:
        return await self._do(_Calls.action(namespace, id, "feedback", body))

    async def relate(self, source_id: str, target_id: str, type: str, *, namespace: str,
                     score: float | None = None) -> Any:
        return await self._do(_Calls.relate(namespace, source_id, target_id, type, score))

    async def stats(self, *, namespace: str) -> Any:
        return await self._do(_Calls.stats(namespace))
