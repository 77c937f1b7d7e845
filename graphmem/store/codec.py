"""One mapping between the models and flat records, used by every adapter: times as POSIX
seconds, enums as their values, metadata as sorted JSON, vectors apart (a SQLite blob, a
Cypher list of floats). Both adapters read and write records only through this module, so
the list of ``Memory`` fields is spelled once: ``MEMORY_FIELDS``."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from graphmem.models import (
    Candidate,
    EdgeSource,
    Kind,
    Memory,
    Relation,
    RelationType,
    Status,
    Tier,
    Transition,
    TransitionKind,
)

VECTOR_FIELDS = ("embedding", "context_embedding")
#: every scalar field of a memory, in the model's order (the SQLite columns, the graph
#: node's properties)
MEMORY_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Memory)
                                       if f.name not in VECTOR_FIELDS)
_TIMES = frozenset(f.name for f in dataclasses.fields(Memory)
                   if f.type in ("datetime", "datetime | None"))
_ENUMS: dict[str, type[enum.Enum]] = {"kind": Kind, "tier": Tier, "status": Status}
_FLOATS = ("base_importance", "importance", "surprise_score")
_INTS = ("access_count", "success_count", "failure_count", "window_count")
#: fields a record written by an older graphmem may lack, and what they start from
LATER = {"stored_at": "last_accessed_at", "reinforced_at": "last_accessed_at"}


def untyped(kind: Kind) -> str:
    """The type of a record written before memory types (ADR 0013): a summary's or an
    observation."""
    return "summary" if kind is Kind.SUMMARY else "observation"


def ts(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def dt(value: Any) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(float(value), UTC)


def scalar(value: Any) -> Any:
    """A patch value as stored: times as seconds, enums as values, metadata as JSON."""
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return value


def flatten(m: Memory) -> dict[str, Any]:
    """Every scalar field of ``m`` as stored (vectors are the adapter's: ``VECTOR_FIELDS``)."""
    out = {name: scalar(getattr(m, name)) for name in MEMORY_FIELDS}
    # mentioned times as ``[[start, end], ...]`` in POSIX seconds
    out["mentioned"] = json.dumps([[a.timestamp(), b.timestamp()] for a, b in m.mentioned])
    return out


def _metadata(value: Any) -> dict[str, Any]:
    return {} if not value or value == "{}" else dict(json.loads(value))


def _used_by(value: Any) -> dict[str, float]:
    return {} if not value or value == "{}" else {
        str(k): float(t) for k, t in json.loads(value).items()}


def _mentioned(value: Any) -> tuple[tuple[datetime, datetime], ...]:
    """Mentioned times as stored (JSON ``[[start, end], ...]`` in POSIX seconds) as pairs."""
    if not value or value == "[]":
        return ()
    return tuple((datetime.fromtimestamp(a, UTC), datetime.fromtimestamp(b, UTC))
                 for a, b in json.loads(value))


def _enum(cls: type[enum.Enum]) -> Any:
    """A stored value as its member: a dict lookup (cheaper than an Enum call, and a
    retrieval decodes three per candidate); an unknown value raises as the call would."""
    members = {m.value: m for m in cls}

    def convert(value: Any) -> Any:
        try:
            return members[value]
        except (KeyError, TypeError):
            return cls(value)

    return convert


#: how a stored field becomes the model's value (a field not named here: as stored)
_CONVERTERS: dict[str, Any] = {
    **dict.fromkeys(_TIMES, dt), **{name: _enum(cls) for name, cls in _ENUMS.items()},
    **dict.fromkeys(_FLOATS, lambda v: float(v or 0.0)),
    **dict.fromkeys(_INTS, lambda v: int(v or 0)),
    "metadata": _metadata, "used_by": _used_by, "mentioned": _mentioned, "pinned": bool,
    "keywords": lambda v: v or "", "context_keywords": lambda v: v or "",
    "last_predicted": lambda v: None if v is None else float(v),
}


def unflatten(row: Mapping[str, Any], *, embedding: np.ndarray | None = None,
              context_embedding: np.ndarray | None = None) -> Memory:
    """The memory of a stored record (the inverse of ``flatten``); a field an older
    graphmem did not write starts from its documented default."""
    return unflatten_row([row.get(name) for name in MEMORY_FIELDS], embedding=embedding,
                         context_embedding=context_embedding)


#: per field of the model, in its order: (index in MEMORY_FIELDS, converter), or (-1, 0) /
#: (-1, 1) for the content / context vector; decided once: a read decodes hundreds of records
_ROW_PLAN: tuple[tuple[int, Any], ...] = tuple(
    (-1, VECTOR_FIELDS.index(f.name)) if f.name in VECTOR_FIELDS
    else (MEMORY_FIELDS.index(f.name), _CONVERTERS.get(f.name))
    for f in dataclasses.fields(Memory))
_ROW_LATER = tuple((MEMORY_FIELDS.index(k), MEMORY_FIELDS.index(v)) for k, v in LATER.items())


def unflatten_row(row: Sequence[Any], *, embedding: np.ndarray | None = None,
                  context_embedding: np.ndarray | None = None) -> Memory:
    """``unflatten`` of a record given as values in ``MEMORY_FIELDS`` order (a SQLite row):
    positional, without a dict per record (a retrieval decodes a few hundred candidates).

    Example:
        >>> m = Memory(id="m1", namespace="ops", content="x", tier=Tier.FAST)
        >>> flat = flatten(m)
        >>> unflatten_row([flat[n] for n in MEMORY_FIELDS]) == unflatten(flat)
        True
    """
    values = list(row[:len(MEMORY_FIELDS)])
    for field, fallback in _ROW_LATER:
        if values[field] is None:
            values[field] = values[fallback]
    vectors = (embedding, context_embedding)
    args: list[Any] = [vectors[convert] if i < 0 else
                       (values[i] if convert is None else convert(values[i]))
                       for i, convert in _ROW_PLAN]
    m = Memory(*args)
    if m.type is None:  # written before memory types (ADR 0013)
        m.type = untyped(m.kind)
    return m


#: the stored fields a ``Candidate`` holds, in its order (ADR 0041)
CANDIDATE_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Candidate)
                                          if f.name != "memory")
