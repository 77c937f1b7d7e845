"""Export/import records: memories and edges as JSON-ready dicts, read back with validation."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np

from graphmem import validation as v
from graphmem.config import GraphMemConfig
from graphmem.errors import ValidationError
from graphmem.models import EdgeSource, Kind, Memory, Relation, RelationType, Status
from graphmem.text import Analyzer, content_hash


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
        tier=_enum(v.Tier, rec.get("tier", "medium"), "tier"),
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
    )


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


__all__ = ["RelationType", "edge_from_record", "memory_from_record"]
