"""What a successful ``WriteBatch`` tells listeners: the events of one write (see
``graphmem.engine.events``). Pure: the batch in, events out; bookkeeping alone (decay,
counts, context refreshed after a session re-link, automatic edges) is no event.

Example:
    >>> from datetime import UTC, datetime
    >>> from graphmem.models import Memory
    >>> from graphmem.store.base import WriteBatch
    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> m = Memory(id="m1", namespace="ops", content="the deploy failed")
    >>> [(e.type, e.memory_id, e.data["preview"]) for e in
    ...  batch_events(WriteBatch("ops", memories=[m], new_ids={"m1"}), at)]
    [('stored', 'm1', 'the deploy failed')]
    >>> [e.type for e in batch_events(WriteBatch("ops", delete_memories=["m1"]), at)]
    ['deleted']
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from graphmem.engine.events import MemoryEvent
from graphmem.models import EdgeSource, Kind, Memory, RelationType, Status, TransitionKind
from graphmem.store.base import WriteBatch

#: characters of content an event carries (the stream is scoped to the namespace already)
PREVIEW = 80
#: a twin reinforced by this write was stamped when the write began: at most this long
#: before its events are published (an imported record carries the times of its export)
WRITE_SPAN = timedelta(seconds=60)
_BY_KIND = {TransitionKind.PROMOTION: "promoted", TransitionKind.DEMOTION: "demoted",
            TransitionKind.RESTORE: "restored", TransitionKind.UPDATE: "updated",
            TransitionKind.SUPERSEDE: "superseded"}
_BY_STATUS = {Status.ARCHIVED: "archived", Status.EXPIRED: "expired",
              Status.ACTIVE: "restored"}


def _memory(m: Memory) -> dict[str, Any]:
    short = m.content if len(m.content) <= PREVIEW else m.content[:PREVIEW - 1] + "…"
    return {"tier": m.tier.value, "status": m.status.value, "memory_type": m.type,
            "kind": m.kind.value, "preview": short}


def batch_events(batch: WriteBatch, at: datetime) -> list[MemoryEvent]:
    """The events of ``batch`` (applied), in the store's order: deletions, memories,
    patches, edges, transitions."""
    ns, out = batch.namespace, []
    moved = {t.memory_id: t for t in batch.transitions}
    for a, b, rtype in batch.delete_edges if not batch.memories else ():
        # an edge removed on its own (unrelate); a write's re-linking is bookkeeping
        out.append(MemoryEvent("unrelated", ns, at, a, {"source_id": a, "target_id": b,
                                                        "relation": rtype.value}))
    out.extend(MemoryEvent("deleted", ns, at, i) for i in batch.delete_memories)
    # memories re-written only for their context (a session re-linked, an update's
    # neighbours) are bookkeeping: the targets of new FOLLOWS edges, the rest of an update
    relinked = {e.target_id for e in batch.edges if e.type is RelationType.FOLLOWS}
    updating = any(t.kind is TransitionKind.UPDATE for t in batch.transitions)
    for m in batch.memories:
        kind = _upsert_kind(m, batch.new_ids, moved, relinked, updating, at)
        if kind is not None:
            out.append(MemoryEvent(kind, ns, at, m.id, _memory(m)))
    for i, fields in batch.patches:
        kind = _patch_kind(fields, i in moved)
        if kind is not None:
            changed: dict[str, Any] = {k: str(getattr(fields[k], "value", fields[k]))
                                       for k in ("tier", "status") if k in fields}
            out.append(MemoryEvent(kind, ns, at, i, changed))
    for e in batch.edges:
        if e.source is EdgeSource.EXPLICIT:
            out.append(MemoryEvent("related", ns, at, e.source_id, {
                "source_id": e.source_id, "target_id": e.target_id,
                "relation": e.type.value}))
    for t in batch.transitions:
        kind = _BY_KIND.get(t.kind) or _BY_STATUS.get(t.to_status, "archived")
        data: dict[str, Any] = {"tier": t.to_tier.value, "status": t.to_status.value,
                                "from_tier": t.from_tier.value,
                                "from_status": t.from_status.value, "reason": t.reason}
        upserted = next((m for m in batch.memories if m.id == t.memory_id), None)
        if upserted is not None and kind == "updated":
            data.update(_memory(upserted))
        out.append(MemoryEvent(kind, ns, at, t.memory_id, data))
    return out


def _upsert_kind(m: Memory, new_ids: set[str], moved: dict[str, Any], relinked: set[str],
                 updating: bool, at: datetime) -> str | None:
    if m.id in new_ids or m.kind is Kind.SUMMARY:
        return "stored"  # new (a summary a consolidation wrote, too)
    if m.id in moved or m.id in relinked or updating:
        return None  # a transition says what happened, or only its context changed
    if m.reinforced_at == m.updated_at and timedelta(0) <= at - m.updated_at <= WRITE_SPAN:
        return "reinforced"  # the exact twin of a new write: its decay age restarted now
    return None  # an import (its own times), a context refresh: bookkeeping


def _patch_kind(fields: dict[str, Any], has_transition: bool) -> str | None:
    if "pinned" in fields:
        return "pinned" if fields["pinned"] else "unpinned"
    if has_transition:
        return None
    if "status" in fields:  # consolidation archives (and a rollback restores) by patch
        return _BY_STATUS[Status(fields["status"])]
    if "reinforced_at" in fields:
        return "reinforced"  # useful feedback: the decay age restarts
    return None


def run_events(data: dict[str, Any], at: datetime) -> list[MemoryEvent]:
    """A consolidation run's state (running, pending_approval, applied, rolled_back,
    dry_run), one event per namespace it concerns: its own, or (a run over every namespace)
    those it found clusters in."""
    namespaces = ([data["namespace"]] if data.get("namespace") else
                  sorted({c["namespace"] for c in data.get("clusters", ())}))
    info = {"run_id": data["id"], "status": data.get("status"),
            "dry_run": bool(data.get("dry_run")), "clusters": len(data.get("clusters", ())),
            "candidates": data.get("candidates")}
    return [MemoryEvent("consolidation", ns, at, None, dict(info)) for ns in namespaces]
