"""``Memory.to_dict`` (its conversion by positions worked out from the annotations) gives
exactly what the field-by-field conversion by each value's type gives, key order included,
for any memory, with and without the embeddings and index fields."""

from __future__ import annotations

import enum
import json
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphmem import models
from graphmem.models import Kind, Memory, Status, Tier

times = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1),
                     timezones=st.just(UTC))
maybe_times = st.none() | times


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    return Memory(
        id=draw(st.text(min_size=1, max_size=8)), namespace="ns",
        content=draw(st.text(max_size=30)), kind=draw(st.sampled_from(Kind)),
        tier=draw(st.sampled_from(Tier)), status=draw(st.sampled_from(Status)),
        importance=draw(st.floats(0, 1)), pinned=draw(st.booleans()),
        created_at=draw(times), updated_at=draw(times), last_accessed_at=draw(times),
        last_promoted_at=draw(maybe_times), window_start=draw(maybe_times),
        stored_at=draw(times), reinforced_at=draw(times), valid_from=draw(maybe_times),
        valid_until=draw(maybe_times), superseded_by=draw(st.none() | st.text(max_size=5)),
        metadata=draw(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)),
        used_by=draw(st.dictionaries(st.text(max_size=5), st.floats(0, 1e9), max_size=3)),
        embedding=np.ones(4, dtype=np.float32), keywords="k w", last_predicted=None)


def field_by_field(m: Memory) -> dict[str, Any]:
    """The reference: every field, converted by its value's type."""
    out: dict[str, Any] = {}
    for f in fields(m):
        value = getattr(m, f.name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, np.ndarray):
            value = [float(x) for x in value]
        elif f.name in ("metadata", "used_by"):
            value = dict(value)
        elif f.name == "mentioned":
            value = models.spans_dict(value)
        out[f.name] = value
    return out


@given(memories())
def test_the_fast_path_is_the_field_by_field_conversion(m: Memory) -> None:
    full = m.to_dict(embeddings=True)
    assert list(full.items()) == list(field_by_field(m).items())
    for name in ("embedding", "context_embedding", "keywords", "context_keywords"):
        full.pop(name)
    fast = m.to_dict()
    assert list(fast.items()) == list(full.items())
    json.dumps(fast)  # JSON-ready: no datetime or enum left over
    assert fast["metadata"] is not m.metadata and fast["used_by"] is not m.used_by


def test_every_time_enum_and_dict_field_is_converted() -> None:
    shown = models._SHOWN
    assert {shown[i] for i in models._SHOWN_TIMES} == {
        "created_at", "updated_at", "last_accessed_at", "last_promoted_at", "window_start",
        "stored_at", "reinforced_at", "valid_from", "valid_until", "expires_at"}
    assert {shown[i] for i in models._SHOWN_ENUMS} == {"kind", "tier", "status"}
    assert {shown[i] for i in models._SHOWN_DICTS} == {"metadata", "used_by"}
