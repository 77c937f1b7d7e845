"""No SQLite error crosses the store port: every read and write of the embedded store raises
``StoreError`` (a 503 over REST, one line on the CLI), never ``sqlite3.Error``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem.errors import StoreError
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.store import DB_FILE, SQLiteStore
from tests.integration.test_store_contract import NS, memory, vec

AT = datetime(2026, 1, 2, tzinfo=UTC)
CALLS: dict[str, Callable[[SQLiteStore], Any]] = {
    "get_memories": lambda s: s.get_memories(NS, ["m1"]),
    "keyword_fields": lambda s: s.keyword_fields(NS, ["m1"]),
    "find_by_hash": lambda s: s.find_by_hash(NS, ["h1"]),
    "session_members": lambda s: s.session_members(NS, "s"),
    "time_window": lambda s: s.time_window(NS, memory(1), before=2, after=2,
                                           session_only=False),
    "iter_memories": lambda s: list(s.iter_memories(NS)),
    "iter_edges": lambda s: list(s.iter_edges(NS)),
    "transition_counts": lambda s: s.transition_counts(NS, AT),
    "transitions_of": lambda s: s.transitions_of(NS, "m1"),
    "namespaces": lambda s: s.namespaces(),
    "counts": lambda s: s.counts(NS),
    "keyword_topk": lambda s: s.keyword_topk(NS, ["memori"], 5),
    "keyword_candidates": lambda s: s.keyword_candidates(NS, ["memori"], 5),
    "get_scored": lambda s: s.get_scored(NS, ["m1"], vec(1)),
    "keyword_stats": lambda s: s.keyword_stats(NS, ["memori"]),
    "edges_of": lambda s: s.edges_of(NS, ["m1"]),
    "neighbourhood": lambda s: s.neighbourhood(NS, ["m1"], 2),
    "get_run": lambda s: s.get_run("r1"),
    "list_runs": lambda s: s.list_runs(),
    "run_counts": lambda s: s.run_counts(),
    "lease_holder": lambda s: s.lease_holder("job"),
    "acquire_lease": lambda s: s.acquire_lease("job", "me", AT, AT),
    "save_run": lambda s: s.save_run({"id": "r2", "status": "done", "created_at": "x"}),
    "apply": lambda s: s.apply(WriteBatch(NS, memories=[memory(9)])),
    "ping": lambda s: s.ping(),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_broken_database_is_a_store_error_on_every_call(tmp_path: Path, name: str) -> None:
    store = SQLiteStore(tmp_path / "d", dim=384)
    store.open()
    store.apply(WriteBatch(NS, memories=[memory(1, session="s"), memory(2, session="s")]))
    # the database loses its tables behind the store's back (a bad restore, a stray tool)
    other = sqlite3.connect(tmp_path / "d" / DB_FILE, isolation_level=None)
    tables = [r[0] for r in other.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memory_fts%' "
        "AND name NOT LIKE 'sqlite_%'")]
    for t in ["memory_fts", *tables]:
        other.execute(f"DROP TABLE IF EXISTS {t}")
    other.close()
    with pytest.raises(StoreError):
        CALLS[name](store)
