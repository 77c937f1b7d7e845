"""The session context on Neo4j and FalkorDB (issue 48): ``(:GraphmemContext)`` entries,
``(:GraphmemMessage)`` nodes numbered by their session's ``(:GraphmemMessageLog)``, every
statement from ``cypher/context/``. ``CypherContext`` is mixed into ``CypherStore``; each
method is one statement, so each write is atomic on both engines."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

#: the schema statements of the session context, by dialect (``CypherStore.open``)
SCHEMA = ["schema/context_key", "schema/message_key", "schema/message_log_key",
          "schema/context_expiry", "schema/message_expiry", "schema/message_log_expiry"]


def _dt(seconds: Any) -> datetime:
    return datetime.fromtimestamp(float(seconds), UTC)


class CypherContext:
    """The store port's session-context methods over ``CypherStore``'s statements.

    Example:
        >>> import tempfile
        >>> from graphmem.store.graph.falkordb_server import FalkorDBServer
        >>> from graphmem.store.graph.falkordb_conn import FalkorDBConnection
        >>> from graphmem.store.graph.store import CypherStore
        >>> server = FalkorDBServer(tempfile.mkdtemp()); server.start()  # doctest: +SKIP
        >>> store = CypherStore(FalkorDBConnection(server.url)); store.open()  # doctest: +SKIP
        >>> store.context_list("ops", "s1", datetime.now(UTC))  # doctest: +SKIP
        []
    """

    if TYPE_CHECKING:
        def _run(self, statement: str, write: bool = False, **params: Any
                 ) -> list[dict[str, Any]]: ...

    def context_put(self, namespace: str, session: str, key: str, value_json: str,
                    expires_at: datetime) -> None:
        self._run("context/put", True, namespace=namespace, session=session, key=key,
                  value=value_json, expires_at=expires_at.timestamp())

    def context_get(self, namespace: str, session: str, key: str, now: datetime
                    ) -> tuple[str, datetime] | None:
        rows = self._run("context/get", namespace=namespace, session=session, key=key,
                         now=now.timestamp())
        return (str(rows[0]["value"]), _dt(rows[0]["expires_at"])) if rows else None

    def context_list(self, namespace: str, session: str, now: datetime
                     ) -> list[tuple[str, str, datetime]]:
        rows = self._run("context/list", namespace=namespace, session=session,
                         now=now.timestamp())
        return [(str(r["key"]), str(r["value"]), _dt(r["expires_at"])) for r in rows]

    def context_delete(self, namespace: str, session: str, key: str | None) -> int:
        if key is None:
            rows = self._run("context/delete_session", True, namespace=namespace,
                             session=session)
        else:
            rows = self._run("context/delete_key", True, namespace=namespace,
                             session=session, key=key)
        return int(rows[0]["deleted"]) if rows else 0

    def message_append(self, namespace: str, session: str, message_json: str, cap: int,
                       added_at: datetime, expires_at: datetime) -> None:
        self._run("context/message_append", True, namespace=namespace, session=session,
                  message=message_json, cap=cap, added_at=added_at.timestamp(),
                  expires_at=expires_at.timestamp())

    def messages(self, namespace: str, session: str, now: datetime, limit: int
                 ) -> list[tuple[str, datetime, datetime]]:
        rows = self._run("context/messages", namespace=namespace, session=session,
                         now=now.timestamp(), limit=limit)
        return [(str(r["message"]), _dt(r["added_at"]), _dt(r["expires_at"])) for r in rows]

    def messages_clear(self, namespace: str, session: str) -> int:
        rows = self._run("context/messages_clear", True, namespace=namespace,
                         session=session)
        return int(rows[0]["deleted"]) if rows else 0

    def context_purge(self, namespace: str | None, now: datetime) -> int:
        rows = self._run("context/purge", True, namespace=namespace, now=now.timestamp())
        return int(rows[0]["entries"]) + int(rows[0]["messages"]) if rows else 0
