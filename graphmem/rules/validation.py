"""Validation of caller input against the configured bounds. Raises typed errors only."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

from graphmem.config import WriteConfig
from graphmem.errors import (
    InvalidContentError,
    InvalidImportanceError,
    InvalidNamespaceError,
    InvalidRelationError,
    LimitExceededError,
    ValidationError,
)
from graphmem.models import CALLER_RELATION_TYPES, RelationSpec, RelationType, Tier

# fullmatch, never ``$``: ``$`` also matches before a final newline, and an id or namespace
# ending in "\n" crashed a FalkorDB server (issue 15)
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
#: what no stored text may hold: NUL and the other C0 controls except tab, newline and
#: carriage return, DEL, and lone surrogates (not Unicode scalar values: they cannot be
#: encoded as UTF-8, so exports and some backends fail on them)
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_SCALARS = (str, int, float, bool, type(None))
#: a memory type: a lower-case word (the vocabulary is open; ``models.TYPES`` are the defaults)
TYPE_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")


def clean_text(value: str, name: str) -> str:
    """``value`` unchanged when it holds only storable characters, else ValidationError."""
    bad = _BAD_CHARS.search(value)
    if bad is not None:
        char = bad.group()
        kind = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
        raise ValidationError(f"{name} holds {kind} (U+{ord(char):04X}) at position "
                              f"{bad.start()}")
    return value


def namespace(value: Any) -> str:
    if not isinstance(value, str) or not _NAMESPACE.fullmatch(value):
        raise InvalidNamespaceError(
            f"invalid namespace {value!r}: 1-128 characters of letters, digits and _.:@- "
            "starting with a letter or digit"
        )
    return value


def memory_id(value: Any) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise ValidationError(f"invalid memory id {value!r}: 1-128 characters of letters, "
                              "digits and _.:- starting with a letter or digit")
    return value


def content(value: Any, config: WriteConfig) -> str:
    if not isinstance(value, str):
        raise InvalidContentError("content must be a string")
    if not value.strip():
        raise InvalidContentError("content is empty")
    if len(value) > config.max_content_chars:
        raise InvalidContentError(
            f"content has {len(value)} characters, the limit is {config.max_content_chars}"
        )
    try:
        return clean_text(value, "content")
    except ValidationError as exc:
        raise InvalidContentError(str(exc)) from None


def importance(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidImportanceError(f"importance must be a number in 0..1, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidImportanceError(f"importance must be in 0..1, got {value}")
    return float(value)


def tier(value: Any) -> Tier | None:
    if value is None:
        return None
    try:
        return Tier(value)
    except ValueError:
        raise ValidationError(
            f"unknown tier {value!r}: one of {', '.join(t.value for t in Tier)}"
        ) from None


def memory_type(value: Any) -> str:
    """A memory type: 1-40 characters of a-z, 0-9 and _, starting with a letter.

    Example:
        >>> memory_type("tool_usage")
        'tool_usage'
    """
    if not isinstance(value, str) or not TYPE_PATTERN.fullmatch(value):
        raise ValidationError(f"invalid memory type {value!r}: 1-40 characters of a-z, 0-9 "
                              "and _ starting with a letter (e.g. observation, decision)")
    return value


def types(value: Any) -> tuple[str, ...]:
    """One type or a list of them (a filter)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple | set | frozenset) or not items:
        raise ValidationError("filter 'type' must be a type or a non-empty list of types")
    return tuple(memory_type(t) for t in items)


#: a validity period that ends before it starts
INVALID_VALIDITY = "valid_until must be after valid_from"


def validity(start: datetime | None, end: datetime | None) -> None:
    if start is not None and end is not None and end <= start:
        raise ValidationError(INVALID_VALIDITY)


