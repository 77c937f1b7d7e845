"""SQLite schema of the embedded store, versioned, with a migration hook.

``MIGRATIONS[n]`` takes a database at version ``n`` to ``n + 1``; ``migrate`` runs the missing
steps in one transaction. Data written by a newer graphmem is refused, never rewritten.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from graphmem.errors import SchemaVersionError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 13

_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memories (
    pk INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    content TEXT NOT NULL,
    kind TEXT NOT NULL,
    tier TEXT NOT NULL,
    base_importance REAL NOT NULL,
    importance REAL NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_accessed_at REAL NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    surprise_score REAL NOT NULL DEFAULT 0,
    success_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    last_promoted_at REAL,
    source TEXT,
    topic TEXT,
    session_id TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    embedding BLOB,
    context_embedding BLOB,
    keywords TEXT NOT NULL DEFAULT '',
    context_keywords TEXT NOT NULL DEFAULT '',
    UNIQUE (namespace, id)
);
CREATE INDEX IF NOT EXISTS ix_memories_hash ON memories (namespace, content_hash);
CREATE INDEX IF NOT EXISTS ix_memories_session ON memories (namespace, session_id, created_at);
CREATE INDEX IF NOT EXISTS ix_memories_tier ON memories (namespace, tier, status);
CREATE INDEX IF NOT EXISTS ix_memories_created ON memories (namespace, created_at);
CREATE TABLE IF NOT EXISTS edges (
    namespace TEXT NOT NULL,
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    type TEXT NOT NULL,
    score REAL,
    created_at REAL NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (namespace, source_id, target_id, type)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ix_edges_target ON edges (namespace, target_id);
-- tags: namespace / status / tier tokens, so one MATCH narrows to a namespace's active rows
CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5 (
    keywords, context_keywords, tags, tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS leases (
    name TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL
);
"""


def _run(conn: sqlite3.Connection, script: str) -> None:
    # statement by statement: executescript() would COMMIT the surrounding transaction
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _script(script: str) -> Callable[[sqlite3.Connection], None]:
    """A migration step that runs ``script``."""
    return lambda conn: _run(conn, script)


def _column(name: str, script: str) -> Callable[[sqlite3.Connection], None]:
    """A migration step that adds the memories column ``name`` with ``script`` unless it is
    there already (a store marked older than it is re-runs its steps: tests of migrations)."""

    def step(conn: sqlite3.Connection) -> None:
        if name not in {row[1] for row in conn.execute("PRAGMA table_info(memories)")}:
            _run(conn, script)

    return step


# v2: tier dynamics - access windows, the predicted relevance, the transitions log
_V2 = """
ALTER TABLE memories ADD COLUMN window_start REAL;
ALTER TABLE memories ADD COLUMN window_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN last_predicted REAL;
CREATE TABLE IF NOT EXISTS transitions (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    from_tier TEXT NOT NULL,
    to_tier TEXT NOT NULL,
    from_status TEXT NOT NULL,
    to_status TEXT NOT NULL,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_transitions_ns_at ON transitions (namespace, at);
CREATE INDEX IF NOT EXISTS ix_transitions_memory ON transitions (namespace, memory_id)
"""


# v3: consolidation runs (their plan, progress and report as JSON)
_V3 = """
CREATE TABLE IF NOT EXISTS consolidation_runs (
    id TEXT PRIMARY KEY,
    namespace TEXT,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    data TEXT NOT NULL
)
"""


# v4: lifecycle clocks (ADR 0006): when a memory was stored and last reinforced. Rows written
# before kept their clocks at the last access, so both start from it.
_V4 = """
ALTER TABLE memories ADD COLUMN stored_at REAL;
ALTER TABLE memories ADD COLUMN reinforced_at REAL;
UPDATE memories SET stored_at = last_accessed_at, reinforced_at = last_accessed_at
"""


