"""FalkorDB connection (native client over the redis protocol; never Bolt, see SPEC §8).

The only module that imports ``falkordb``. Each statement runs as one atomic GRAPH.QUERY;
driver errors become ``StoreError`` here.
"""

from __future__ import annotations

import logging
import numbers
import time
from typing import Any
from urllib.parse import unquote, urlparse

from graphmem.cypher import Statement, load
from graphmem.errors import DuplicateError, StoreError

log = logging.getLogger(__name__)


def literal(value: Any) -> str:
    """A parameter value as the literal FalkorDB's ``CYPHER name=value`` header carries (what
    the client's ``stringify_param_value`` writes, with a fast path for float vectors: the
    client's own per-float conversion was a large share of a batched write)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, list | tuple):
        if value and all(type(x) is float for x in value):
            return "[" + ",".join(map(repr, value)) + "]"
        return "[" + ",".join(map(literal, value)) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"`{_name(k)}`:{literal(v)}" for k, v in value.items()) + "}"
    raise StoreError(f"cannot pass a {type(value).__name__} to FalkorDB")


def _name(key: Any) -> str:
    name = str(key)
    if not name or "`" in name:
        raise StoreError(f"not a parameter or map key FalkorDB accepts: {name!r}")
    return name


def header(params: dict[str, Any]) -> str:
    """The parameters header a statement is sent with (values are literals, never spliced
    into the statement itself)."""
    return "".join(f"CYPHER {' '.join(f'`{_name(k)}`={literal(v)}' for k, v in params.items())} "
                   if params else "")


class FalkorDBConnection:
    """One FalkorDB graph over its native client (redis protocol; never Bolt): statements run
    with an inline parameter header (``header``), values escaped by ``literal``.

    Example:
        >>> conn = FalkorDBConnection("falkordb://localhost:6379", graph="graphmem")  # no I/O yet
        >>> conn.dialect, header({"ns": "ops", "k": 3})
        ('falkordb', 'CYPHER `ns`="ops" `k`=3 ')
    """

    dialect = "falkordb"

    def __init__(self, url: str, *, graph: str = "graphmem", password: str | None = None) -> None:
        """``falkordb://host:port`` or ``falkordb+unix:///path/to/redis.sock``."""
        self.url = url
        self.graph_name = graph
        self._password = password
        self._db: Any = None
        self._graph: Any = None

    def open(self) -> None:
        from falkordb import FalkorDB

        u = urlparse(self.url)
        if u.scheme not in ("falkordb+unix", "falkordb", "redis"):
            raise StoreError(f"not a FalkorDB URL: {self.url!r}")
        try:
            if u.scheme == "falkordb+unix":
                self._db = FalkorDB(unix_socket_path=unquote(u.path), password=self._password)
            else:
                self._db = FalkorDB(host=u.hostname or "localhost", port=u.port or 6379,
                                    password=self._password or u.password)
            self._graph = self._db.select_graph(self.graph_name)
            self._graph.query(load("schema/ping").body)
        except Exception as exc:
            raise StoreError(f"cannot connect to FalkorDB at {self.url}: {exc}") from exc

    def close(self) -> None:
        if self._db is not None:
            try:
                self._db.connection.close()
            except Exception:  # pragma: no cover - closing a dead connection
                log.debug("error closing FalkorDB connection", exc_info=True)
            self._db = self._graph = None

    def run(self, statement: Statement, params: dict[str, Any] | None = None, *,
            write: bool = False) -> list[dict[str, Any]]:
        if self._graph is None:
            raise StoreError("FalkorDB connection is not open")
        try:
            query = header(params or {}) + statement.body
            result = self._graph.query(query) if write else self._graph.ro_query(query)
        except Exception as exc:
            if "unique constraint violation" in str(exc):  # a create another writer won
                raise DuplicateError(f"{statement.name}: {exc}") from exc
            if statement.name == "memory/write_batch" and "by zero" in str(exc):
                raise DuplicateError("a session's chain changed meanwhile") from exc
            raise StoreError(f"{statement.name} failed: {exc}") from exc
        names = [h[1] if isinstance(h, list | tuple) else h for h in (result.header or [])]
        return [dict(zip(names, row, strict=False)) for row in result.result_set or []]

    def ensure_schema(self, statements: list[Statement]) -> None:
        """Create indexes and the unique (namespace, id) and (namespace, dedupe_key)
        constraints; existing ones are kept."""
        for st in statements:
            try:
                self._graph.query(st.body)
            except Exception as exc:
                if "already" not in str(exc).lower():
                    raise StoreError(f"{st.name} failed: {exc}") from exc
        for key in ("id", "dedupe_key"):  # the second: issue 45
            try:
                self._db.connection.execute_command(
                    "GRAPH.CONSTRAINT", "CREATE", self.graph_name, "UNIQUE", "NODE", "Memory",
                    "PROPERTIES", 2, "namespace", key)
            except Exception as exc:
                if "already" not in str(exc).lower():
                    raise StoreError(f"cannot create the (namespace, {key}) constraint: "
                                     f"{exc}") from exc
        self.wait_for_indexes()

    def wait_for_indexes(self, timeout: float = 60.0) -> None:
        """Indexes and constraints build in the background; queries against a building
        index fail, and a pending constraint does not refuse yet."""
        status = load("schema/index_status", self.dialect)
        constraints = load("schema/constraint_status", self.dialect)
        deadline = time.monotonic() + timeout
        while True:
            rows = self.run(status) + self.run(constraints)
            if all(r["status"] == "OPERATIONAL" for r in rows):
                return
            if time.monotonic() > deadline:
                raise StoreError(f"FalkorDB indexes still building after {timeout:.0f} s: "
                                 f"{[r for r in rows if r['status'] != 'OPERATIONAL']}")
            time.sleep(0.05)
