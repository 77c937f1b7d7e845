"""/v1/memories: store (one or a batch), read, change, delete, pin, restore, feedback."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from graphmem.api import schemas as s
from graphmem.api.auth import authorize
from graphmem.api.deps import Auth, Config, Mem, MemoryIdPath, NsQuery
from graphmem.api.responses import Rendered
from graphmem.errors import LimitExceededError
from graphmem.models import MemoryInput, RelationSpec
from graphmem.rules.ttl import MAX_TTL_SECONDS

router = APIRouter(prefix="/v1/memories", tags=["memories"])
_CREATED_MANY = Rendered(list[s.MemoryOut], status_code=201)
_CREATED = Rendered(s.MemoryOut, status_code=201)
_ONE = Rendered(s.MemoryOut)


def _item(x: s.MemoryItem) -> MemoryInput:
    data = x.model_dump(exclude={"relations", "namespace"})
    data["relations"] = [RelationSpec(r.type, r.target_id, r.direction, r.score)
                         for r in x.relations]
    return MemoryInput(**data)


@router.post("", status_code=201, response_model=list[s.MemoryOut] | s.MemoryOut)
def create_memories(body: s.MemoryCreate | s.BatchCreate, who: Auth, mem: Mem,
                    settings: Config) -> Any:
    ns = authorize(who, body.namespace, "writer")
    if isinstance(body, s.BatchCreate):
        if len(body.items) > settings.max_batch:
            raise LimitExceededError(f"batch of {len(body.items)}, the limit is "
                                     f"{settings.max_batch}")
        return _CREATED_MANY([m.to_dict() for m in mem.store_many(
            [_item(x) for x in body.items], namespace=ns)])
    return _CREATED(mem.store_many([_item(body)], namespace=ns)[0].to_dict())


@router.get("/{memory_id}", response_model=s.MemoryOut)
def get_memory(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth, mem: Mem) -> Any:
    return _ONE(mem.get(memory_id, namespace=authorize(who, namespace)).to_dict())


@router.patch("/{memory_id}", response_model=s.MemoryOut)
def patch_memory(memory_id: MemoryIdPath, namespace: NsQuery, body: s.MemoryPatch,
                 who: Auth, mem: Mem) -> Any:
    return mem.update(memory_id, namespace=authorize(who, namespace, "writer"),
                      **body.model_dump(exclude_none=True)).to_dict()


@router.delete("/{memory_id}", status_code=204)
def delete_memory(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth,
                  mem: Mem) -> Response:
    mem.delete(memory_id, namespace=authorize(who, namespace, "writer"))
    return Response(status_code=204)


@router.post("/{memory_id}/pin", response_model=s.MemoryOut)
def pin(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth, mem: Mem) -> Any:
    return mem.pin(memory_id, namespace=authorize(who, namespace, "writer")).to_dict()


@router.post("/{memory_id}/unpin", response_model=s.MemoryOut)
def unpin(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth, mem: Mem) -> Any:
    return mem.unpin(memory_id, namespace=authorize(who, namespace, "writer")).to_dict()


@router.post("/{memory_id}/restore", response_model=s.MemoryOut)
def restore(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth, mem: Mem,
            ttl: Annotated[float | None, Query(
                gt=0, le=MAX_TTL_SECONDS, allow_inf_nan=False,
                description="a new TTL in seconds; without it a memory whose TTL ran out "
                            "comes back without one")] = None) -> Any:
    return mem.restore(memory_id, namespace=authorize(who, namespace, "writer"),
                       ttl=ttl).to_dict()


@router.post("/{memory_id}/feedback", response_model=s.MemoryOut)
def feedback(memory_id: MemoryIdPath, namespace: NsQuery, body: s.FeedbackIn, who: Auth,
             mem: Mem) -> Any:
    return mem.feedback(memory_id, namespace=authorize(who, namespace, "writer"),
                        **body.model_dump()).to_dict()
