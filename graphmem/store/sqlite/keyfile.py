"""``KeyFile``: API key records (``KeyRecords``) in a small SQLite file of their own.

The embedded default keeps its keys in ``keys.db`` beside the data (or ``GRAPHMEM_KEYS_FILE``),
so ``graphmem keys create`` may add a key while the server runs. Only hashes are stored.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from graphmem.errors import StoreError


class KeyFile:
    """``KeyRecords`` in a small SQLite file of its own (created 0600).

    Example:
        >>> import tempfile, pathlib
        >>> keys = KeyFile(pathlib.Path(tempfile.mkdtemp()) / "keys.db")
        >>> keys.save_key({"id": "k1", "hash": "ab12", "namespaces": ["ops"], "role": "reader",
        ...                "created_at": 0.0})
        >>> keys.key_by_hash("ab12")
        {'id': 'k1', 'namespaces': ['ops'], 'role': 'reader'}
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def version(self) -> tuple[int, int, int] | None:
        """What changes whenever a key is added or revoked (the file's inode, size and
        modification time; SQLite commits to the file itself in its default journal mode):
        a verdict read at one version holds while it is unchanged. None: no file yet."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        """One connection per call, committed on success and always closed."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():  # key hashes are private: created 0600
                os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            conn = sqlite3.connect(self.path, timeout=10)
            conn.execute("CREATE TABLE IF NOT EXISTS api_keys (id TEXT PRIMARY KEY, hash TEXT "
                         "UNIQUE NOT NULL, namespaces TEXT NOT NULL, role TEXT NOT NULL, "
                         "label TEXT, created_at REAL NOT NULL, revoked_at REAL)")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the key file {self.path}: {exc}") from exc
        try:
            with closing(conn), conn:
                yield conn
        except sqlite3.Error as exc:
            raise StoreError(f"the key file {self.path} failed: {exc}") from exc

    def save_key(self, record: dict[str, Any]) -> None:
        with self._conn() as conn:
            conn.execute("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, NULL)",
                         (record["id"], record["hash"], json.dumps(sorted(record["namespaces"])),
                          record["role"], record.get("label"), record["created_at"]))

    def key_by_hash(self, key_hash: str) -> dict[str, Any] | None:
        with self._conn() as conn:
            row = conn.execute("SELECT id, namespaces, role FROM api_keys WHERE hash = ? AND "
                               "revoked_at IS NULL", (key_hash,)).fetchone()
        return None if row is None else {"id": row[0], "namespaces": json.loads(row[1]),
                                         "role": row[2]}

    def list_keys(self) -> list[dict[str, Any]]:
        with self._conn() as conn:
            rows = conn.execute("SELECT id, namespaces, role, label, created_at, revoked_at "
                                "FROM api_keys ORDER BY created_at, id").fetchall()
        return [{"id": r[0], "namespaces": json.loads(r[1]), "role": r[2], "label": r[3],
                 "created_at": r[4], "revoked_at": r[5]} for r in rows]

    def revoke_key(self, key_id: str, at: float) -> bool:
        with self._conn() as conn:
            cur = conn.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND "
                               "revoked_at IS NULL", (at, key_id))
        return cur.rowcount > 0
