"""Storage: the port (``base.MemoryStore``) and its adapters, chosen by ``open_store``."""

from __future__ import annotations

import re
from pathlib import Path

from graphmem.config import GraphMemConfig
from graphmem.errors import ValidationError
from graphmem.store.base import Counts, MemoryStore, WriteBatch

NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://",
                 "bolt+ssc://")
FALKORDB_SCHEMES = ("falkordb://", "falkordb+unix://")
_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")


def make_store(target: str | Path, config: GraphMemConfig, *, create: bool = True
               ) -> MemoryStore:
    """The adapter for ``target`` (a data folder or a database URL); not opened yet.
    ``create=False``: opening a folder that holds no store raises ``MissingStoreError``
    (and creates nothing). A URL of an unknown scheme is a ``ValidationError``, never a
    folder of that name."""
    sc = config.store
    dim = config.embedding.dim
    text = str(target)
    if isinstance(target, str) and _URL_LIKE.match(text) and not text.startswith(
            NEO4J_SCHEMES + FALKORDB_SCHEMES):
        raise ValidationError(
            f"unknown store URL {text.split(':', 1)[0]!r}: a data folder, or one of "
            f"{', '.join(NEO4J_SCHEMES + FALKORDB_SCHEMES)}")
    if text.startswith(NEO4J_SCHEMES):
        from graphmem.store.graph.neo4j_conn import Neo4jConnection
        from graphmem.store.graph.store import CypherStore

        pw = sc.neo4j_password.get_secret_value() if sc.neo4j_password else None
        return CypherStore(Neo4jConnection(text, user=sc.neo4j_user, password=pw,
                                           database=sc.neo4j_database), dedupe=config.write.dedupe)
    if text.startswith(FALKORDB_SCHEMES):
        from graphmem.store.graph.falkordb_conn import FalkorDBConnection
        from graphmem.store.graph.store import CypherStore

        pw = sc.falkordb_password.get_secret_value() if sc.falkordb_password else None
        return CypherStore(FalkorDBConnection(text, graph=sc.falkordb_graph, password=pw),
                           dedupe=config.write.dedupe)
    from graphmem.store.sqlite.store import SQLiteStore

    return SQLiteStore(target, dim=dim, config=sc, tuning=config.tuning, create=create)


__all__ = ["Counts", "MemoryStore", "WriteBatch", "make_store"]
