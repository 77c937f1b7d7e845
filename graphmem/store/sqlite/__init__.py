"""The embedded adapter: one SQLite file per data folder, one writer, many readers (ADR 0001)."""

from graphmem.store.sqlite.store import DB_FILE, SQLiteStore

__all__ = ["DB_FILE", "SQLiteStore"]
