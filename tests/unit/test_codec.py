"""The one record codec both adapters use: a memory survives flatten -> unflatten exactly,
and records of an older graphmem read with the documented defaults."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from graphmem.models import Kind, Memory, Relation, RelationType, Status, Tier, Transition
from graphmem.models import TransitionKind as TK
from graphmem.store import codec

times = st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1),
                     timezones=st.just(UTC)).map(lambda t: t.replace(microsecond=0))
opt_text = st.none() | st.text(max_size=20)


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    return Memory(
        id=draw(st.text(min_size=1, max_size=12)), namespace="ns", content=draw(st.text()),
        kind=draw(st.sampled_from(Kind)), tier=draw(st.sampled_from(Tier)),
        base_importance=draw(st.floats(0, 1)), importance=draw(st.floats(0, 1)),
        pinned=draw(st.booleans()), created_at=draw(times), updated_at=draw(times),
        last_accessed_at=draw(times), access_count=draw(st.integers(0, 10**6)),
        last_promoted_at=draw(st.none() | times), source=draw(opt_text),
        topic=draw(opt_text), session_id=draw(opt_text),
        metadata=draw(st.dictionaries(st.text(max_size=5), st.integers() | st.text())),
        status=draw(st.sampled_from(Status)), window_start=draw(st.none() | times),
        window_count=draw(st.integers(0, 99)),
        last_predicted=draw(st.none() | st.floats(0, 1)), stored_at=draw(times),
        reinforced_at=draw(times), keywords=draw(st.text()))


@given(memories())
def test_a_memory_survives_the_codec(m: Memory) -> None:
    flat = codec.flatten(m)
    assert set(flat) == set(codec.MEMORY_FIELDS)
    assert all(isinstance(v, str | int | float | bool | type(None)) for v in flat.values())
    vec = np.arange(4, dtype=np.float32)
    back = codec.unflatten(flat, embedding=codec.vector(codec.blob(vec)))
    assert dataclasses.replace(back, embedding=None) == m
    assert np.array_equal(back.embedding, vec)  # type: ignore[arg-type]


def test_every_memory_field_is_stored_once() -> None:
    names = {f.name for f in dataclasses.fields(Memory)}
    assert set(codec.MEMORY_FIELDS) | set(codec.VECTOR_FIELDS) == names
    assert len(codec.MEMORY_FIELDS) == len(set(codec.MEMORY_FIELDS))


def test_records_of_an_older_graphmem_read_with_defaults() -> None:
    at = datetime(2023, 5, 1, tzinfo=UTC)
    flat = codec.flatten(Memory(id="m", namespace="ns", content="old", last_accessed_at=at))
    for gone in ("stored_at", "reinforced_at", "window_count", "keywords", "window_start"):
        flat.pop(gone)
    old = codec.unflatten(flat)
    assert old.stored_at == old.reinforced_at == at  # they started at the last access
    assert (old.window_count, old.keywords, old.window_start) == (0, "", None)


def test_edges_and_transitions_round_trip() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=1.5)
    e = Relation("a", "b", RelationType.CAUSES, "ns", 0.25, at)
    assert codec.edge("ns", codec.edge_props(e)) == e
    t = Transition("a", TK.PROMOTION, Tier.MEDIUM, Tier.FAST, "hot", at, Status.ACTIVE,
                   Status.ACTIVE)
    assert codec.transition(codec.transition_props(t)) == t
