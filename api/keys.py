"""API keys: random, shown once, stored as SHA-256 hashes with their namespaces and role."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sqlite3
import time
from pathlib import Path

from graphmem.api.auth import ROLES, Principal
from graphmem.errors import NotFoundError, ValidationError


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class KeyStore:
    """A small SQLite file of hashed keys; readable while the server runs."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _conn(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():  # key hashes are private: created 0600
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        conn = sqlite3.connect(self.path, timeout=10)
        conn.execute("CREATE TABLE IF NOT EXISTS api_keys (id TEXT PRIMARY KEY, hash TEXT "
                     "UNIQUE NOT NULL, namespaces TEXT NOT NULL, role TEXT NOT NULL, "
                     "label TEXT, created_at REAL NOT NULL, revoked_at REAL)")
        return conn

    def create(self, namespaces: list[str], role: str, label: str | None = None
               ) -> tuple[str, str]:
        """Returns (key id, the key itself - shown once, never stored)."""
        if role not in ROLES:
            raise ValidationError(f"role must be one of {', '.join(ROLES)}")
        if not namespaces:
            raise ValidationError("a key needs at least one namespace")
        key_id = secrets.token_hex(4)
        key = f"gm_{key_id}_{secrets.token_urlsafe(24)}"
        with self._conn() as conn:
            conn.execute("INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, NULL)",
                         (key_id, _hash(key), json.dumps(sorted(set(namespaces))), role, label,
                          time.time()))
        return key_id, key

    def verify(self, key: str) -> Principal | None:
        with self._conn() as conn:
            row = conn.execute("SELECT id, namespaces, role FROM api_keys WHERE hash = ? AND "
                               "revoked_at IS NULL", (_hash(key),)).fetchone()
        if row is None:
            return None
        return Principal(row[0], frozenset(json.loads(row[1])), row[2])

    def list(self) -> list[dict[str, object]]:
        with self._conn() as conn:
            rows = conn.execute("SELECT id, namespaces, role, label, created_at, revoked_at "
                                "FROM api_keys ORDER BY created_at").fetchall()
        return [{"id": r[0], "namespaces": json.loads(r[1]), "role": r[2], "label": r[3],
                 "created_at": r[4], "revoked": r[5] is not None} for r in rows]

    def revoke(self, key_id: str) -> None:
        with self._conn() as conn:
            cur = conn.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND "
                               "revoked_at IS NULL", (time.time(), key_id))
            if cur.rowcount == 0:
                raise NotFoundError(f"no active key {key_id!r}")
