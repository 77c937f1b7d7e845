"""Reads that change nothing: listings, the timeline around a memory, compact index entries
and the consolidation runs' records. The facade validates the namespace and delegates."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphmem.engine.core import Core
from graphmem.errors import NotFoundError, ValidationError
from graphmem.models import IndexEntry, Memory, RetrievalResult, Status, Tier, Transition
from graphmem.rules import validation as v
from graphmem.rules.text import preview, token_estimate
from graphmem.rules.ttl import seen, seen_all


def list_memories(core: Core, ns: str, status: Status | str, tier: Tier | str | None,
                  limit: int) -> list[Memory]:
    """Memories of one status (and tier), in the store's paging order, at most ``limit``."""
    try:
        wanted = Status(status)
    except ValueError:
        raise ValidationError(f"unknown status {status!r}") from None
    tier_ = v.tier(tier)
    limit = v.bounded(limit, "limit", 1, 10_000)
    out: list[Memory] = []
    now = core.clock()
    # an expired memory may still be stored active: its TTL ran out before maintenance
    stored = [wanted, Status.ACTIVE] if wanted is Status.EXPIRED else [wanted]
    for page in core.store.iter_memories(ns, embeddings=False, statuses=stored):
        out.extend(m for m in seen_all(page, now)  # a TTL run out: expired (issue 48)
                   if m.status is wanted and (tier_ is None or m.tier is tier_))
        if len(out) >= limit:
            break
    return out[:limit]


def timeline(core: Core, ns: str, anchor_id: str, before: int, after: int,
             session_only: bool) -> list[Memory]:
    """The memories around ``anchor_id`` in time (its session when it has one), oldest
    first, the anchor included."""
    cap = core.config.retrieval.max_limit
    before = v.bounded(before, "before", 0, cap)
    after = v.bounded(after, "after", 0, cap)
    anchor = core.require(ns, [anchor_id])[anchor_id]
    now = core.clock()
    earlier, later = core.store.time_window(ns, anchor, before=before, after=after,
                                            session_only=session_only, now=now)
    return [*reversed(earlier), seen(anchor, now), *later]


def index_entries(core: Core, results: Sequence[RetrievalResult]) -> list[IndexEntry]:
    """Compact previews of ranked results (id, ~80 characters, tier, score, tokens)."""
    chars = core.config.retrieval.preview_chars
    return [IndexEntry(r.memory.id, preview(r.memory.content, chars), r.memory.tier,
                       r.score, token_estimate(r.memory.content), r.memory.created_at,
                       r.memory.session_id, r.disputed) for r in results]


def run_summaries(core: Core) -> list[dict[str, Any]]:
    """Consolidation runs, newest first (id, status, namespace, times, report summary)."""
    return [{k: r.get(k) for k in ("id", "namespace", "status", "created_at",
                                    "finished_at", "candidates")}
            | {"summaries": r.get("report", {}).get("summaries"),
               "archived": r.get("report", {}).get("archived")}
            for r in core.store.list_runs()]


def run_record(core: Core, run_id: str) -> dict[str, Any]:
    data = core.store.get_run(run_id)
    if data is None:
        raise NotFoundError(f"no consolidation run {run_id!r}")
    return data


def run_report(core: Core, run_id: str, format: str) -> str:
    """A run's report as ``json``, ``md`` or a self-contained ``html`` page with plots."""
    from graphmem.consolidation.report import render

    data = run_record(core, run_id)
    if format not in ("json", "md", "html"):
        raise ValidationError(f"unknown report format {format!r}: json, md or html")
    return render(data["report"], format)


def transitions(core: Core, ns: str, id: str | None, limit: int,
                since: datetime | None) -> list[Transition]:
    """One memory's transitions (oldest first), or the namespace's latest (newest first)."""
    if id is not None:
        core.require(ns, [id])
        return core.store.transitions_of(ns, id)
    if not 1 <= limit <= 10_000:
        raise ValidationError("limit must be within 1..10000")
    return core.store.recent_transitions(ns, limit, since)
