"""Edges of a type the namespace has none of are not looked for (ADR 0039): every retrieval
asks for the contradictions among its answers, and most namespaces hold none."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphmem.models import Relation, RelationType
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite import rows as sqlite_rows
from tests.integration.test_namespace_pages import steps
from tests.integration.test_row_files import NS, memories, open_store, unit

N = 3000


def _contradictions(folder: Path, ids: list[str]) -> tuple[int, list[Relation]]:
    found: list[Relation] = []

    def read(conn: sqlite3.Connection) -> None:
        found.extend(sqlite_rows.edges_of(conn, NS, ids, [RelationType.CONTRADICTS]))

    return steps(folder, read), found


def test_a_type_the_namespace_lacks_costs_no_edge_lookup(tmp_path: Path) -> None:
    store = open_store(tmp_path, ann_min=10**9)
    ids = [f"m{i}" for i in range(0, N, 7)]  # 429 ids: thousands of index probes if looked up
    try:
        store.apply(WriteBatch(NS, memories=memories(unit(N))))
        store.apply(WriteBatch(NS, edges=[Relation(f"m{i}", f"m{i + 1}", RelationType.SIMILAR_TO,
                                                   NS, 0.9) for i in range(N - 1)]))
        # another namespace's contradiction does not count for this one
        store.apply(WriteBatch("other", memories=memories(unit(2), ns="other")))
        store.apply(WriteBatch("other", edges=[Relation("m0", "m1", RelationType.CONTRADICTS,
                                                        "other")]))
        none, found = _contradictions(tmp_path, ids)
        assert found == [] and none <= 3
        # one contradiction: looked up and found, from either end
        store.apply(WriteBatch(NS, edges=[Relation("m7", "m14", RelationType.CONTRADICTS, NS)]))
        some, found = _contradictions(tmp_path, ids)
        assert [e.key for e in found] == [("m7", "m14", RelationType.CONTRADICTS)]
        assert some > 10 * (none + 1)
        assert store.edges_of(NS, ["m14"], [RelationType.CONTRADICTS]) == found
        # deleted again: back to no lookup; the other types are still found
        store.apply(WriteBatch(NS, delete_edges=[found[0].key]))
        assert _contradictions(tmp_path, ids) == (none, [])
        assert len(store.edges_of(NS, ["m7"], [RelationType.SIMILAR_TO])) == 2
        assert len(store.edges_of(NS, ["m7"])) == 2
    finally:
        store.close()
