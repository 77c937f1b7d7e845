"""The embedded adapter: one SQLite file per data folder, one writer, many readers (ADR 0001).

``store.SQLiteStore`` is the adapter; the modules beside it hold its SQL.
"""