# v5: what agents remember (ADR 0013): memory types, validity in time, what superseded a
# memory; the agents that used it (shared namespaces); the prior content an update replaced,
# kept in its transition
_V5 = """
ALTER TABLE memories ADD COLUMN type TEXT NOT NULL DEFAULT 'observation';
ALTER TABLE memories ADD COLUMN valid_from REAL;
ALTER TABLE memories ADD COLUMN valid_until REAL;
ALTER TABLE memories ADD COLUMN superseded_by TEXT;
ALTER TABLE memories ADD COLUMN used_by TEXT NOT NULL DEFAULT '{}';
UPDATE memories SET type = 'summary' WHERE kind = 'summary';
ALTER TABLE transitions ADD COLUMN detail TEXT;
CREATE INDEX IF NOT EXISTS ix_memories_stored ON memories (namespace, stored_at)
"""


# v6: BM25 statistics kept at write time (ADR 0018): opening a store no longer counts every
# memory's terms; a store written before is counted once, here
_V6 = """
CREATE TABLE IF NOT EXISTS keyword_docs (
    namespace TEXT NOT NULL,
    field INTEGER NOT NULL,
    docs INTEGER NOT NULL,
    total INTEGER NOT NULL,
    PRIMARY KEY (namespace, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keyword_terms (
    namespace TEXT NOT NULL,
    field INTEGER NOT NULL,
    term TEXT NOT NULL,
    df INTEGER NOT NULL,
    PRIMARY KEY (namespace, term, field)
) WITHOUT ROWID
"""


def _to_v6(conn: sqlite3.Connection) -> None:
    from graphmem.store.sqlite import keywords as sqlite_keywords

    _run(conn, _V6)
    sqlite_keywords.rebuild(conn, conn.execute(
        "SELECT namespace, keywords, context_keywords FROM memories"))


# v7: the vectors in a table of their own, keyed by the memory's pk (ADR 0029). Each row had
# held two float32 blobs: about a page per memory, which a retrieval's candidate rows read
# from a cold cache; without them many rows share a page. The
# table is rebuilt (SQLite's DROP COLUMN rewrites rows in place, leaving pages a third full),
# pks kept: the full-text rowids, the mapped rows and the saved indexes stay valid
def _to_v7(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS vectors (pk INTEGER PRIMARY KEY, "
                 "embedding BLOB NOT NULL, context_embedding BLOB)")
    info = conn.execute("PRAGMA table_info(memories)").fetchall()
    if "embedding" not in {r[1] for r in info}:
        return  # already apart (a version number set back by hand)
    rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    if rows:
        log.warning("schema 7: moving the vectors of %d memories into their own table "
                    "(once; about a minute per 100k memories on a slow disk)", rows)
    conn.execute("INSERT INTO vectors (pk, embedding, context_embedding) SELECT pk, "
                 "embedding, context_embedding FROM memories WHERE embedding IS NOT NULL "
                 "ORDER BY pk")
    indexes = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' "
                                          "AND tbl_name = 'memories' AND sql IS NOT NULL")]
    conn.execute(_without_vectors(info))
    names = ", ".join(r[1] for r in info if r[1] not in _VECTOR_COLUMNS)  # the table's own
    conn.execute(f"INSERT INTO memories_v7 ({names}) SELECT {names} FROM memories ORDER BY pk")
    # the old table's pages hold only what was just copied
    with _no_secure_delete(conn):
        conn.execute("DROP TABLE memories")
    conn.execute("ALTER TABLE memories_v7 RENAME TO memories")
    for index in indexes:  # the old table's, dropped with it
        conn.execute(index)


_VECTOR_COLUMNS = ("embedding", "context_embedding")


