"""The embedded store's event windows: limits counted in the database (the tool-capture cap),
so every process that opens the folder in turn counts against the same window. Statements
only; ``SQLiteStore`` holds the locks and the transaction around them."""

from __future__ import annotations

import sqlite3
from datetime import datetime

#: one statement counts and admits: a new key opens its window with this event; a window
#: that ended opens anew with it; an open window counts it while it holds fewer than the
#: limit, else the row is left as it is and nothing is returned
_ADMIT = (
    "INSERT INTO event_windows (namespace, key, started_at, n) "
    "VALUES (:namespace, :key, :now, 1) "
    "ON CONFLICT (namespace, key) DO UPDATE SET "
    "started_at = CASE WHEN event_windows.started_at <= :now - :window THEN :now "
    "ELSE event_windows.started_at END, "
    "n = CASE WHEN event_windows.started_at <= :now - :window THEN 1 "
    "ELSE event_windows.n + 1 END "
    "WHERE event_windows.started_at <= :now - :window OR event_windows.n < :limit "
    "RETURNING n"
)


def count_event(conn: sqlite3.Connection, namespace: str, key: str, limit: int,
                window_seconds: float, now: datetime) -> bool:
    """Count one event against ``key``'s window; True when it was admitted (and counted).

    Example:
        >>> from datetime import UTC, timedelta
        >>> from graphmem.store.sqlite.schema import migrate
        >>> conn = sqlite3.connect(":memory:", isolation_level=None)
        >>> _ = migrate(conn)
        >>> t = datetime(2026, 1, 1, tzinfo=UTC)
        >>> [count_event(conn, "ops", "k", 2, 60, t + timedelta(seconds=s))
        ...  for s in (0, 1, 2, 61)]
        [True, True, False, True]
    """
    rows = conn.execute(_ADMIT, {"namespace": namespace, "key": key, "limit": limit,
                                 "window": window_seconds,
                                 "now": now.timestamp()}).fetchall()  # run to its end
    return bool(rows)
