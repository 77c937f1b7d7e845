"""Typed dependencies every router takes: the memory (opened in the app's lifespan), the
caller (an API key's grant) and the request parameters shared by several routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Path, Query, Request

from graphmem.api import schemas as s
from graphmem.api.auth import Principal, identify
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


def caller(request: Request) -> Principal:
    """Who is calling (``identify``): the API key's namespaces and role (``AuthError``, 401,
    without a valid key)."""
    state = request.app.state
    return identify(request.scope, state.keys, open=state.settings.dev_no_auth)


async def principal(request: Request,
                    authorization: Annotated[str | None, Header()] = None) -> Principal:
    """``caller`` as a dependency (``authorization`` is declared for the OpenAPI document;
    ``identify`` reads it from the request)."""
    return caller(request)


Mem = Annotated[GraphMemory, Depends(memory)]
Auth = Annotated[Principal, Depends(principal)]
Config = Annotated[Settings, Depends(settings)]
NsQuery = Annotated[str, Query(description="the namespace", examples=["agent-42"],
                               pattern=s.NS_PATTERN)]
MemoryIdPath = Annotated[str, Path(description="a memory id", pattern=s.ID_PATTERN)]