# v8: a namespace's rows in pk order (the index's entries end with the pk), for the reads that
# page through a namespace (export, maintenance, the model check's sample). Without it the
# planner took another (namespace, ...) index and sorted all of the namespace's entries for
# every page, and the first retrieval after open waited on it (ADR 0033)
def _to_v8(conn: sqlite3.Connection) -> None:
    rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    if rows >= 100_000:
        log.warning("schema 8: indexing %d memories by namespace and pk (once)", rows)
    conn.execute("CREATE INDEX IF NOT EXISTS ix_memories_ns_pk ON memories (namespace)")


# v9: counts kept by triggers in the write's own transaction (ADR 0034): ``counts`` grouped
# every row of the namespace (seconds at 1M), and the
# operators' stats asked it on every call. A row whose count fell to 0 stays (read: n > 0)
_COUNTS_V9 = """
CREATE TABLE IF NOT EXISTS memory_counts (
    namespace TEXT NOT NULL, tier TEXT NOT NULL, status TEXT NOT NULL, kind TEXT NOT NULL,
    n INTEGER NOT NULL, PRIMARY KEY (namespace, tier, status, kind)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS edge_counts (
    namespace TEXT NOT NULL, type TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (namespace, type)
) WITHOUT ROWID;
DELETE FROM memory_counts;
DELETE FROM edge_counts;
INSERT INTO memory_counts (namespace, tier, status, kind, n)
    SELECT namespace, tier, status, kind, count(*) FROM memories
    GROUP BY namespace, tier, status, kind;
INSERT INTO edge_counts (namespace, type, n)
    SELECT namespace, type, count(*) FROM edges GROUP BY namespace, type
"""
_TRIGGERS_V9 = (
    """CREATE TRIGGER IF NOT EXISTS tr_memories_counted AFTER INSERT ON memories BEGIN
    INSERT INTO memory_counts (namespace, tier, status, kind, n)
        VALUES (new.namespace, new.tier, new.status, new.kind, 1)
        ON CONFLICT (namespace, tier, status, kind) DO UPDATE SET n = n + 1;
END""",
    """CREATE TRIGGER IF NOT EXISTS tr_memories_uncounted AFTER DELETE ON memories BEGIN
    UPDATE memory_counts SET n = n - 1 WHERE namespace = old.namespace AND tier = old.tier
        AND status = old.status AND kind = old.kind;
END""",
    """CREATE TRIGGER IF NOT EXISTS tr_memories_recounted
    AFTER UPDATE OF namespace, tier, status, kind ON memories
    WHEN old.namespace IS NOT new.namespace OR old.tier IS NOT new.tier
        OR old.status IS NOT new.status OR old.kind IS NOT new.kind BEGIN
    UPDATE memory_counts SET n = n - 1 WHERE namespace = old.namespace AND tier = old.tier
        AND status = old.status AND kind = old.kind;
    INSERT INTO memory_counts (namespace, tier, status, kind, n)
        VALUES (new.namespace, new.tier, new.status, new.kind, 1)
        ON CONFLICT (namespace, tier, status, kind) DO UPDATE SET n = n + 1;
END""",
    """CREATE TRIGGER IF NOT EXISTS tr_edges_counted AFTER INSERT ON edges BEGIN
    INSERT INTO edge_counts (namespace, type, n) VALUES (new.namespace, new.type, 1)
        ON CONFLICT (namespace, type) DO UPDATE SET n = n + 1;
END""",
    """CREATE TRIGGER IF NOT EXISTS tr_edges_uncounted AFTER DELETE ON edges BEGIN
    UPDATE edge_counts SET n = n - 1 WHERE namespace = old.namespace AND type = old.type;
END""",
)


def _to_v9(conn: sqlite3.Connection) -> None:
    _run(conn, _COUNTS_V9)
    for trigger in _TRIGGERS_V9:  # bodies hold ";": one statement each
        conn.execute(trigger)