_STATUS, _TIER, _KIND = _enum(Status), _enum(Tier), _enum(Kind)
_fromtimestamp = datetime.fromtimestamp


def candidate_row(row: Sequence[Any]) -> Candidate:
    """The ``Candidate`` of a record's ``CANDIDATE_FIELDS`` values (a field in ``LATER``
    already given its fallback when NULL). Spelled out, not planned per field: a retrieval
    decodes a few hundred (ADR 0041).

    Example:
        >>> from dataclasses import replace
        >>> m = Memory(id="m1", namespace="ops", content="x", tier=Tier.FAST)
        >>> flat = flatten(m)
        >>> candidate_row([flat[n] for n in CANDIDATE_FIELDS]) == replace(Candidate.of(m),
        ...                                                               memory=None)
        True
    """
    (id_, status, tier, kind, type_, source, session_id, topic, created_at, valid_from,
     valid_until, importance, base_importance, reinforced_at, access_count, keywords,
     context_keywords, metadata, mentioned, expires_at) = row
    kind = _KIND(kind)
    if type_ is None:
        type_ = untyped(kind)
    return Candidate(
        id_, _STATUS(status), _TIER(tier), kind, type_, source, session_id, topic,
        _fromtimestamp(created_at, UTC),
        None if valid_from is None else _fromtimestamp(valid_from, UTC),
        None if valid_until is None else _fromtimestamp(valid_until, UTC),
        float(importance or 0.0), float(base_importance or 0.0),
        _fromtimestamp(reinforced_at, UTC), int(access_count or 0), keywords or "",
        context_keywords or "", _metadata(metadata), _mentioned(mentioned),
        None if expires_at is None else _fromtimestamp(expires_at, UTC))


def floats(vector: np.ndarray | None) -> list[float] | None:
    return None if vector is None else [float(x) for x in vector]


def vector(value: Any) -> np.ndarray | None:
    """A stored vector (a list of floats, or float32 bytes) as a float32 array."""
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return np.frombuffer(value, dtype=np.float32).copy()
    return np.asarray(value, dtype=np.float32)


def blob(vec: np.ndarray | None) -> bytes | None:
    return None if vec is None else np.asarray(vec, dtype=np.float32).tobytes()


def edge_props(e: Relation) -> dict[str, Any]:
    return {"source_id": e.source_id, "target_id": e.target_id, "type": e.type.value,
            "score": e.score, "created_at": ts(e.created_at), "source": e.source.value}


def edge(namespace: str, row: Mapping[str, Any]) -> Relation:
    score = row.get("score")
    return Relation(row["source_id"], row["target_id"], RelationType(row["type"]), namespace,
                    None if score is None else float(score),
                    dt(row["created_at"]),  # type: ignore[arg-type]
                    EdgeSource(row.get("source") or "explicit"))


def transition_props(t: Transition) -> dict[str, Any]:
    return {"memory_id": t.memory_id, "kind": t.kind.value, "from_tier": t.from_tier.value,
            "to_tier": t.to_tier.value, "from_status": t.from_status.value,
            "to_status": t.to_status.value, "reason": t.reason, "at": ts(t.at),
            "detail": t.detail}


def transition(row: Mapping[str, Any]) -> Transition:
    return Transition(row["memory_id"], TransitionKind(row["kind"]), Tier(row["from_tier"]),
                      Tier(row["to_tier"]), row["reason"],
                      dt(row["at"]),  # type: ignore[arg-type]
                      Status(row["from_status"]), Status(row["to_status"]), row.get("detail"))
