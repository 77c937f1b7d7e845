"""The counts of a namespace are kept by triggers in each write's transaction (schema 9, ADR
0034) and must equal what a scan of the tables counts, after any sequence of writes:
inserts, whole upserts that move a memory between tiers / statuses / kinds, patches,
deletes (which take the memory's edges), edge upserts and deletes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem.config import TuningConfig
from graphmem.models import Kind, Memory, Relation, RelationType, Status, Tier
from graphmem.store.base import Counts, WriteBatch
from graphmem.store.sqlite import schema as sqlite_schema
from graphmem.store.sqlite.store import SQLiteStore

NAMESPACES = ("a", "b")
IDS = [f"m{i}" for i in range(4)]
TYPES = [RelationType.CAUSES, RelationType.SIMILAR_TO]

memory_op = st.tuples(st.just("memory"), st.sampled_from(NAMESPACES), st.sampled_from(IDS),
                      st.sampled_from(list(Tier)), st.sampled_from(list(Status)),
                      st.sampled_from([Kind.MEMORY, Kind.SUMMARY]))
patch_op = st.tuples(st.just("patch"), st.sampled_from(NAMESPACES), st.sampled_from(IDS),
                     st.sampled_from(list(Tier)), st.sampled_from(list(Status)))
delete_op = st.tuples(st.just("delete"), st.sampled_from(NAMESPACES), st.sampled_from(IDS))
edge_op = st.tuples(st.sampled_from(["edge", "unedge"]), st.sampled_from(NAMESPACES),
                    st.sampled_from(IDS), st.sampled_from(IDS), st.sampled_from(TYPES))
ops = st.lists(st.one_of(memory_op, patch_op, delete_op, edge_op), max_size=30)


def scanned(folder: Path, namespace: str) -> Counts:
    conn = sqlite3.connect(folder / "graphmem.db")
    try:
        mem = conn.execute("SELECT tier, status, kind, count(*) FROM memories WHERE "
                           "namespace = ? GROUP BY tier, status, kind", (namespace,))
        memories = {(Tier(t), Status(s), k): n for t, s, k, n in mem}
        edges = {RelationType(t): n for t, n in conn.execute(
            "SELECT type, count(*) FROM edges WHERE namespace = ? GROUP BY type", (namespace,))}
        return Counts(memories=memories, edges=edges)
    finally:
        conn.close()


def run(store: SQLiteStore, op: tuple[Any, ...]) -> None:
    kind, ns = op[0], str(op[1])
    if kind == "memory":
        _, _, id_, tier, status, mkind = op
        store.apply(WriteBatch(ns, memories=[Memory(id=str(id_), namespace=ns, content="x",
                                                    tier=tier, status=status, kind=mkind)]))
    elif kind == "patch":
        _, _, id_, tier, status = op
        if store.get_memories(ns, [str(id_)]):
            store.apply(WriteBatch(ns, patches=[(str(id_), {"tier": tier, "status": status})]))
    elif kind == "delete":
        store.apply(WriteBatch(ns, delete_memories=[str(op[2])]))
    else:
        _, _, source, target, type_ = op
        if kind == "edge":
            if len(store.get_memories(ns, [str(source), str(target)])) == len({source, target}):
                store.apply(WriteBatch(ns, edges=[Relation(str(source), str(target), type_, ns)]))
        else:
            store.apply(WriteBatch(ns, delete_edges=[(str(source), str(target), type_)]))


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sequence=ops)
def test_kept_counts_equal_a_scan_after_any_writes(
        tmp_path_factory: pytest.TempPathFactory, sequence: list[tuple[Any, ...]]) -> None:
    folder = tmp_path_factory.mktemp("counts")
    store = SQLiteStore(folder, dim=4, tuning=TuningConfig(ann_min=0))
    store.open()
    try:
        for ns in NAMESPACES:  # a start to move, patch, link and delete
            store.apply(WriteBatch(ns, memories=[Memory(id=i, namespace=ns, content="x")
                                                 for i in IDS[:3]]))
        for op in sequence:
            run(store, op)
            for ns in NAMESPACES:
                assert store.counts(ns) == scanned(folder, ns), op
    finally:
        store.close()


def test_schema_9_counts_a_store_written_before_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, dim=4, tuning=TuningConfig(ann_min=0))
    store.open()
    try:
        store.apply(WriteBatch("a", memories=[Memory(id=f"m{i}", namespace="a", content="x",
                                                     tier=Tier.FAST if i % 2 else Tier.SLOW)
                                              for i in range(5)],
                               edges=[Relation("m0", "m1", RelationType.CAUSES, "a")]))
    finally:
        store.close()
    conn = sqlite3.connect(tmp_path / "graphmem.db", isolation_level=None)
    conn.execute("DROP TABLE memory_counts")  # as schema 8 left it: no kept counts
    conn.execute("DROP TABLE edge_counts")
    conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    conn.close()
    store = SQLiteStore(tmp_path, dim=4, tuning=TuningConfig(ann_min=0))
    store.open()
    try:
        assert sqlite_schema.current_version(store.conn) == sqlite_schema.SCHEMA_VERSION
        assert store.counts("a") == scanned(tmp_path, "a")
        assert store.counts("a").memories[(Tier.FAST, Status.ACTIVE, "memory")] == 2
        assert store.counts("a").edges == {RelationType.CAUSES: 1}
    finally:
        store.close()
