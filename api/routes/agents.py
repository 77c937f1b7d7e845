"""What agents remember over REST (ADR 0013): listing with cursors, history, delete_all,
supersede, consensus and dissent, per-agent streams and summaries, tool capture."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from graphmem.api import schemas as s
from graphmem.api.auth import authorize
from graphmem.api.deps import Auth, Mem, MemoryIdPath, NsQuery

router = APIRouter(tags=["agents"])

TypeQuery = Annotated[list[Annotated[str, Query(pattern=s.TYPE_PATTERN)]] | None,
                      Query(description="memory types (repeat the parameter for several)")]
TextQuery = Annotated[str | None, Query(max_length=256, pattern=s.TEXT_PATTERN)]
TimeQuery = Annotated[datetime | None, Query(description="event time, ISO 8601",
                                             json_schema_extra={"pattern": s.DATE_PATTERN})]
Cursor = Annotated[str | None, Query(max_length=512, pattern=r"^[A-Za-z0-9_-]*$",
                                     description="next_cursor of the page before (opaque: "
                                                 "only a cursor this listing handed out, with "
                                                 "the same sort and order, is valid)")]
PageLimit = Annotated[int, Query(ge=1, le=1000)]


@router.get("/v1/memories", response_model=s.MemoryPageOut)
def list_memories(namespace: NsQuery, who: Auth, mem: Mem, type: TypeQuery = None,
                  source: TextQuery = None, session_id: TextQuery = None,
                  topic: TextQuery = None, tier: s.TierName | None = None,
                  status: Literal["active", "archived", "expired", "all"] = "active",
                  since: TimeQuery = None, until: TimeQuery = None,
                  sort: Literal["created_at", "stored_at", "updated_at", "last_accessed_at",
                                "importance"] = "created_at",
                  order: Literal["asc", "desc"] = "desc", limit: PageLimit = 50,
                  cursor: Cursor = None) -> Any:
    """Memories matching every filter given, sorted, a page at a time (keyset cursor)."""
    return mem.list_page(namespace=authorize(who, namespace), type=type or None,
                         source=source, session_id=session_id, topic=topic, tier=tier,
                         status=None if status == "all" else status, since=since,
                         until=until, sort=sort, order=order, limit=limit,
                         cursor=cursor or None).to_dict()


@router.delete("/v1/memories", response_model=s.DeletedOut)
def delete_all(namespace: NsQuery, who: Auth, mem: Mem,
               confirm: Annotated[str, Query(description="the namespace again",
                                             pattern=s.NS_PATTERN)]) -> Any:
    """Delete every memory of the namespace: admin keys only, ``confirm`` repeats it."""
    ns = authorize(who, namespace, "admin")
    return {"deleted": mem.delete_all(namespace=ns, confirm=confirm)}


@router.get("/v1/memories/{memory_id}/history", response_model=list[s.HistoryEntryOut])
def history(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth, mem: Mem) -> Any:
    """Every version of the content and every change, oldest first."""
    return [e.to_dict() for e in mem.history(memory_id, namespace=authorize(who, namespace))]


@router.post("/v1/memories/{memory_id}/supersede", response_model=s.MemoryOut)
def supersede(memory_id: MemoryIdPath, namespace: NsQuery, body: s.SupersedeIn, who: Auth,
              mem: Mem) -> Any:
    """``by`` replaces this memory: its validity ends, the two are linked."""
    return mem.supersede(memory_id, body.by, namespace=authorize(who, namespace, "writer"),
                         reason=body.reason).to_dict()


@router.post("/v1/consensus", status_code=201, response_model=s.MemoryOut)
def record_consensus(body: s.ConsensusIn, who: Auth, mem: Mem) -> Any:
    return mem.record_consensus(body.topic, body.conclusion,
                                namespace=authorize(who, body.namespace, "writer"),
                                participants=body.participants, confidence=body.confidence,
                                evidence_ids=body.evidence_ids,
                                session_id=body.session_id).to_dict()


@router.post("/v1/dissent", status_code=201, response_model=s.MemoryOut)
def record_dissent(body: s.DissentIn, who: Auth, mem: Mem) -> Any:
    return mem.record_dissent(body.topic, body.agent, body.position,
                              namespace=authorize(who, body.namespace, "writer"),
                              against=body.against).to_dict()


@router.post("/v1/consensus/similar", response_model=list[s.ConsensusOut])
def find_similar(body: s.TopicIn, who: Auth, mem: Mem) -> Any:
    """Past consensus on topics like this one, with the dissent against each."""
    return [r.to_dict() for r in mem.find_similar(
        body.topic, namespace=authorize(who, body.namespace), limit=body.limit)]


@router.post("/v1/dissent/similar", response_model=list[s.MemoryOut])
def dissent_for_topic(body: s.TopicIn, who: Auth, mem: Mem) -> Any:
    return [m.to_dict() for m in mem.dissent_for_topic(
        body.topic, namespace=authorize(who, body.namespace), limit=body.limit)]


@router.get("/v1/streams/{agent}", response_model=s.MemoryPageOut)
def stream(agent: Annotated[str, s.AgentPath], namespace: NsQuery, who: Auth, mem: Mem,
           since: TimeQuery = None, until: TimeQuery = None, limit: PageLimit = 50,
           cursor: Cursor = None) -> Any:
    """An agent's memories in event-time order, oldest first."""
    return mem.stream(agent, namespace=authorize(who, namespace), since=since, until=until,
                      limit=limit, cursor=cursor or None).to_dict()


@router.post("/v1/summaries", response_model=s.SummaryOut)
def summarize(body: s.SummarizeIn, who: Auth, mem: Mem) -> Any:
    """An extractive summary of an agent's or a session's memories, with their ids."""
    return mem.summarize(namespace=authorize(who, body.namespace), agent=body.agent,
                         session_id=body.session_id, since=body.since, until=body.until,
                         limit=body.limit).to_dict()


@router.post("/v1/tools/capture", response_model=s.CaptureOut)
def capture_tool(body: s.CaptureIn, who: Auth, mem: Mem) -> Any:
    """A tool call as a fast-tier ``tool_usage`` memory; ``captured: false`` when the
    capture lists skip the tool or the agent is over its per-minute cap (counted)."""
    m = mem.capture_tool(agent=body.agent, tool=body.tool, input=body.input,
                         output=body.output, ok=body.ok, session_id=body.session_id,
                         namespace=authorize(who, body.namespace, "writer"))
    return {"captured": m is not None, "memory": None if m is None else m.to_dict()}
