"""API keys: random, shown once, stored as SHA-256 hashes with their namespaces and role.

``KeyStore`` is the service (create, verify, list, revoke) over a ``KeyRecords`` backend: the
graph database itself when the data lives in Neo4j / FalkorDB (every API replica shares the
keys), or a small SQLite file (``keys.db`` in the embedded default's folder, or
``GRAPHMEM_KEYS_FILE``), which ``graphmem keys create`` may write while the server runs.
A verified key is remembered for ``ttl`` seconds, so a request does not cost a database
round trip; a revocation reaches every replica within that time.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from pathlib import Path

from graphmem.api.auth import ROLES, Principal
from graphmem.errors import NotFoundError, ValidationError
from graphmem.store.base import KeyRecords
from graphmem.store.sqlite.keyfile import KeyFile


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class KeyStore:
    """Create, verify, list and revoke keys over ``records`` (a ``KeyRecords``, or the path
    of a key file).

    Example:
        >>> import tempfile, pathlib
        >>> keys = KeyStore(pathlib.Path(tempfile.mkdtemp()) / "keys.db")
        >>> key_id, key = keys.create(["ops"], "reader")
        >>> keys.verify(key).role, keys.verify("gm_wrong") is None
        ('reader', True)
    """

    def __init__(self, records: KeyRecords | Path | str, *, ttl: float = 5.0) -> None:
        self.records: KeyRecords = (KeyFile(Path(records)) if isinstance(records, Path | str)
                                    else records)
        self.ttl = ttl
        #: digest -> (when verified, who, the records' version then, if they have one)
        self._seen: dict[str, tuple[float, Principal, object]] = {}
        self._lock = threading.Lock()

    def create(self, namespaces: list[str], role: str, label: str | None = None
               ) -> tuple[str, str]:
        """Returns (key id, the key itself - shown once, never stored)."""
        if role not in ROLES:
            raise ValidationError(f"role must be one of {', '.join(ROLES)}")
        if not namespaces:
            raise ValidationError("a key needs at least one namespace")
        key_id = secrets.token_hex(4)
        key = f"gm_{key_id}_{secrets.token_urlsafe(24)}"
        self.records.save_key({"id": key_id, "hash": _hash(key),
                               "namespaces": sorted(set(namespaces)), "role": role,
                               "label": label, "created_at": time.time()})
        return key_id, key

    def verify(self, key: str) -> Principal | None:
        """The key's principal, or None. A verdict is reused for ``ttl`` seconds, and for as
        long as records that can tell (the key file) have not changed since: a revocation
        counts from the next request, without a database read per request."""
        digest = _hash(key)
        now = time.monotonic()
        changes = getattr(self.records, "version", None)  # the key file's (``KeyFile.version``)
        version: object = None if changes is None else changes()
        with self._lock:
            seen = self._seen.get(digest)
        if seen is not None and (now - seen[0] < self.ttl
                                 or (version is not None and seen[2] == version)):
            return seen[1]
        row = self.records.key_by_hash(digest)
        if row is None:
            with self._lock:
                self._seen.pop(digest, None)
            return None
        who = Principal(row["id"], frozenset(row["namespaces"]), row["role"])
        with self._lock:
            self._seen[digest] = (now, who, version)
        return who

    def list(self) -> list[dict[str, object]]:
        return [{"id": r["id"], "namespaces": list(r["namespaces"]), "role": r["role"],
                 "label": r.get("label"), "created_at": r["created_at"],
                 "revoked": r.get("revoked_at") is not None}
                for r in self.records.list_keys()]

    def revoke(self, key_id: str) -> None:
        if not self.records.revoke_key(key_id, time.time()):
            raise NotFoundError(f"no active key {key_id!r}")
        with self._lock:  # this process forgets it at once; other replicas within ttl
            self._seen = {h: v for h, v in self._seen.items() if v[1].key_id != key_id}