def relation_type(value: Any, *, caller: bool = True) -> RelationType:
    try:
        rtype = RelationType(value.upper() if isinstance(value, str) else value)
    except (ValueError, AttributeError):
        allowed = ", ".join(sorted(t.value for t in CALLER_RELATION_TYPES))
        raise InvalidRelationError(f"unknown relation type {value!r}: one of {allowed}") from None
    if caller and rtype not in CALLER_RELATION_TYPES:
        raise InvalidRelationError(f"relation type {rtype.value} is made by graphmem only")
    return rtype


def relation_spec(value: Any) -> RelationSpec:
    if isinstance(value, RelationSpec):
        spec = value
    elif isinstance(value, dict):
        target = value.get("target_id", value.get("target"))
        spec = RelationSpec(type=value.get("type", ""), target_id=target,  # type: ignore[arg-type]
                            direction=value.get("direction", "out"), score=value.get("score"))
    elif isinstance(value, tuple | list) and len(value) == 2:
        spec = RelationSpec(type=value[0], target_id=value[1])
    else:
        raise InvalidRelationError(f"cannot read a relation from {value!r}")
    if spec.direction not in ("out", "in"):
        raise InvalidRelationError(f"relation direction must be 'out' or 'in', not "
                                   f"{spec.direction!r}")
    if spec.score is not None:
        score(spec.score)
    return RelationSpec(relation_type(spec.type), memory_id(spec.target_id), spec.direction,
                        spec.score)


def score(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise InvalidRelationError(f"relation score must be a number in -1..1, got {value!r}")
    return float(value)


def metadata(value: Any, config: WriteConfig) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError("metadata must be a flat JSON object")
    if len(value) > config.max_metadata_keys:
        raise LimitExceededError(f"metadata has {len(value)} keys, the limit is "
                                 f"{config.max_metadata_keys}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise ValidationError("metadata keys must be strings")
        clean_text(key, "a metadata key")
        if isinstance(item, str):
            clean_text(item, f"metadata value of {key!r}")
        if not isinstance(item, _SCALARS) or (isinstance(item, float) and not math.isfinite(item)):
            raise ValidationError(f"metadata value of {key!r} must be a string, number, "
                                  "boolean or null (metadata is flat)")
    size = metadata_bytes(value)
    if size > config.max_metadata_bytes:
        raise LimitExceededError(f"{METADATA_TOO_LARGE}: {size} bytes as compact UTF-8 JSON, "
                                 f"the limit is {config.max_metadata_bytes}")
    return dict(value)


#: the start of the error of metadata over its byte bound (``WriteConfig.max_metadata_bytes``)
METADATA_TOO_LARGE = "metadata is too large"


def metadata_bytes(value: dict[str, Any]) -> int:
    """The size metadata is bounded by: its UTF-8 bytes as compact JSON (no spaces, non-ASCII
    characters as themselves) - what a client sends, counted the same way by every client.

    Example:
        >>> metadata_bytes({"team": "infra", "n": 3})
        22
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:  # e.g. an int of more digits than Python converts to text
        raise ValidationError(f"metadata cannot be written as JSON: {exc}") from None
    return len(text.encode("utf-8"))


def timestamp(value: Any) -> datetime | None:
    """A tz-aware UTC datetime from a datetime or an ISO 8601 string (how REST parses its
    date-time fields too); naive values are taken as UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:  # upper: RFC 3339 allows a lower-case "t" and "z", fromisoformat does not
            value = datetime.fromisoformat(value.upper())
        except ValueError:
            raise ValidationError(f"invalid timestamp {value!r}: use ISO 8601") from None
    if not isinstance(value, datetime):
        raise ValidationError(f"invalid timestamp {value!r}: an ISO 8601 string or a "
                              "datetime (a number is not read as an epoch)")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:30:00+01:00 is before year 1 in UTC
        raise ValidationError(f"timestamp {value.isoformat()} is out of range in UTC") from None


def optional_text(value: Any, name: str, limit: int = 256) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise ValidationError(f"{name} must be a string of at most {limit} characters")
    return clean_text(value, name)


def bounded(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an integer")
    if not low <= value <= high:
        raise LimitExceededError(f"{name} must be in {low}..{high}, got {value}")
    return value
