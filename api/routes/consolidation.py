"""/v1/consolidation/runs: start (dry or real), list, read a report, approve, roll back."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Response

from graphmem.api import schemas as s
from graphmem.api.auth import Principal, authorize, require_role
from graphmem.api.deps import Auth, Mem
from graphmem.errors import ForbiddenError, NotFoundError
from graphmem.memory import GraphMemory

router = APIRouter(prefix="/v1/consolidation/runs", tags=["consolidation"])


def _out(run: Any) -> dict[str, Any]:
    return {"id": run.id, "status": run.status, "report": run.report}


def _visible(mem: GraphMemory, who: Principal, run_id: str, role: str = "reader"
             ) -> dict[str, Any]:
    """A run of a namespace the key may use (another one is as missing as no run)."""
    data = mem.run(run_id)  # NotFoundError when there is none
    if not who.may_use(data.get("namespace") or "*"):
        raise NotFoundError(f"no consolidation run {run_id!r}")
    require_role(who, role)
    return data


@router.post("", status_code=201)
def start_run(body: s.RunIn, who: Auth, mem: Mem) -> dict[str, Any]:
    if body.namespace is None and "*" not in who.namespaces:
        raise ForbiddenError("a run over every namespace needs a key for *")
    # a dry run is saved and costs a whole clustering: never a reader's to start
    role = "writer" if body.dry_run else "admin"
    if body.namespace is not None:
        authorize(who, body.namespace, role)
    else:
        require_role(who, role)
    return _out(mem.consolidate(body.namespace, dry_run=body.dry_run))


@router.get("")
def list_runs(who: Auth, mem: Mem) -> list[dict[str, Any]]:
    return [r for r in mem.runs() if who.may_use(r["namespace"] or "*")]


@router.get("/{run_id}", response_model=None)
def get_run(run_id: str, who: Auth, mem: Mem,
            format: Literal["json", "md", "html"] = "json") -> Any:
    data = _visible(mem, who, run_id)
    if format == "json":
        return {"id": data["id"], "status": data["status"], "report": data["report"]}
    text = mem.report(run_id, format)
    return Response(text, media_type="text/html" if format == "html" else "text/markdown")


@router.post("/{run_id}/approve")
def approve_run(run_id: str, who: Auth, mem: Mem) -> dict[str, Any]:
    _visible(mem, who, run_id, "admin")
    return _out(mem.approve(run_id))


@router.post("/{run_id}/rollback")
def rollback_run(run_id: str, who: Auth, mem: Mem) -> dict[str, Any]:
    _visible(mem, who, run_id, "admin")
    return _out(mem.rollback(run_id))
