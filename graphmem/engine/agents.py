"""What agents remember (ADR 0013): listing and history, validity in time, consensus and
dissent, per-agent streams and their summaries, tool-usage capture.

``Agents`` does the work of the facade's agent-facing methods over a ``Core``;
``CaptureGate`` decides which tool events are kept."""

from __future__ import annotations

import base64
import json
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from graphmem.config import CaptureConfig
from graphmem.errors import ConflictError, ValidationError
from graphmem.models import (
    ConsensusRecord,
    EdgeSource,
    HistoryEntry,
    Memory,
    MemoryInput,
    MemoryPage,
    Relation,
    RelationSpec,
    RelationType,
    RetrievalResult,
    Status,
    StreamSummary,
    Transition,
    TransitionKind,
)
from graphmem.rules import validation as v
from graphmem.rules.ttl import seen_all
from graphmem.store.base import SORT_FIELDS, ListSpec, MemoryStore, WriteBatch

if TYPE_CHECKING:
    from graphmem.engine.core import Core
    from graphmem.engine.retrieval import Retriever

log = logging.getLogger(__name__)


class CaptureGate:
    """Which tool events are kept: the configured allow / skip lists, then at most
    ``max_per_minute`` per agent and tool in a namespace. The minute is counted in the store
    (``MemoryStore.count_event``: one window per namespace, agent and tool, opened by the
    first event after the last one ended), so every process and replica sharing it counts
    together - each ``graphmem capture`` hook call is a process of its own (issue 45).
    Everything it turns away is counted here, per process (``stats``, ``/metrics``).

    Example:
        >>> import tempfile
        >>> from datetime import UTC, datetime
        >>> from graphmem.store.sqlite.store import SQLiteStore
        >>> store = SQLiteStore(tempfile.mkdtemp()); store.open()
        >>> gate = CaptureGate(CaptureConfig(max_per_minute=1, skip_tools=("Read",)))
        >>> now = datetime(2026, 1, 1, tzinfo=UTC)
        >>> [gate.admit(store, "ops", "a", t, now) for t in ("Bash", "Read", "Bash", "Edit")]
        [None, 'skipped', 'over_cap', None]
        >>> store.close()
    """

    #: the window ``max_per_minute`` counts in
    WINDOW_SECONDS = 60.0

    def __init__(self, config: CaptureConfig) -> None:
        self.config = config
        #: namespace -> events kept / skipped by the lists / dropped over the cap
        self.captured: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()

    def admit(self, store: MemoryStore, ns: str, agent: str, tool: str,
              now: datetime) -> str | None:
        """None when the event is to be kept, else why not ("skipped" or "over_cap")."""
        if not self.config.allows(tool):
            self.skipped[ns] += 1
            return "skipped"
        key = json.dumps(["capture", agent, tool])
        if not store.count_event(ns, key, self.config.max_per_minute, self.WINDOW_SECONDS,
                                 now):
            self.dropped[ns] += 1
            if self.dropped[ns] == 1 or self.dropped[ns] % 100 == 0:
                log.warning("tool capture over %d events per minute for an agent's tool: "
                            "%d dropped so far (this process)", self.config.max_per_minute,
                            self.dropped[ns])
            return "over_cap"
        self.captured[ns] += 1
        return None

    def stats(self, ns: str) -> dict[str, int]:
        return {"captured": self.captured[ns], "skipped": self.skipped[ns],
                "dropped": self.dropped[ns]}


#: delete_all's confirmation must repeat the namespace
UNCONFIRMED_DELETE = "delete_all needs confirm= the namespace's name"
#: supersede(old, new) with old == new
SELF_SUPERSEDE = "a memory cannot supersede itself"
#: the one message for a cursor this listing did not hand out (opaque: nothing else to say)
INVALID_CURSOR = "invalid cursor: pass the next_cursor of a page of the same sort and order"


