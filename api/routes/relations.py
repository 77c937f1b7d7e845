"""/v1/relations and a memory's relations: typed edges, created and removed explicitly."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from graphmem.api import schemas as s
from graphmem.api.auth import authorize
from graphmem.api.deps import Auth, Mem, MemoryIdPath, NsQuery

router = APIRouter(tags=["relations"])


@router.post("/v1/relations", status_code=201, response_model=s.RelationOut)
def create_relation(body: s.RelationCreate, who: Auth, mem: Mem) -> Any:
    return mem.relate(body.source_id, body.target_id, body.type,
                      namespace=authorize(who, body.namespace, "writer"),
                      score=body.score).to_dict()


@router.get("/v1/memories/{memory_id}/relations", response_model=list[s.RelationOut])
def list_relations(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth, mem: Mem,
                   depth: Annotated[int, Query(ge=1, le=2, description=(
                       "1: the memory's own edges; 2: every edge within two hops"))] = 1,
                   max_nodes: Annotated[int, Query(ge=2, le=100)] = 100) -> Any:
    return [r.to_dict() for r in mem.relations(memory_id, namespace=authorize(who, namespace),
                                               depth=depth, max_nodes=max_nodes)]


@router.delete("/v1/relations", status_code=204)
def delete_relation(body: s.RelationDelete, who: Auth, mem: Mem) -> Response:
    mem.unrelate(body.source_id, body.target_id, body.type,
                 namespace=authorize(who, body.namespace, "writer"))
    return Response(status_code=204)
