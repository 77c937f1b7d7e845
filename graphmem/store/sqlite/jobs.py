"""The embedded store's job records: consolidation runs and the leases that let one process
at a time run a scheduled job. Statements only; ``SQLiteStore`` holds the locks and the
transaction around them."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any


def save_run(conn: sqlite3.Connection, run: dict[str, Any]) -> None:
    """Insert ``run`` or replace its status and data (its id and creation time stay)."""
    conn.execute(
        "INSERT INTO consolidation_runs (id, namespace, status, created_at, data) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, "
        "data = excluded.data",
        (run["id"], run.get("namespace"), run["status"], run["created_at"], json.dumps(run)))


def get_run(conn: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    row = conn.execute("SELECT data FROM consolidation_runs WHERE id = ?",
                       (run_id,)).fetchone()
    return None if row is None else dict(json.loads(row[0]))


def list_runs(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every run, the newest first."""
    rows = conn.execute("SELECT data FROM consolidation_runs ORDER BY created_at DESC, id"
                        ).fetchall()
    return [json.loads(r[0]) for r in rows]


def run_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Runs per status."""
    return dict(conn.execute(
        "SELECT status, count(*) FROM consolidation_runs GROUP BY status").fetchall())


def take_lease(conn: sqlite3.Connection, name: str, owner: str, until: datetime,
               now: datetime) -> bool:
    """Give ``name`` to ``owner`` until ``until`` if it is free, expired or already theirs;
    whether ``owner`` holds it now."""
    conn.execute(
        "INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, "
        "expires_at = excluded.expires_at "
        "WHERE leases.owner = excluded.owner OR leases.expires_at <= ?",
        (name, owner, until.timestamp(), now.timestamp()))
    held = lease_holder(conn, name)
    return held is not None and held[0] == owner


def lease_holder(conn: sqlite3.Connection, name: str) -> tuple[str, datetime] | None:
    row = conn.execute("SELECT owner, expires_at FROM leases WHERE name = ?",
                       (name,)).fetchone()
    return None if row is None else (str(row[0]), datetime.fromtimestamp(row[1], UTC))


def release_lease(conn: sqlite3.Connection, name: str, owner: str) -> None:
    conn.execute("DELETE FROM leases WHERE name = ? AND owner = ?", (name, owner))
