"""Typed dependencies every router takes: the memory (opened in the app's lifespan), the
caller (an API key's grant) and the request parameters shared by several routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Path, Query, Request

from graphmem.api import schemas as s
from graphmem.api.auth import DEV, VERIFIED, Principal, bad_key, bearer, no_key
from graphmem.api.settings import Settings
from graphmem.memory import GraphMemory


# The dependencies are coroutines: FastAPI runs a plain function's dependency in its thread
# pool, a hand-off per dependency per request on the event loop (ADR 0047). None of them
# waits on anything: under /v1 and /mcp the key's verdict is the one ``Guard`` reached for
# this very request.
async def memory(request: Request) -> GraphMemory:
    mem: GraphMemory = request.app.state.mem
    return mem


async def settings(request: Request) -> Settings:
    value: Settings = request.app.state.settings
    return value


def caller(request: Request, authorization: str | None) -> Principal:
    """Who is calling: the API key's namespaces and role (``AuthError``, 401, without a
    valid key)."""
    if request.app.state.settings.dev_no_auth:
        return DEV
    checked: Principal | None = request.scope.get("state", {}).get(VERIFIED)
    if checked is not None:  # Guard verified this request's key a moment ago
        return checked
    key = bearer(authorization)
    if not key:
        raise no_key()
    found: Principal | None = request.app.state.keys.verify(key)
    if found is None:
        raise bad_key()
    return found


async def principal(request: Request,
                    authorization: Annotated[str | None, Header()] = None) -> Principal:
    """``caller`` as a dependency."""
    return caller(request, authorization)


Mem = Annotated[GraphMemory, Depends(memory)]
Auth = Annotated[Principal, Depends(principal)]
Config = Annotated[Settings, Depends(settings)]
NsQuery = Annotated[str, Query(description="the namespace", examples=["agent-42"],
                               pattern=s.NS_PATTERN)]
MemoryIdPath = Annotated[str, Path(description="a memory id", pattern=s.ID_PATTERN)]
