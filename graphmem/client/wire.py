"""The models back from their JSON (``to_dict``) form: what the REST client returns, so a
caller gets the same ``Memory`` / ``RetrievalResult`` / ``Relation`` / ``IndexEntry`` from
``GraphMemClient`` as from ``GraphMemory``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from graphmem.models import (
    EdgeSource,
    IndexEntry,
    Kind,
    Memory,
    PathStep,
    Relation,
    RelationType,
    RetrievalResult,
    Status,
    Tier,
    WalkPath,
)

_TIMES = {f.name for f in dataclasses.fields(Memory) if f.type in ("datetime",
                                                                   "datetime | None")}
#: the fields a client reads back (the vectors stay on the server)
_KNOWN = {f.name for f in dataclasses.fields(Memory)} - {"embedding", "context_embedding"}


def _time(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


#: how a field comes back from its JSON form, when not as it is
_READ: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(_TIMES, _time), "kind": Kind, "tier": Tier, "status": Status,
    "metadata": lambda value: dict(value or {}),
    "mentioned": lambda value: tuple((_time(x["start"]), _time(x["end"])) for x in value or ())}


def memory(d: Mapping[str, Any]) -> Memory:
    """A ``Memory`` from ``Memory.to_dict()`` output (fields it does not know are ignored:
    a newer server may send more)."""
    return Memory(**{name: _READ[name](value) if name in _READ else value
                     for name, value in d.items() if name in _KNOWN})


def relation(d: Mapping[str, Any]) -> Relation:
    return Relation(d["source_id"], d["target_id"], RelationType(d["type"]), d["namespace"],
                    d.get("score"), _time(d["created_at"]) or datetime.min,
                    EdgeSource(d.get("source", "explicit")))


def path(d: Mapping[str, Any] | None) -> WalkPath:
    if not d:
        return WalkPath(())
    return WalkPath(tuple(d["nodes"]), tuple(PathStep(RelationType(s["type"]), s["outgoing"])
                                             for s in d.get("steps", ())))


def result(d: Mapping[str, Any]) -> RetrievalResult:
    """A ranked result; ``terms`` and ``path`` are empty when the search asked for no
    explanation (``explain=False``)."""
    return RetrievalResult(memory(d["memory"]), float(d["score"]), dict(d.get("terms") or {}),
                           path(d.get("path")), bool(d.get("disputed", False)),
                           tuple(d.get("disputed_by") or ()), dict(d.get("reasons") or {}))


def index_entry(d: Mapping[str, Any]) -> IndexEntry:
    return IndexEntry(d["id"], d["preview"], Tier(d["tier"]), float(d["score"]),
                      int(d["token_estimate"]), _time(d["created_at"]) or datetime.min,
                      d.get("session_id"), bool(d.get("disputed", False)))


def jsonable(value: Any) -> Any:
    """A request body as JSON takes it: datetimes as ISO 8601 strings (the API reads no
    epochs), inside dicts and lists too.

    Example:
        >>> jsonable({"now": datetime(2023, 8, 30), "filters": {"since": None}})
        {'now': '2023-08-30T00:00:00', 'filters': {'since': None}}
    """
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
