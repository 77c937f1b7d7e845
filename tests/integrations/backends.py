"""The three stores an adapter runs on, for the adapters' tests: the embedded SQLite store
(``GraphMemory``), and a real server on loopback (uvicorn in a thread, the REST app over the
embedded store) through ``GraphMemClient`` and ``AsyncGraphMemClient``. The server's keys
may write ``agents`` and ``agents-b``, never ``outside``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.client import AsyncGraphMemClient, GraphMemClient
from tests.api.test_rest import Server
from tests.conftest import Clock, FakeEmbedder

NAMESPACES = ["agents", "agents-b"]
KINDS = ["embedded", "client", "async_client"]


class Backends:
    """Makes the store of a kind; ``direct`` is a facade on the same data, to look behind
    an adapter's back (the server's own ``GraphMemory`` for the clients)."""

    def __init__(self, tmp: Path, server: Server | None) -> None:
        self.tmp, self.server = tmp, server
        self.clock = server.clock if server else Clock()
        self.direct: GraphMemory | None = None
        self._open: list[Any] = []

    def make(self, kind: str) -> Any:
        if kind == "embedded":
            self.direct = GraphMemory.open(self.tmp / "data", clock=self.clock,
                                           embedder=FakeEmbedder())
            self._open.append(self.direct)
            return self.direct
        assert self.server is not None
        self.direct = self.server.mem
        key = self.server.keys.create(NAMESPACES, "writer")[1]
        cls = GraphMemClient if kind == "client" else AsyncGraphMemClient
        client = cls(self.server.url, key)
        self._open.append(client)
        return client

    async def aclose(self) -> None:
        for thing in self._open:
            if isinstance(thing, AsyncGraphMemClient):
                await thing.aclose()
            else:
                thing.close()


def server_fixture() -> Any:
    """A module's server fixture (one uvicorn per test module)."""

    @pytest.fixture(scope="module")
    def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
        with Server(tmp_path_factory.mktemp("adapters")) as srv:
            yield srv

    return server


def wipe(mem: GraphMemory) -> None:
    """Empty the server's namespaces between tests (they share one server)."""
    for ns in [*NAMESPACES, "outside"]:
        mem.delete_all(namespace=ns, confirm=ns)


Scenario = Callable[[Any, Backends], Awaitable[None]]


def play(kind: str, tmp_path: Path, request: pytest.FixtureRequest, scenario: Scenario) -> None:
    """Run ``scenario(store, backends)`` in one event loop on a fresh store of ``kind``."""
    srv: Server | None = None
    if kind != "embedded":
        srv = request.getfixturevalue("server")
        wipe(srv.mem)
    backends = Backends(tmp_path, srv)

    async def main() -> None:
        try:
            await scenario(backends.make(kind), backends)
        finally:
            await backends.aclose()

    asyncio.run(main())
