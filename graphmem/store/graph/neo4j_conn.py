"""Neo4j 5 connection through the official driver: managed transactions with retries on
transient errors (``execute_query``), ``neo4j://`` routing for clusters and Aura.

The only module that imports ``neo4j``; driver errors become ``StoreError`` here.
"""

from __future__ import annotations

from typing import Any

from graphmem.cypher import Statement
from graphmem.errors import DuplicateError, StoreError


class Neo4jConnection:
    """Neo4j 5 over the official driver: managed transactions with retries, routing
    (``neo4j://``) for clusters and Aura.

    Example:
        >>> conn = Neo4jConnection("neo4j://localhost:7687", password="secret")  # no I/O yet
        >>> conn.dialect
        'neo4j'
        >>> conn.open()  # doctest: +SKIP
    """

    dialect = "neo4j"

    def __init__(self, uri: str, *, user: str = "neo4j", password: str | None = None,
                 database: str | None = None) -> None:
        self.uri = uri
        self.database = database
        self._auth = (user, password or "")
        self._driver: Any = None

    def open(self) -> None:
        import neo4j

        try:
            # "unrecognized" notices (a property no node has yet, e.g. `seq` on an empty
            # database) are expected and would log a warning per statement
            self._driver = neo4j.GraphDatabase.driver(
                self.uri, auth=self._auth, notifications_disabled_classifications=[
                    neo4j.NotificationDisabledClassification.UNRECOGNIZED])
            self._driver.verify_connectivity()
        except Exception as exc:
            self._driver = None
            raise StoreError(f"cannot connect to Neo4j at {self.uri}: {exc}") from exc

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    def run(self, statement: Statement, params: dict[str, Any] | None = None, *,
            write: bool = False) -> list[dict[str, Any]]:
        import neo4j

        if self._driver is None:
            raise StoreError("Neo4j connection is not open")
        try:
            records, _, _ = self._driver.execute_query(
                statement.body, params or {}, database_=self.database,
                routing_=neo4j.RoutingControl.WRITE if write else neo4j.RoutingControl.READ)
        except neo4j.exceptions.ConstraintError as exc:  # a create another writer won
            raise DuplicateError(f"{statement.name}: {exc.message}") from exc
        except Exception as exc:
            if statement.name == "memory/write_batch" and "by zero" in str(exc):
                raise DuplicateError("a session's chain changed meanwhile") from exc
            raise StoreError(f"{statement.name} failed: {exc}") from exc
        return [dict(r) for r in records]

    def ensure_schema(self, statements: list[Statement]) -> None:
        for st in statements:
            self.run(st, write=True)
