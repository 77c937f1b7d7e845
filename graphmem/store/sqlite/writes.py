"""The embedded store's writes: one ``WriteBatch`` as SQL inside the caller's transaction.

``SQLiteStore.apply`` takes the write lock, opens the transaction and, once it committed,
brings the in-memory index in step (``store.py``); this module only says what changes in
SQLite: memories (upserts and deletes, with their full-text rows and BM25 statistics), field
patches, transitions and edges, and the epochs that tell saved indexes and mapped rows
they are out of date.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from typing import Any

from graphmem.errors import DuplicateError
from graphmem.models import Memory, Status, Tier
from graphmem.store import codec
from graphmem.store.ann.files import bump_epoch
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite import keywords as sqlite_keywords
from graphmem.store.sqlite.rows import COLS, chunks, marks, ns_tag, select_in, tags

_UPSERT = (
    f"INSERT INTO memories ({COLS}) VALUES ({', '.join(['?'] * len(codec.MEMORY_FIELDS))}) "
    "ON CONFLICT (namespace, id) DO UPDATE SET "
    + ", ".join(f"{c.strip()} = excluded.{c.strip()}" for c in COLS.split(",")[2:])
)
# the vectors live apart, by pk (ADR 0029); a memory upserted without an embedding keeps
# its stored ones (metadata-only updates)
_VECTORS = ("INSERT INTO vectors (pk, embedding, context_embedding) VALUES (?, ?, ?) "
            "ON CONFLICT (pk) DO UPDATE SET embedding = excluded.embedding, "
            "context_embedding = excluded.context_embedding")


def _row_params(m: Memory) -> tuple[Any, ...]:
    flat = codec.flatten(m)
    return tuple(flat[name] for name in codec.MEMORY_FIELDS)


def _old_keywords(conn: sqlite3.Connection, batch: WriteBatch) -> list[tuple[str, str]]:
    """The keyword fields the batch replaces or deletes (read before it writes: the
    statistics count them down)."""
    return list(select_in(conn, "SELECT keywords, context_keywords FROM memories WHERE "
                          "namespace = ? AND id IN ({keys})", batch.namespace,
                          [*batch.delete_memories, *(m.id for m in batch.memories)]))


def _delete_memories(conn: sqlite3.Connection, ns: str, ids: Sequence[str]) -> None:
    for chunk in chunks(ids):
        m = marks(len(chunk))
        for table, key in (("memory_fts", "rowid"), ("vectors", "pk")):
            conn.execute(f"DELETE FROM {table} WHERE {key} IN (SELECT pk FROM memories "
                         f"WHERE namespace = ? AND id IN ({m}))", (ns, *chunk))
        conn.execute(f"DELETE FROM memories WHERE namespace = ? AND id IN ({m})", (ns, *chunk))
        conn.execute(f"UPDATE transitions SET detail = NULL WHERE namespace = ? AND "
                     f"memory_id IN ({m}) AND detail IS NOT NULL", (ns, *chunk))
        conn.execute(f"DELETE FROM edges WHERE namespace = ? AND (source_id IN ({m}) OR "
                     f"target_id IN ({m}))", (ns, *chunk, *chunk))


def _full_text(conn: sqlite3.Connection, ns: str, memories: list[Memory]) -> dict[str, int]:
    """The written memories' full-text rows, replaced; returns id -> pk."""
    pks: dict[str, int] = dict(select_in(
        conn, "SELECT id, pk FROM memories WHERE namespace = ? AND id IN ({keys})", ns,
        [m.id for m in memories]))
    conn.executemany("DELETE FROM memory_fts WHERE rowid = ?", [(pks[m.id],) for m in memories])
    conn.executemany(
        "INSERT INTO memory_fts (rowid, keywords, context_keywords, tags) VALUES (?, ?, ?, ?)",
        [(pks[m.id], m.keywords, m.context_keywords, tags(m)) for m in memories])
    return pks


