"""/v1/search, /v1/search/index, /v1/search/timeline, /v1/entries: the staged reads (index ->
timeline -> full entries) and the full pipeline with its explanation."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from graphmem.api import schemas as s
from graphmem.api.auth import authorize
from graphmem.api.deps import Auth, Mem, NsQuery
from graphmem.api.responses import Rendered

router = APIRouter(tags=["retrieval"])
_RESULTS = Rendered(list[s.ResultOut])
_INDEX = Rendered(list[s.IndexEntryOut])
_MEMORIES = Rendered(list[s.MemoryOut])


def _options(body: s.SearchIn) -> dict[str, Any]:
    return {"limit": body.limit, "tiers": body.tiers, "min_similarity": body.min_similarity,
            "strategy": body.strategy, "depth": body.depth,
            "filters": (body.filters.model_dump(exclude_none=True)
                        if body.filters is not None else None),
            "include_archived": body.include_archived, "as_of": body.as_of, "now": body.now}


@router.post("/v1/search", response_model=list[s.ResultOut])
def search(body: s.SearchIn, who: Auth, mem: Mem) -> Any:
    results = mem.retrieve(body.query, namespace=authorize(who, body.namespace),
                           record_access=body.record_access, **_options(body))
    out = [r.to_dict() for r in results]
    if not body.explain:
        for r in out:
            r["terms"] = r["path"] = r["reasons"] = None
    return _RESULTS(out)


@router.post("/v1/search/index", response_model=list[s.IndexEntryOut])
def search_index(body: s.SearchIn, who: Auth, mem: Mem) -> Any:
    return _INDEX([e.to_dict() for e in mem.search_index(
        body.query, namespace=authorize(who, body.namespace), **_options(body))])


@router.get("/v1/search/timeline", response_model=list[s.MemoryOut])
def timeline(anchor_id: Annotated[str, Query(pattern=s.ID_PATTERN)], namespace: NsQuery,
             who: Auth, mem: Mem, before: Annotated[int, Query(ge=0, le=100)] = 3,
             after: Annotated[int, Query(ge=0, le=100)] = 3) -> Any:
    return _MEMORIES([m.to_dict() for m in mem.timeline(
        anchor_id, namespace=authorize(who, namespace), before=before, after=after)])


@router.post("/v1/entries", response_model=list[s.MemoryOut])
def entries(body: s.EntriesIn, who: Auth, mem: Mem) -> Any:
    return _MEMORIES([m.to_dict() for m in mem.entries(
        body.ids, namespace=authorize(who, body.namespace), touch=body.record_access,
        agent=body.agent)])