def _without_vectors(info: list[tuple[int, str, str, int, str | None, int]]) -> str:
    """``memories_v7``: the memories table's columns (``PRAGMA table_info`` rows), types,
    NOT NULLs and defaults kept, without the two vector columns."""
    columns = [f"{name} INTEGER PRIMARY KEY" if pk
               else f"{name} {type_}" + (" NOT NULL" if notnull else "")
               + ("" if default is None else f" DEFAULT {default}")
               for _, name, type_, notnull, default, pk in info if name not in _VECTOR_COLUMNS]
    return ("CREATE TABLE memories_v7 (\n    " + ",\n    ".join(columns)
            + ",\n    UNIQUE (namespace, id)\n)")


def current_version(conn: sqlite3.Connection) -> int:
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Bring the schema to ``target``; return the version found before."""
    found = current_version(conn)
    if found > target:
        raise SchemaVersionError(
            f"data has schema version {found}, this graphmem knows up to {target}: upgrade it"
        )
    if found == target:
        return found
    conn.execute("BEGIN IMMEDIATE")
    try:
        for version in range(found, target):
            MIGRATIONS[version](conn)
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(target),),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if found < 7 <= target:
        _give_back_pages(conn)
    return found


def _give_back_pages(conn: sqlite3.Connection) -> None:
    """After the move of schema 7, the old memories table's pages are free (at 1M: 4.2 of
    10.6 GB); VACUUM returns them to the disk (82 s at 1M). Every table that anything refers
    to by rowid has an INTEGER PRIMARY KEY, which VACUUM keeps."""
    free, total = (conn.execute(f"PRAGMA {p}").fetchone()[0]
                   for p in ("freelist_count", "page_count"))
    if free * 4 < total:
        return
    log.warning("schema 7: returning %d free pages of %d to the disk (VACUUM)", free, total)
    with _no_secure_delete(conn):
        conn.execute("VACUUM")


@contextmanager
def _no_secure_delete(conn: sqlite3.Connection) -> Iterator[None]:
    """Freed pages left as they are for the block (Debian builds SQLite with SECURE_DELETE
    on: zeroing a 4 GB table's pages that hold only copied data wrote it all once more)."""
    secure = conn.execute("PRAGMA secure_delete").fetchone()[0]
    conn.execute("PRAGMA secure_delete = 0")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA secure_delete = {int(secure)}")


# v10: event windows - limits counted in the database (the tool-capture cap, issue 45), so
# every process that opens the folder counts against the same window
_V10 = """
CREATE TABLE IF NOT EXISTS event_windows (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    started_at REAL NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID
"""


# v11: the times a memory's content mentions (issue 49), as JSON [[start, end], ...] in
# POSIX seconds; older memories mention none until they are written again
_V11 = "ALTER TABLE memories ADD COLUMN mentioned TEXT NOT NULL DEFAULT '[]'"


# v12: a memory's own TTL (issue 48): when it expires, POSIX seconds; NULL never
_V12 = "ALTER TABLE memories ADD COLUMN expires_at REAL"


# v13: the short-term session context (issue 48): per-session keys and a capped list of
# recent messages, each row expiring at its own time (POSIX seconds)
_V13 = """
CREATE TABLE IF NOT EXISTS session_context (
    namespace TEXT NOT NULL,
    session TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (namespace, session, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ix_session_context_expiry ON session_context (expires_at);
CREATE TABLE IF NOT EXISTS session_messages (
    seq INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    session TEXT NOT NULL,
    message TEXT NOT NULL,
    added_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_session_messages ON session_messages (namespace, session, seq);
CREATE INDEX IF NOT EXISTS ix_session_messages_expiry ON session_messages (expires_at)
"""


#: version n -> the step that takes the database to n + 1
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    0: _script(_V1), 1: _script(_V2), 2: _script(_V3), 3: _script(_V4), 4: _script(_V5),
    5: _to_v6, 6: _to_v7, 7: _to_v8, 8: _to_v9, 9: _script(_V10),
    10: _column("mentioned", _V11), 11: _column("expires_at", _V12), 12: _script(_V13)}
