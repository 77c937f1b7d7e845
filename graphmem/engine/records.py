"""Export/import records: memories and edges as JSON-ready dicts, read back with validation."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import IO, Any

import numpy as np

from graphmem.config import GraphMemConfig
from graphmem.engine.core import Core
from graphmem.errors import ValidationError
from graphmem.models import EdgeSource, Kind, Memory, Relation, Status, Tier
from graphmem.rules import validation as v
from graphmem.rules.text import Analyzer, content_hash
from graphmem.rules.time_expr import mentioned_times
from graphmem.store.base import WriteBatch
from graphmem.store.codec import VECTOR_FIELDS


def _vector(value: Any, dim: int, name: str) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.asarray(value, dtype=np.float32)
    if arr.shape != (dim,) or not np.all(np.isfinite(arr)):
        raise ValidationError(f"{name} must be {dim} finite numbers")
    return arr


def _enum(cls: Any, value: Any, name: str) -> Any:
    try:
        return cls(value)
    except ValueError:
        raise ValidationError(f"invalid {name} {value!r}") from None


def memory_from_record(rec: Mapping[str, Any], namespace: str, config: GraphMemConfig,
                       analyzer: Analyzer, now: datetime) -> Memory:
    """A memory exactly as exported (into ``namespace``); index fields rebuilt when absent.
    A record without lifecycle clocks (not a graphmem export) starts them at ``now``: its
    ``created_at`` stays the event time, but it is stored now (ADR 0006)."""
    content = v.content(rec.get("content"), config.write)
    created = v.timestamp(rec.get("created_at"))
    if created is None:
        raise ValidationError("created_at is required")
    dim = config.embedding.dim
    keywords = rec.get("keywords") or analyzer.index_text(
        content, created if config.write.date_in_keywords else None)
    return Memory(
        id=v.memory_id(rec.get("id")), namespace=namespace, content=content,
        kind=_enum(Kind, rec.get("kind", "memory"), "kind"),
        tier=_enum(Tier, rec.get("tier", "medium"), "tier"),
        base_importance=v.importance(rec.get("base_importance", 0.5)),
        importance=v.importance(rec.get("importance", rec.get("base_importance", 0.5))),
        pinned=bool(rec.get("pinned", False)), created_at=created,
        updated_at=v.timestamp(rec.get("updated_at")) or created,
        last_accessed_at=v.timestamp(rec.get("last_accessed_at")) or now,
        access_count=int(rec.get("access_count", 0)),
        surprise_score=float(rec.get("surprise_score", 0.0)),
        success_count=int(rec.get("success_count", 0)),
        failure_count=int(rec.get("failure_count", 0)),
        last_promoted_at=v.timestamp(rec.get("last_promoted_at")),
        source=v.optional_text(rec.get("source"), "source"),
        topic=v.optional_text(rec.get("topic"), "topic"),
        session_id=v.optional_text(rec.get("session_id"), "session_id"),
        metadata=v.metadata(rec.get("metadata"), config.write),
        status=_enum(Status, rec.get("status", "active"), "status"),
        content_hash=rec.get("content_hash") or content_hash(content),
        embedding=_vector(rec.get("embedding"), dim, "embedding"),
        keywords=keywords, context_keywords=rec.get("context_keywords") or "",
        context_embedding=_vector(rec.get("context_embedding"), dim, "context_embedding"),
        window_start=v.timestamp(rec.get("window_start")),
        window_count=int(rec.get("window_count", 0)),
        last_predicted=(None if rec.get("last_predicted") is None
                        else float(rec["last_predicted"])),
        stored_at=v.timestamp(rec.get("stored_at")) or now,
        reinforced_at=v.timestamp(rec.get("reinforced_at")) or now,
        mentioned=_mentioned(rec.get("mentioned"), content, created),
        expires_at=v.timestamp(rec.get("expires_at")),  # kept as it was: no TTL restarts
    )


def _mentioned(value: Any, content: str, created: datetime
               ) -> tuple[tuple[datetime, datetime], ...]:
    """The exported mentioned times (``[{"start", "end"}, ...]``), or those of the content
    when the record has none (an export of a graphmem before issue 49, or another tool's)."""
    if value is None:
        return mentioned_times(content, created)
    if not isinstance(value, list):
        raise ValidationError("mentioned must be a list of {start, end}")
    out = []
    for span in value:
        if not isinstance(span, Mapping):
            raise ValidationError("mentioned must be a list of {start, end}")
        start, end = v.timestamp(span.get("start")), v.timestamp(span.get("end"))
        if start is None or end is None or not start < end:
            raise ValidationError("a mentioned time needs a start before its end")
        out.append((start, end))
    return tuple(out)


def edge_from_record(rec: Mapping[str, Any], namespace: str) -> Relation:
    created = v.timestamp(rec.get("created_at"))
    if created is None:
        raise ValidationError("created_at is required")
    score = rec.get("score")
    return Relation(
        source_id=v.memory_id(rec.get("source_id")), target_id=v.memory_id(rec.get("target_id")),
        type=v.relation_type(rec.get("type"), caller=False), namespace=namespace,
        score=None if score is None else float(score), created_at=created,
        source=_enum(EdgeSource, rec.get("source", "explicit"), "edge source"),
    )


def export_records(core: Core, ns: str, *, vectors: bool = True) -> Iterator[dict[str, Any]]:
    """Every memory (with index fields, and vectors unless ``vectors=False``) then every
    edge, as dicts. Without vectors an import embeds the memories again with its own model."""
    for page in core.store.iter_memories(ns, embeddings=vectors):
        for m in page:
            rec = {"record": "memory", **m.to_dict(embeddings=True)}
            if not vectors:
                for name in VECTOR_FIELDS:
                    rec.pop(name, None)
            yield rec
    for edges in core.store.iter_edges(ns):
        for e in edges:
            yield {"record": "edge", **e.to_dict()}


def write_jsonl(out: IO[str], records: Iterable[Mapping[str, Any]]) -> int:
    """One JSON object per line (keys sorted: exports diff cleanly); returns the count."""
    n = 0
    for rec in records:
        out.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
        n += 1
    return n


#: recomputes the context fields of ``records`` from their session predecessors
#: (``Writer.refresh_context``)
ContextRefresh = Callable[[str, dict[str, Memory], dict[str, str | None]], None]


def import_records(core: Core, lock: AbstractContextManager[Any],
                   records: Iterable[Mapping[str, Any]], ns: str, *, batch_size: int,
                   progress: Callable[[int], None] | None,
                   refresh: ContextRefresh) -> tuple[int, int]:
    """Write exported records as they are (ids, times, embeddings, edges), batch by batch,
    each batch atomic; records without an embedding are embedded (outside the lock), and
    when they have no context vector either, ``refresh`` gives them one from their session
    predecessor once every record is in. A record that does not validate stops the import
    with its line number. Returns (memories, edges) written."""
    counts = [0, 0]
    pending = WriteBatch(ns)
    no_context: list[str] = []

    def flush() -> None:
        todo = [m for m in pending.memories if m.embedding is None]
        if todo:
            core.vectors.check(ns)
            for m, vec in zip(todo, core.embedder.embed([m.content for m in todo]),
                              strict=True):
                m.embedding = vec
            no_context.extend(m.id for m in todo
                              if m.context_embedding is None and m.session_id is not None)
        with lock:  # an edge's ends are in this batch or stored already
            ids = {m.id for m in pending.memories}
            core.require(ns, list(dict.fromkeys(end for e in pending.edges for end in
                                                (e.source_id, e.target_id) if end not in ids)))
            core.apply(pending)
        counts[0] += len(pending.memories)
        counts[1] += len(pending.edges)
        if progress:
            progress(len(pending.memories) + len(pending.edges))
        pending.memories, pending.edges = [], []

    for n, rec in enumerate(records, start=1):
        kind = rec.get("record")
        try:
            if kind == "memory":
                pending.memories.append(memory_from_record(rec, ns, core.config,
                                                           core.analyzer, core.clock()))
            elif kind == "edge":
                pending.edges.append(edge_from_record(rec, ns))
            else:
                raise ValidationError("'record' must be 'memory' or 'edge'")
        except ValidationError as exc:
            raise type(exc)(f"record {n}: {exc}") from None
        if len(pending.memories) + len(pending.edges) >= batch_size:
            flush()
    if pending:
        flush()
    for i in range(0, len(no_context), batch_size):
        _refresh_contexts(core, lock, ns, no_context[i:i + batch_size], refresh)
    return counts[0], counts[1]


def _refresh_contexts(core: Core, lock: AbstractContextManager[Any], ns: str,
                      ids: list[str], refresh: ContextRefresh) -> None:
    """Context fields of imported memories that came without vectors, as a write makes them:
    from each one's predecessor in its session (one atomic batch)."""
    with lock:
        found = core.store.get_memories(ns, ids, embeddings=True)
        predecessor: dict[str, str | None] = {}
        for sid in {m.session_id for m in found.values() if m.session_id is not None}:
            order = [mid for mid, _ in core.store.session_members(ns, sid)]
            predecessor.update({mid: (order[i - 1] if i else None)
                                for i, mid in enumerate(order) if mid in found})
        records = {mid: found[mid] for mid in predecessor}
        refresh(ns, records, predecessor)
        core.apply(WriteBatch(ns, memories=list(records.values())))