def patch(conn: sqlite3.Connection, ns: str, patches: list[tuple[str, dict[str, Any]]]
          ) -> None:
    """Field-level updates (fields from PATCH_FIELDS), grouped by the fields they set;
    a tier or status change also re-tags the memory's FTS row."""
    groups: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
    for id_, fields in patches:
        names = tuple(sorted(fields))
        values = tuple(codec.scalar(fields[n]) for n in names)
        groups.setdefault(names, []).append((*values, ns, id_))
    for names, rows in groups.items():
        sets = ", ".join(f"{n} = ?" for n in names)  # names from PATCH_FIELDS only
        conn.executemany(f"UPDATE memories SET {sets} WHERE namespace = ? AND id = ?", rows)
        if "tier" in names or "status" in names:
            conn.executemany(
                "UPDATE memory_fts SET tags = (SELECT ? || ' s' || status || ' t' || tier "
                "FROM memories WHERE namespace = ? AND id = ?) WHERE rowid = (SELECT pk "
                "FROM memories WHERE namespace = ? AND id = ?)",
                [(ns_tag(ns), ns, r[-1], ns, r[-1]) for r in rows])


def _refuse_taken(conn: sqlite3.Connection, ns: str, new_ids: Collection[str]) -> None:
    """A create of an id that exists is refused inside the transaction (issue 45): one
    process owns a data folder, so its check and its write cannot be raced."""
    taken = next(select_in(conn, "SELECT id FROM memories WHERE namespace = ? AND "
                           "id IN ({keys})", ns, sorted(new_ids)), None)
    if taken is not None:
        raise DuplicateError(f"memory id {taken[0]!r} exists")


def write(conn: sqlite3.Connection, batch: WriteBatch
          ) -> tuple[dict[str, int], list[tuple[str, Tier, Status]]]:
    """The batch, inside the caller's transaction. Returns the written memories' pks and the
    (id, tier, status) of the memories whose tier or status a patch set: what the in-memory
    index must learn after the commit."""
    ns = batch.namespace
    replaced = _old_keywords(conn, batch)
    conn.executemany(
        "DELETE FROM edges WHERE namespace = ? AND source_id = ? AND target_id = ? "
        "AND type = ?", [(ns, s, t, ty.value) for s, t, ty in batch.delete_edges])
    _delete_memories(conn, ns, batch.delete_memories)
    _refuse_taken(conn, ns, batch.new_ids)
    conn.executemany(_UPSERT, [_row_params(m) for m in batch.memories])
    deltas = sqlite_keywords.Deltas()
    for kw, ckw in replaced:
        deltas.add(kw, ckw, -1)
    for m in batch.memories:
        deltas.add(m.keywords, m.context_keywords, 1)
    sqlite_keywords.write(conn, ns, deltas)
    if batch.memories or batch.delete_memories or any(
            "tier" in f or "status" in f for _, f in batch.patches):
        bump_epoch(conn, ns)  # the namespace's saved vectors are out of date (ADR 0068)
    new_pks = _full_text(conn, ns, batch.memories)
    conn.executemany(_VECTORS, [
        (new_pks[m.id], codec.blob(m.embedding), codec.blob(m.context_embedding))
        for m in batch.memories if m.embedding is not None])
    patch(conn, ns, batch.patches)
    conn.executemany(
        "INSERT INTO transitions (namespace, memory_id, kind, from_tier, to_tier, "
        "from_status, to_status, reason, at, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(ns, t.memory_id, t.kind.value, t.from_tier.value, t.to_tier.value,
          t.from_status.value, t.to_status.value, t.reason, t.at.timestamp(), t.detail)
         for t in batch.transitions])
    conn.executemany(
        "INSERT INTO edges (namespace, source_id, target_id, type, score, created_at, "
        "source) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
        "score = excluded.score, source = excluded.source",
        [(ns, e.source_id, e.target_id, e.type.value, e.score, codec.ts(e.created_at),
          e.source.value) for e in batch.edges])
    return new_pks, [(r[0], Tier(r[1]), Status(r[2])) for r in select_in(
        conn, "SELECT id, tier, status FROM memories WHERE namespace = ? AND id IN ({keys})",
        ns, [i for i, f in batch.patches if "tier" in f or "status" in f])]