def encode_cursor(sort: str, descending: bool, m: Memory) -> str:
    value = getattr(m, sort)
    key = value.timestamp() if isinstance(value, datetime) else float(value)
    raw = json.dumps([sort, descending, key, m.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, sort: str, descending: bool) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        s, d, key, id_ = json.loads(raw)
        ok = s == sort and d == descending and isinstance(key, int | float) \
            and isinstance(id_, str)
    except (ValueError, TypeError):
        ok = False
    if not ok:
        raise ValidationError(INVALID_CURSOR)
    return float(key), id_


class Agents:
    """Listing, history, validity, consensus and dissent, streams and tool capture over the
    core; ``GraphMemory`` validates, stores the items built here and delegates the rest.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     m = mem.store("ships on tuesdays", namespace="ops", type="decision")
        ...     _ = mem.update(m.id, namespace="ops", content="ships on wednesdays")
        ...     [step.event for step in mem.history(m.id, namespace="ops")]
        ['created', 'update']
    """

    def __init__(self, core: Core, retriever: Retriever, write_lock: threading.RLock) -> None:
        self.core, self._retriever, self._write_lock = core, retriever, write_lock
        self._capture = CaptureGate(core.config.capture)

    def activity(self, ns: str) -> dict[str, Any]:
        return {"cache": self._retriever.cache.stats(ns), "capture": self._capture.stats(ns)}

    # -- listing and history --------------------------------------------------------------
    def list_page(self, ns: str, type: str | Sequence[str] | None, source: str | None,
                  session_id: str | None, topic: str | None, tier: str | None,
                  status: str | None, since: Any, until: Any, sort: str, order: str,
                  limit: int, cursor: str | None) -> MemoryPage:
        if sort not in SORT_FIELDS:
            raise ValidationError(f"unknown sort {sort!r}: one of {', '.join(SORT_FIELDS)}")
        if order not in ("asc", "desc"):
            raise ValidationError("order must be 'asc' or 'desc'")
        if status is not None and status not in {s.value for s in Status}:
            raise ValidationError(f"unknown status {status!r}")
        tier_ = v.tier(tier)
        desc = order == "desc"
        now = self.core.clock()  # statuses as of now: a memory's TTL may have run out
        spec = ListSpec(
            statuses=None if status is None else (Status(status),),
            tiers=None if tier_ is None else (tier_,),
            types=None if type is None else v.types(type),
            source=v.optional_text(source, "source"),
            session_id=v.optional_text(session_id, "session_id"),
            topic=v.optional_text(topic, "topic"), since=v.timestamp(since),
            until=v.timestamp(until), sort=sort, descending=desc,
            after=None if cursor is None else decode_cursor(cursor, sort, desc),
            limit=v.bounded(limit, "limit", 1, 1000) + 1, now=now)
        items = seen_all(self.core.store.list_page(ns, spec), now)  # TTL run out: expired
        more = len(items) == spec.limit
        items = items[: spec.limit - 1]
        return MemoryPage(items, encode_cursor(sort, desc, items[-1]) if more else None)

    def history(self, ns: str, id: str) -> list[HistoryEntry]:
        m = self.core.require(ns, [id])[id]
        moves = self.core.store.transitions_of(ns, id)
        # each update recorded the content it replaced: a version's content is the next one's
        contents = iter([t.detail for t in moves if t.kind is TransitionKind.UPDATE
                         and t.detail is not None] + [m.content])
        out = [HistoryEntry("created", m.stored_at, "stored", next(contents))]
        for t in moves:
            content = (next(contents) if t.kind is TransitionKind.UPDATE
                       and t.detail is not None else None)
            out.append(HistoryEntry(t.kind.value, t.at, t.reason, content, t.from_tier,
                                    t.to_tier, t.from_status, t.to_status))
        return out

    def delete_all(self, ns: str, confirm: str) -> int:
        if confirm != ns:
            raise ValidationError(UNCONFIRMED_DELETE)
        ids = [m.id for page in self.core.store.iter_memories(ns, embeddings=False)
               for m in page]
        for i in range(0, len(ids), 1000):
            with self._write_lock:
                self.core.apply(WriteBatch(ns, delete_memories=ids[i:i + 1000]))
        log.info("deleted every memory of a namespace: %d", len(ids))
        return len(ids)

    # -- validity -------------------------------------------------------------------------
    def supersede(self, ns: str, old_id: str, new_id: str, reason: str | None) -> Memory:
        """Under the caller's write lock."""
        reason = v.optional_text(reason, "reason") or f"superseded by {new_id}"
        found = self.core.require(ns, [old_id, new_id])
        old, new = found[old_id], found[new_id]
        if old_id == new_id:
            raise ValidationError(SELF_SUPERSEDE)
        if old.superseded_by is not None:
            raise ConflictError(f"memory {old_id!r} is already superseded by "
                                f"{old.superseded_by!r}")
        now = self.core.clock()
        start = old.valid_from or old.created_at
        until = new.valid_from or new.created_at
        until = until if until > start else max(now, start + timedelta(microseconds=1))
        if old.valid_until is not None:
            until = min(until, old.valid_until)
        batch = WriteBatch(ns, patches=[(old_id, {"valid_until": until,
                                                  "superseded_by": new_id,
                                                  "updated_at": now})],
                           transitions=[Transition(old_id, TransitionKind.SUPERSEDE,
                                                   old.tier, old.tier, reason, now,
                                                   old.status, old.status)],
                           edges=[Relation(new_id, old_id, RelationType.REFERENCES, ns,
                                           None, now, EdgeSource.AUTO)])
        batch.delete_edges += [e.key for e in self.core.store.edges_of(
            ns, [old_id], [RelationType.CONTRADICTS]) if {e.source_id, e.target_id}
            == {old_id, new_id}]
        self.core.apply(batch)
        old.valid_until, old.superseded_by, old.updated_at = until, new_id, now
        return old

    # -- consensus and dissent ------------------------------------------------------------
    @staticmethod
    def consensus(topic: str, conclusion: str, participants: Iterable[str],
                  confidence: float, evidence_ids: Iterable[str], session_id: str | None
                  ) -> MemoryInput:
        topic_ = _topic(topic)
        people = [v.optional_text(p, "participant") or "" for p in participants]
        return MemoryInput(content=f"Consensus on {topic_}: {conclusion}", type="consensus",
                           topic=topic_, session_id=session_id,
                           metadata={"participants": ", ".join(people),
                                     "confidence": v.importance(confidence)},
                           relations=[RelationSpec(RelationType.REFERENCES, e)
                                      for e in evidence_ids])

    @staticmethod
    def dissent(topic: str, agent: str, position: str, against: str | None) -> MemoryInput:
        topic_ = _topic(topic)
        who = v.optional_text(agent, "agent")
        if not who:
            raise ValidationError("agent is empty")
        return MemoryInput(content=f"{who} dissents on {topic_}: {position}", type="dissent",
                           topic=topic_, source=who,
                           relations=[] if against is None
                           else [RelationSpec(RelationType.CONTRADICTS, against)])

    def _similar(self, topic: str, namespace: str, limit: int, type: str
                 ) -> list[RetrievalResult]:
        """Memories of ``type`` on topics like this one: a retrieval without the walk that
        counts no access."""
        q = self._retriever.query(_topic(topic), namespace, limit=limit, depth=0,
                                  filters={"type": type})
        return self._retriever.retrieve(q, touch=False)

    def find_similar(self, topic: str, namespace: str, limit: int) -> list[ConsensusRecord]:
        hits = self._similar(topic, namespace, limit, "consensus")
        against = self._dissent_against(namespace, [h.memory.id for h in hits])
        return [ConsensusRecord(h.memory, h.score, against.get(h.memory.id, []))
                for h in hits]

    def dissent_for_topic(self, topic: str, namespace: str, limit: int) -> list[Memory]:
        out: dict[str, Memory] = {}
        for record in self.find_similar(topic, namespace, limit):
            for m in record.dissent:
                out.setdefault(m.id, m)
        for hit in self._similar(topic, namespace, limit, "dissent"):
            out.setdefault(hit.memory.id, hit.memory)
        return list(out.values())[:limit]

    def _dissent_against(self, namespace: str, ids: list[str]) -> dict[str, list[Memory]]:
        ns = v.namespace(namespace)
        edges = self.core.store.edges_of(ns, ids, [RelationType.CONTRADICTS]) if ids else []
        wanted = set(ids)
        pairs = [(e.target_id if e.source_id not in wanted else e.source_id,
                  e.source_id if e.source_id not in wanted else e.target_id) for e in edges]
        found = self.core.store.get_memories(ns, [d for _, d in pairs])
        out: dict[str, list[Memory]] = {}
        for consensus, d in sorted(pairs):
            if d in found and found[d].type == "dissent":
                out.setdefault(consensus, []).append(found[d])
        return out

    def summarize(self, namespace: str, agent: str | None, session_id: str | None,
                  since: Any, until: Any, limit: int) -> StreamSummary:
        from graphmem.consolidation.summarise import KeyPhrases, extractive
        from graphmem.rules.text import is_chit_chat

        if agent is None and session_id is None:
            raise ValidationError("summarize needs an agent or a session_id")
        limit = v.bounded(limit, "limit", 1, 5000)
        members: list[Memory] = []
        cursor = None
        while len(members) < limit:
            page = self.list_page(v.namespace(namespace), None, agent, session_id, None, None,
                                  "active", since, until, "created_at", "asc",
                                  min(1000, limit - len(members)), cursor)
            members += page.items
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        if not members:
            return StreamSummary("", ())
        ids = [m.id for m in members]
        full = self.core.store.get_memories(namespace, ids, embeddings=True)
        texts = [full[i].content for i in ids]
        stored = [full[i].embedding for i in ids]
        vectors = (self.core.embedder.embed(texts) if any(e is None for e in stored)
                   else np.stack(stored))  # type: ignore[arg-type]  # none is None
        text = extractive(texts, vectors, KeyPhrases(texts), self.core.config.consolidation,
                          [is_chit_chat(self.core.analyzer, t) for t in texts])
        return StreamSummary(text, tuple(ids))

    # -- tool usage -----------------------------------------------------------------------
    def tool_call(self, ns: str, agent: str, tool: str, input: str, output: str, ok: bool,
                  session_id: str | None) -> MemoryInput | None:
        """The tool call's memory, or None when the gate turns it away."""
        who, name = v.optional_text(agent, "agent"), v.optional_text(tool, "tool")
        if not who or not name:
            raise ValidationError("agent and tool are required")
        if not isinstance(ok, bool):
            raise ValidationError("ok must be true or false")
        for label, text in (("input", input), ("output", output)):
            if not isinstance(text, str):
                raise ValidationError(f"{label} must be a string")
        if self._capture.admit(self.core.store, ns, who, name, self.core.clock()):
            return None  # skipped or over the cap (counted)
        cap = self.core.config.capture.max_chars
        content = (f"{who} used {name} ({'ok' if ok else 'failed'}): {input[:cap]}"
                   f" -> {output[:cap]}")
        return MemoryInput(content=content, type="tool_usage", source=who,
                           session_id=session_id, topic=name,
                           metadata={"tool": name, "ok": ok, "input_chars": len(input),
                                     "output_chars": len(output)})


def _topic(topic: Any) -> str:
    text = v.optional_text(topic, "topic")
    if not text or not text.strip():
        raise ValidationError("topic is empty")
    return text
