"""The embedded store's session context (issue 48): per-session keys and a capped list of
recent messages (tables of schema 13), each row expiring at its own time. ``SQLiteContext``
is mixed into ``SQLiteStore``, whose locks and transactions it uses."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

T = TypeVar("T")

_PUT = ("INSERT INTO session_context (namespace, session, key, value, expires_at) "
        "VALUES (:ns, :session, :key, :value, :expires_at) "
        "ON CONFLICT (namespace, session, key) DO UPDATE SET value = excluded.value, "
        "expires_at = excluded.expires_at")
_GET = ("SELECT value, expires_at FROM session_context WHERE namespace = :ns "
        "AND session = :session AND key = :key AND expires_at > :now")
_LIST = ("SELECT key, value, expires_at FROM session_context WHERE namespace = :ns "
         "AND session = :session AND expires_at > :now ORDER BY key")
_DELETE_KEY = ("DELETE FROM session_context WHERE namespace = :ns AND session = :session "
               "AND key = :key")
_DELETE_SESSION = "DELETE FROM session_context WHERE namespace = :ns AND session = :session"
_APPEND = ("INSERT INTO session_messages (namespace, session, message, added_at, expires_at) "
           "VALUES (:ns, :session, :message, :added_at, :expires_at)")
#: everything at or below the (cap + 1)th newest message goes (nothing while fewer)
_TRIM = ("DELETE FROM session_messages WHERE namespace = :ns AND session = :session "
         "AND seq <= (SELECT seq FROM session_messages WHERE namespace = :ns "
         "AND session = :session ORDER BY seq DESC LIMIT 1 OFFSET :cap)")
_MESSAGES = ("SELECT message, added_at, expires_at FROM (SELECT seq, message, added_at, "
             "expires_at FROM session_messages WHERE namespace = :ns AND session = :session "
             "AND expires_at > :now ORDER BY seq DESC LIMIT :limit) ORDER BY seq")
_CLEAR = "DELETE FROM session_messages WHERE namespace = :ns AND session = :session"
_PURGE = tuple(f"DELETE FROM {table} WHERE expires_at <= :now "
               "AND (:ns IS NULL OR namespace = :ns)"
               for table in ("session_context", "session_messages"))


def _dt(seconds: float) -> datetime:
    return datetime.fromtimestamp(float(seconds), UTC)


def append_message(conn: sqlite3.Connection, ns: str, session: str, message: str, cap: int,
                   added_at: datetime, expires_at: datetime) -> None:
    """Append and trim to the newest ``cap`` (the caller holds the transaction).

    Example:
        >>> from graphmem.store.sqlite.schema import migrate
        >>> conn = sqlite3.connect(":memory:", isolation_level=None)
        >>> _ = migrate(conn)
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> for m in ("1", "2", "3"):
        ...     append_message(conn, "ops", "s1", m, 2, t, t.replace(year=2027))
        >>> [row[0] for row in conn.execute("SELECT message FROM session_messages")]
        ['2', '3']
    """
    conn.execute(_APPEND, {"ns": ns, "session": session, "message": message,
                           "added_at": added_at.timestamp(),
                           "expires_at": expires_at.timestamp()})
    conn.execute(_TRIM, {"ns": ns, "session": session, "cap": cap})


class SQLiteContext:
    """The store port's session-context methods over ``SQLiteStore``'s connection.

    Example:
        >>> import tempfile
        >>> from graphmem.store.sqlite.store import SQLiteStore
        >>> store = SQLiteStore(tempfile.mkdtemp(), dim=2); store.open()
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> store.context_put("ops", "s1", "plan", '{"step":2}', t.replace(hour=1))
        >>> store.context_get("ops", "s1", "plan", t)[0], store.context_get("ops", "s1", "plan",
        ...                                                                  t.replace(hour=1))
        ('{"step":2}', None)
        >>> store.close()
    """

    if TYPE_CHECKING:
        @property
        def conn(self) -> sqlite3.Connection: ...

        def _guard(self, *, write: bool = False, borrow: bool = False
                   ) -> AbstractContextManager[None]: ...

        def _write(self, work: Callable[[sqlite3.Connection], T]) -> T: ...

    def context_put(self, namespace: str, session: str, key: str, value_json: str,
                    expires_at: datetime) -> None:
        self._write(lambda conn: conn.execute(_PUT, {
            "ns": namespace, "session": session, "key": key, "value": value_json,
            "expires_at": expires_at.timestamp()}))

    def context_get(self, namespace: str, session: str, key: str, now: datetime
                    ) -> tuple[str, datetime] | None:
        with self._guard(borrow=True):
            row = self.conn.execute(_GET, {"ns": namespace, "session": session, "key": key,
                                           "now": now.timestamp()}).fetchone()
        return None if row is None else (row[0], _dt(row[1]))

    def context_list(self, namespace: str, session: str, now: datetime
                     ) -> list[tuple[str, str, datetime]]:
        with self._guard(borrow=True):
            rows = self.conn.execute(_LIST, {"ns": namespace, "session": session,
                                             "now": now.timestamp()}).fetchall()
        return [(k, v, _dt(e)) for k, v, e in rows]

    def context_delete(self, namespace: str, session: str, key: str | None) -> int:
        params = {"ns": namespace, "session": session, "key": key}
        sql = _DELETE_SESSION if key is None else _DELETE_KEY
        return self._write(lambda conn: conn.execute(sql, params).rowcount)

    def message_append(self, namespace: str, session: str, message_json: str, cap: int,
                       added_at: datetime, expires_at: datetime) -> None:
        self._write(lambda conn: append_message(conn, namespace, session, message_json, cap,
                                                added_at, expires_at))

    def messages(self, namespace: str, session: str, now: datetime, limit: int
                 ) -> list[tuple[str, datetime, datetime]]:
        with self._guard(borrow=True):
            rows = self.conn.execute(_MESSAGES, {"ns": namespace, "session": session,
                                                 "now": now.timestamp(),
                                                 "limit": limit}).fetchall()
        return [(m, _dt(a), _dt(e)) for m, a, e in rows]

    def messages_clear(self, namespace: str, session: str) -> int:
        return self._write(lambda conn: conn.execute(
            _CLEAR, {"ns": namespace, "session": session}).rowcount)

    def context_purge(self, namespace: str | None, now: datetime) -> int:
        params = {"ns": namespace, "now": now.timestamp()}
        return self._write(lambda conn: sum(conn.execute(sql, params).rowcount
                                            for sql in _PURGE))
