"""The REST routes the clients call, each as (method, path, params, json): written once for
``GraphMemClient`` and ``AsyncGraphMemClient``."""

from __future__ import annotations

from typing import Any

from graphmem.client import wire

Call = tuple[str, str, Any, Any]


def store(namespace: str, content: str, **fields: Any) -> Call:
    return "POST", "/v1/memories", None, wire.jsonable({"namespace": namespace,
                                                        "content": content, **fields})


def store_many(namespace: str, items: list[dict[str, Any]]) -> Call:
    return "POST", "/v1/memories", None, wire.jsonable({"namespace": namespace, "items": items})


def get(namespace: str, id: str) -> Call:
    return "GET", f"/v1/memories/{id}", {"namespace": namespace}, None


def update(namespace: str, id: str, **fields: Any) -> Call:
    return "PATCH", f"/v1/memories/{id}", {"namespace": namespace}, fields


def delete(namespace: str, id: str) -> Call:
    return "DELETE", f"/v1/memories/{id}", {"namespace": namespace}, None


def action(namespace: str, id: str, action: str, body: Any = None) -> Call:
    return "POST", f"/v1/memories/{id}/{action}", {"namespace": namespace}, body


def restore(namespace: str, id: str, ttl: float | None) -> Call:
    params = {"namespace": namespace} | ({} if ttl is None else {"ttl": ttl})
    return "POST", f"/v1/memories/{id}/restore", params, None


def relate(namespace: str, source_id: str, target_id: str, type: str,
           score: float | None = None) -> Call:
    return "POST", "/v1/relations", None, {"namespace": namespace, "source_id": source_id,
                                           "target_id": target_id, "type": type,
                                           "score": score}


def unrelate(namespace: str, source_id: str, target_id: str, type: str) -> Call:
    return "DELETE", "/v1/relations", None, {"namespace": namespace, "source_id": source_id,
                                             "target_id": target_id, "type": type}


def relations(namespace: str, id: str) -> Call:
    return "GET", f"/v1/memories/{id}/relations", {"namespace": namespace}, None


def search(namespace: str, query: str, path: str = "/v1/search",
           **options: Any) -> Call:
    return "POST", path, None, wire.jsonable({"namespace": namespace, "query": query,
                                              **options})


def timeline(namespace: str, anchor_id: str, before: int, after: int) -> Call:
    return "GET", "/v1/search/timeline", {"namespace": namespace, "anchor_id": anchor_id,
                                          "before": before, "after": after}, None


def entries(namespace: str, ids: list[str]) -> Call:
    return "POST", "/v1/entries", None, {"namespace": namespace, "ids": ids}


def stats(namespace: str) -> Call:
    return "GET", "/v1/stats", {"namespace": namespace}, None


def list_page(namespace: str, filters: dict[str, Any]) -> Call:
    # the facade's status=None (every status) is "all" over REST; unset filters are left out
    query = {k: ("all" if k == "status" and v is None else v)
             for k, v in filters.items() if v is not None or k == "status"}
    return "GET", "/v1/memories", {"namespace": namespace, **wire.jsonable(query)}, None
