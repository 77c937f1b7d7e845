"""Hostile strings at the facade, on every adapter (issue 15: an id ending in a newline
crashed a shared FalkorDB server; NUL bytes and lone surrogates gave 500s or unexportable
namespaces). Each is refused with a typed error and writes nothing; the store still answers."""

from __future__ import annotations

import io
import json

import pytest

from graphmem import GraphMemory
from graphmem.errors import InvalidNamespaceError, NotFoundError, ValidationError

BAD_IDS = ["abc\n", "abc\r\n", "a\x00b", "\nabc", "abc\t", "abc\ud800"]
BAD_NAMESPACES = ["ns\n", "ns\x00", "ns\u2028", "ns\ud800", " ns"]
BAD_TEXTS = ["a\x00b", "lone \ud800 surrogate", "bell \x07", "\udfff", "esc \x1b[0m"]


def _count(mem: GraphMemory, ns: str) -> int:
    return sum(len(p) for p in mem.backend.iter_memories(ns, embeddings=False))


@pytest.mark.parametrize("bad", BAD_IDS)
def test_ids_with_newlines_nul_or_surrogates_are_refused(mem: GraphMemory, bad: str) -> None:
    ok = mem.store("a fine memory", namespace="A")
    with pytest.raises(ValidationError, match="invalid memory id"):
        mem.store("x", namespace="A", id=bad)
    for call in (lambda: mem.get(bad, namespace="A"),
                 lambda: mem.relate(ok.id, bad, "CAUSES", namespace="A"),
                 lambda: mem.entries([bad], namespace="A"),
                 lambda: mem.timeline(bad, namespace="A"),
                 lambda: mem.update(bad, namespace="A", content="y"),
                 lambda: mem.delete(bad, namespace="A")):
        with pytest.raises(ValidationError):
            call()
    mem.backend.ping()  # the server is alive
    assert _count(mem, "A") == 1
    assert mem.get(ok.id, namespace="A").content == "a fine memory"


@pytest.mark.parametrize("bad", BAD_NAMESPACES)
def test_namespaces_with_newlines_nul_or_surrogates_are_refused(mem: GraphMemory,
                                                                 bad: str) -> None:
    with pytest.raises(InvalidNamespaceError):
        mem.store("x", namespace=bad)
    with pytest.raises(InvalidNamespaceError):
        mem.retrieve("x", namespace=bad)
    mem.backend.ping()
    assert mem.namespaces() == []


@pytest.mark.parametrize("bad", BAD_TEXTS)
def test_text_fields_refuse_control_characters_and_lone_surrogates(mem: GraphMemory,
                                                                     bad: str) -> None:
    m = mem.store("kept as it was", namespace="A", source="agent", topic="t",
                  metadata={"k": "v"})
    attempts = [
        lambda: mem.store(bad, namespace="A"),
        lambda: mem.store("x", namespace="A", source=bad),
        lambda: mem.store("x", namespace="A", topic=bad),
        lambda: mem.store("x", namespace="A", session_id=bad),
        lambda: mem.store("x", namespace="A", metadata={bad: "v"}),
        lambda: mem.store("x", namespace="A", metadata={"k": bad}),
        lambda: mem.store_many(["fine", {"content": bad}], namespace="A"),
        lambda: mem.update(m.id, namespace="A", content=bad),
        lambda: mem.update(m.id, namespace="A", source=bad),
        lambda: mem.update(m.id, namespace="A", metadata={bad: 1}),
        lambda: mem.retrieve(bad, namespace="A"),
        lambda: mem.retrieve("x", namespace="A", filters={"source": bad}),
    ]
    for attempt in attempts:
        with pytest.raises(ValidationError):
            attempt()
    mem.backend.ping()
    assert _count(mem, "A") == 1
    again = mem.get(m.id, namespace="A")
    assert (again.content, again.source, again.metadata) == ("kept as it was", "agent",
                                                              {"k": "v"})
    out = io.StringIO()  # the namespace still exports (backups are never blocked)
    assert mem.export_jsonl(out, namespace="A") == 1
    json.loads(out.getvalue())


def test_ordinary_whitespace_and_unicode_still_round_trip(mem: GraphMemory) -> None:
    text = "line one\nline two\ttabbed\r\nemoji \U0001f600 and \u00e9\u4e2d\u2028sep"
    m = mem.store(text, namespace="A", metadata={"note": "a\nb"}, source="Zoë")
    got = mem.get(m.id, namespace="A")
    assert got.content == text and got.metadata == {"note": "a\nb"} and got.source == "Zoë"


def test_filters_of_the_wrong_shape_are_refused(mem: GraphMemory) -> None:
    mem.store("x", namespace="A")
    for filters in ({"metadata": "x"}, {"metadata": ["a"]}, {"source": 3},
                    {"metadata": {"k": {"nested": 1}}}):
        with pytest.raises(ValidationError):
            mem.retrieve("x", namespace="A", filters=filters)


def test_timestamps_out_of_range_in_utc_are_refused(mem: GraphMemory) -> None:
    with pytest.raises(ValidationError, match="out of range"):
        mem.store("x", namespace="A", created_at="0001-01-01T00:30:00+01:00")
    with pytest.raises(NotFoundError):
        mem.get("missing", namespace="A")
