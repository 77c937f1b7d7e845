"""The OpenAPI document is the contract (issue 45): a date-time is an ISO 8601 string over
REST, never a number read as an epoch; metadata has a bound (keys, depth, bytes) that the
document states and the core enforces on every face - REST, the Python API, the client and
MCP - with a 422 / ``LimitExceededError`` and nothing written."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from graphmem.api.mcp import build_server
from graphmem.config import WriteConfig
from graphmem.errors import LimitExceededError, ValidationError
from graphmem.rules.validation import METADATA_TOO_LARGE, metadata_bytes
from tests.api.test_rest import Server

NS = "contract"
LATER = "2027-01-01T00:00:00Z"  # after the test clock's now: valid anywhere a time goes
LIMIT = WriteConfig().max_metadata_bytes
EMPTY_VALUE = metadata_bytes({"k": ""})  # {"k":""}: the bytes around one value


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    with Server(tmp_path_factory.mktemp("contract")) as server:
        key = server.keys.create(["*"], "admin")[1]
        yield server, {"Authorization": f"Bearer {key}"}


def _stored(server: Server) -> int:
    return sum(len(p) for ns in server.mem.namespaces()
               for p in server.mem.backend.iter_memories(ns, embeddings=False))


def _patch_target(server: Server) -> str:
    """A new memory without a validity period (one a PATCH may change)."""
    return server.mem.store(f"a memory a PATCH aims at, {next(_TARGETS)}", namespace=NS).id


_TARGETS = itertools.count()


# -- date-times: ISO 8601 strings only over REST ----------------------------------------------

#: every date-time field of a request body: (method, path, body with the time at "T")
TIME_FIELDS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "search as_of": ("POST", "/v1/search", {"namespace": NS, "query": "q", "as_of": "T"}),
    "search now": ("POST", "/v1/search", {"namespace": NS, "query": "q", "now": "T"}),
    "index now": ("POST", "/v1/search/index", {"namespace": NS, "query": "q", "now": "T"}),
    "search filters.since": ("POST", "/v1/search",
                             {"namespace": NS, "query": "q", "filters": {"since": "T"}}),
    "search filters.until": ("POST", "/v1/search",
                             {"namespace": NS, "query": "q", "filters": {"until": "T"}}),
    "index filters.since": ("POST", "/v1/search/index",
                            {"namespace": NS, "query": "q", "filters": {"since": "T"}}),
    "store valid_from": ("POST", "/v1/memories",
                         {"namespace": NS, "content": "valid from", "valid_from": "T"}),
    "store valid_until": ("POST", "/v1/memories",
                          {"namespace": NS, "content": "valid until", "valid_until": "T"}),
    "store created_at": ("POST", "/v1/memories",
                         {"namespace": NS, "content": "created at", "created_at": "T"}),
    "batch created_at": ("POST", "/v1/memories", {"namespace": NS, "items": [
        {"content": "a batch item"}, {"content": "timed batch item", "created_at": "T"}]}),
    "patch valid_from": ("PATCH", "/v1/memories/{id}", {"valid_from": "T"}),
    "patch valid_until": ("PATCH", "/v1/memories/{id}", {"valid_until": "T"}),
    "summary since": ("POST", "/v1/summaries", {"namespace": NS, "agent": "a", "since": "T"}),
    "summary until": ("POST", "/v1/summaries", {"namespace": NS, "agent": "a", "until": "T"}),
}


def _with_time(value: Any, body: Any) -> Any:
    if body == "T":
        return value
    if isinstance(body, dict):
        return {k: _with_time(value, v) for k, v in body.items()}
    if isinstance(body, list):
        return [_with_time(value, v) for v in body]
    return body


def _call(server: Server, headers: dict[str, str], field: str, value: Any,
          target: str | None = None) -> httpx.Response:
    """The request of ``field`` with ``value`` as its time (a PATCH aims at ``target``)."""
    method, path, body = TIME_FIELDS[field]
    params = None
    if "{id}" in path:
        path, params = path.format(id=target or _patch_target(server)), {"namespace": NS}
    return httpx.request(method, server.url + path, params=params, headers=headers,
                         json=_with_time(value, body))


@pytest.mark.parametrize("field", sorted(TIME_FIELDS))
@pytest.mark.parametrize("epoch", [0, 1_700_000_000, 1.7e9, "0", "1700000000"])
def test_a_numeric_epoch_is_a_422_and_writes_nothing(srv: tuple[Server, dict[str, str]],
                                                     field: str, epoch: Any) -> None:
    server, headers = srv
    target = _patch_target(server)
    before = _stored(server)
    r = _call(server, headers, field, epoch, target)
    assert r.status_code == 422, r.text
    if not field.startswith("batch"):  # a batch's 422 names the first union branch's error
        assert "ISO 8601" in r.json()["error"]["message"]
    assert _stored(server) == before
    got = server.mem.get(target, namespace=NS)
    assert got.valid_from is None and got.valid_until is None


@pytest.mark.parametrize("field", sorted(TIME_FIELDS))
@pytest.mark.parametrize("iso", [LATER, "2027-01-01T00:00:00.5+02:00", "2027-01-01t00:00:00z"])
def test_an_iso_8601_string_is_accepted(srv: tuple[Server, dict[str, str]], field: str,
                                        iso: str) -> None:
    server, headers = srv
    r = _call(server, headers, field, iso)
    assert r.status_code in (200, 201), r.text


def test_python_and_rest_read_times_alike(srv: tuple[Server, dict[str, str]]) -> None:
    """The Python API takes a datetime or an ISO 8601 string and refuses a number: the same
    rule as REST, one parser (``validation.timestamp``)."""
    server, _ = srv
    mem = server.mem
    for call in (lambda: mem.retrieve("q", namespace=NS, as_of=0),  # type: ignore[arg-type]
                 lambda: mem.retrieve("q", namespace=NS, filters={"since": 0}),
                 lambda: mem.search_index("q", namespace=NS, until=1_700_000_000),
                 lambda: mem.store("epoch from python", namespace=NS, valid_from=0)):
        with pytest.raises(ValidationError, match="not read as an epoch"):
            call()
    assert mem.retrieve("q", namespace=NS, as_of=LATER) is not None


def test_the_document_types_every_date_time_as_a_string(
        srv: tuple[Server, dict[str, str]]) -> None:
    server, _ = srv
    spec = httpx.get(f"{server.url}/openapi.json").json()
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("format") == "date-time":
                found.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec["components"]["schemas"])
    assert len(found) >= 8
    assert all(n["type"] == "string" and "ISO 8601" in n.get("description", "ISO 8601")
               for n in found)


# -- metadata: keys, depth and bytes -------------------------------------------------------------

def _over(chars: str = "x") -> dict[str, Any]:
    """One value just over the byte bound (two bytes a character for "é")."""
    width = len(chars.encode("utf-8"))
    return {"k": chars * ((LIMIT - EMPTY_VALUE) // width + 1)}


def test_the_document_states_the_metadata_bound(srv: tuple[Server, dict[str, str]]) -> None:
    server, _ = srv
    spec = httpx.get(f"{server.url}/openapi.json").json()["components"]["schemas"]
    config = WriteConfig()
    for model in ("MemoryCreate", "MemoryItem", "MemoryPatch", "Filters"):
        meta = next(s for s in spec[model]["properties"]["metadata"]["anyOf"]
                    if s.get("type") == "object")
        assert meta["maxProperties"] == config.max_metadata_keys, model
        assert meta["x-max-bytes"] == config.max_metadata_bytes, model
        assert f"{config.max_metadata_bytes:,} bytes" in meta["description"], model
        assert meta["additionalProperties"] is False  # flat: scalar values by pattern only
        values = next(iter(meta["patternProperties"].values()))["anyOf"]
        assert {v["type"] for v in values} == {"string", "integer", "number", "boolean",
                                               "null"}, model


def test_metadata_at_the_bound_is_kept_whole(srv: tuple[Server, dict[str, str]]) -> None:
    server, headers = srv
    meta = {"k": "x" * (LIMIT - EMPTY_VALUE)}
    assert metadata_bytes(meta) == LIMIT
    r = httpx.post(f"{server.url}/v1/memories", headers=headers,
                   json={"namespace": NS, "content": "metadata at its bound", "metadata": meta})
    assert r.status_code == 201, r.text
    assert server.mem.get(r.json()["id"], namespace=NS).metadata == meta


@pytest.mark.parametrize("chars", ["x", "é"])
def test_metadata_over_the_bound_is_a_422_and_writes_nothing(
        srv: tuple[Server, dict[str, str]], chars: str) -> None:
    server, headers = srv
    big = _over(chars)
    assert metadata_bytes(big) > LIMIT and len(big["k"]) < LIMIT  # bytes count, not characters
    target = _patch_target(server)
    before = _stored(server)
    calls = [
        ("POST", "/v1/memories", None, {"namespace": NS, "content": "big meta", "metadata": big}),
        ("POST", "/v1/memories", None, {"namespace": NS, "items": [
            {"content": "a good item of a bad batch"},
            {"content": "big meta in a batch", "metadata": big}]}),
        ("PATCH", f"/v1/memories/{target}", {"namespace": NS}, {"metadata": big}),
        ("POST", "/v1/search", None, {"namespace": NS, "query": "q",
                                       "filters": {"metadata": big}}),
    ]
    for method, path, params, body in calls:
        r = httpx.request(method, server.url + path, params=params, headers=headers, json=body)
        assert r.status_code == 422, (path, r.text)
        error = r.json()["error"]
        assert error["code"] == "limit_exceeded" and error["message"].startswith(
            METADATA_TOO_LARGE), error
    assert _stored(server) == before
    assert server.mem.get(target, namespace=NS).metadata == {}


def test_the_python_api_client_and_mcp_enforce_the_same_bound(
        srv: tuple[Server, dict[str, str]]) -> None:
    """The bound is the core's: the 1 MB value of the issue is refused on every face."""
    server, _ = srv
    mem, huge = server.mem, {"k": "x" * 1_000_000}
    target = _patch_target(server)
    before = _stored(server)
    for call in (lambda: mem.store("big meta from python", namespace=NS, metadata=huge),
                 lambda: mem.store_many([{"content": "ok"},
                                         {"content": "big", "metadata": _over()}], namespace=NS),
                 lambda: mem.update(target, namespace=NS, metadata=_over("é"))):
        with pytest.raises(LimitExceededError, match=METADATA_TOO_LARGE):
            call()
    with pytest.raises(ValidationError, match=METADATA_TOO_LARGE):  # the 422, by its code
        server.client([NS]).store("big meta from the client", namespace=NS, metadata=_over())

    async def remember() -> Any:
        async with Client(build_server(mem)) as client:
            return await client.call_tool("remember", {
                "content": "big meta from mcp", "namespace": NS, "metadata": _over()})

    refused = asyncio.run(remember())
    assert refused.is_error and "limit_exceeded" in getattr(refused.content[0], "text", "")
    assert _stored(server) == before
    assert mem.get(target, namespace=NS).metadata == {}


def test_metadata_graphmem_writes_itself_fits(srv: tuple[Server, dict[str, str]]) -> None:
    """A consensus keeps its participants in metadata: the most the schema allows (100 of
    256 characters) fits the bound."""
    server, headers = srv
    people = [f"{i:03d}" + "p" * 253 for i in range(100)]
    r = httpx.post(f"{server.url}/v1/consensus", headers=headers, json={
        "namespace": NS, "topic": "bounds", "conclusion": "they fit", "participants": people})
    assert r.status_code == 201, r.text
    assert len(r.json()["metadata"]["participants"]) == 100 * 256 + 99 * 2
