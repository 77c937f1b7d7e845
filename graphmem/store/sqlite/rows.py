"""The embedded store's reads: SQL over one connection, and the rows decoded into models.

Plain functions of a ``sqlite3.Connection``; ``SQLiteStore`` chooses the connection and holds
its locks around each call (``store.py``), the writes are ``writes.py``. Every value goes
in as a parameter; column names come from ``codec.MEMORY_FIELDS`` and ``SORT_FIELDS`` only.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from graphmem.errors import StoreError
from graphmem.models import (
    Candidate,
    EdgeSource,
    Memory,
    Relation,
    RelationType,
    Status,
    Tier,
    Transition,
)
from graphmem.store import codec
from graphmem.store.base import SORT_FIELDS, Counts, EdgeKey, ListSpec

COLS = ", ".join(codec.MEMORY_FIELDS)
#: a memory's vectors, in their own table (schema 7, ADR 0029): statements that read them add
#: these columns and the join
EMB_COLS = ", vectors.embedding, vectors.context_embedding"
EMB_JOIN = " LEFT JOIN vectors ON vectors.pk = memories.pk"
#: ids per statement (SQLite's default limit of host parameters is 32766; 500 keeps the
#: statements small and their plans cached)
CHUNK = 500
#: every match of a full-text expression (up to a limit) with its fields, unscored
_FTS_ALL = ("SELECT m.id, 0.0, m.keywords, m.context_keywords FROM (SELECT rowid FROM "
            "memory_fts WHERE memory_fts MATCH ? LIMIT ?) AS f JOIN memories m "
            "ON m.pk = f.rowid ORDER BY m.pk DESC")
_TRANSITION_COLS = ("memory_id", "kind", "from_tier", "to_tier", "reason", "at", "from_status",
                    "to_status", "detail")
_BM25 = "-bm25(memory_fts, 1.0, 0.5, 0.0)"  # context weighs half; the tags nothing
#: the ranked matches of the terms alone, best first (ties: the newest), with what the tags
#: would have filtered on (ADR 0041)
_RANKED_ALONE = ("SELECT m.id, f.score, m.keywords, m.context_keywords, m.namespace, "
                 f"m.status, m.tier FROM (SELECT rowid, {_BM25} AS score FROM memory_fts "
                 "WHERE memory_fts MATCH ? ORDER BY score DESC, rowid DESC LIMIT ?) AS f "
                 "JOIN memories m ON m.pk = f.rowid ORDER BY f.score DESC, m.pk DESC")
#: from this share of the store's rows up, a ranked search tries the terms alone first
_SHARE_ALONE = 0.5
_RELATION_TYPES = {t.value: t for t in RelationType}
_EDGE_SOURCES = {s.value: s for s in EdgeSource}
_fromtimestamp = datetime.fromtimestamp


def marks(n: int) -> str:
    return ", ".join("?" * n)


def chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """``items`` a statement's worth (``CHUNK``) at a time."""
    return (items[i:i + CHUNK] for i in range(0, len(items), CHUNK))


def select_in(conn: sqlite3.Connection, sql: str, namespace: str, keys: Iterable[Any]
              ) -> Iterator[Any]:
    """The rows of ``sql`` (parameters: ``namespace``, then the ``{keys}`` of its IN list)
    over the distinct ``keys``, a statement's worth (``CHUNK``) at a time."""
    for chunk in chunks(list(dict.fromkeys(keys))):
        yield from conn.execute(sql.format(keys=marks(len(chunk))), (namespace, *chunk))


def ns_tag(namespace: str) -> str:
    """The namespace's token in the full-text index's ``tags`` column.

    Example:
        >>> ns_tag("ops") == ns_tag("ops") != ns_tag("dev")
        True
    """
    return "n" + hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()


def tags(m: Memory) -> str:
    return f"{ns_tag(m.namespace)} s{m.status.value} t{m.tier.value}"


def memory(row: Sequence[Any], embeddings: bool) -> Memory:
    """A memories row (``COLS`` then the two vector columns, or NULLs) as a ``Memory``."""
    if not embeddings:
        return codec.unflatten_row(row)
    n = len(codec.MEMORY_FIELDS)
    return codec.unflatten_row(row, embedding=codec.vector(row[n]),
                               context_embedding=codec.vector(row[n + 1]))


def edge(row: Sequence[Any]) -> Relation:
    """``codec.edge`` of an edges row, with the enums and the time decoded directly: opening
    a store decodes every edge (370k at 100k memories: 3.9 -> ~1 s)."""
    ns, source_id, target_id, type_, score, created_at, source = row
    return Relation(source_id, target_id, _RELATION_TYPES[type_], ns,
                    None if score is None else float(score), _fromtimestamp(created_at, UTC),
                    _EDGE_SOURCES[source or "explicit"])  # created_at is NOT NULL


def select(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[Memory]:
    """Memories, without their vectors, of a statement whose columns are ``{cols}``."""
    return [codec.unflatten_row(r) for r in conn.execute(sql.format(cols=COLS), params)]


def memories_by_id(conn: sqlite3.Connection, namespace: str, ids: Sequence[str],
                   embeddings: bool) -> dict[str, Memory]:
    cols, join = (COLS + EMB_COLS, EMB_JOIN) if embeddings else (COLS, "")
    rows = select_in(conn, f"SELECT {cols} FROM memories{join} WHERE namespace = ? AND "
                     "id IN ({keys})", namespace, ids)
    return {m.id: m for m in (memory(r, embeddings) for r in rows)}


#: a candidate's columns (ADR 0041), a field an older graphmem did not write read as its
#: fallback
_CANDIDATE_COLS = ", ".join(f"coalesce({n}, {codec.LATER[n]})" if n in codec.LATER else n
                            for n in codec.CANDIDATE_FIELDS)


def candidates(conn: sqlite3.Connection, namespace: str, ids: Sequence[str],
               pks: Sequence[int]) -> dict[str, Candidate]:
    """What retrieval ranks the memories of ``ids`` by: a fifth of the columns, decoded
    without building whole records; looked up by ``pks`` (the vector index knows them)
    and the rest by id (ADR 0041)."""
    wanted = set(ids)
    # "+namespace": checked on the row; as an index term, the planner took the
    # (namespace, pk) index over the row id, which was slower
    rows = select_in(conn, f"SELECT {_CANDIDATE_COLS} FROM memories WHERE +namespace = ? "
                     "AND pk IN ({keys})", namespace, pks)
    out = {c.id: c for c in (codec.candidate_row(r) for r in rows if r[0] in wanted)}
    for row in select_in(conn, f"SELECT {_CANDIDATE_COLS} FROM memories WHERE namespace = ? "
                         "AND id IN ({keys})", namespace, [i for i in ids if i not in out]):
        c = codec.candidate_row(row)
        out[c.id] = c
    return out


def keyword_fields(conn: sqlite3.Connection, namespace: str, ids: Sequence[str]
                   ) -> dict[str, tuple[str, str]]:
    return {id_: (kw or "", ctx or "") for id_, kw, ctx in select_in(
        conn, "SELECT id, keywords, context_keywords FROM memories WHERE namespace = ? "
        "AND id IN ({keys})", namespace, ids)}


def find_by_hash(conn: sqlite3.Connection, namespace: str, hashes: Collection[str]
                 ) -> dict[str, str]:
    out: dict[str, str] = {}
    # the hash index, named: for ``ORDER BY pk`` the planner preferred schema 8's
    # (namespace, pk) index and read the whole namespace (ADR 0033)
    for h, id_ in select_in(conn, "SELECT content_hash, id FROM memories INDEXED BY "
                            "ix_memories_hash WHERE namespace = ? AND status = 'active' AND "
                            "content_hash IN ({keys}) ORDER BY pk", namespace, hashes):
        out.setdefault(h, id_)
    return out


def session_members(conn: sqlite3.Connection, namespace: str, session_id: str
                    ) -> list[tuple[str, datetime]]:
    rows = conn.execute(
        "SELECT id, created_at FROM memories WHERE namespace = ? AND session_id = ? "
        "ORDER BY created_at, pk", (namespace, session_id)).fetchall()
    return [(r[0], _fromtimestamp(r[1], UTC)) for r in rows]


def time_window(conn: sqlite3.Connection, namespace: str, anchor: Memory, *, before: int,
                after: int, session_only: bool, statuses: Collection[Status],
                now: datetime | None = None) -> tuple[list[Memory], list[Memory]]:
    row = conn.execute("SELECT pk, created_at FROM memories WHERE namespace = ? AND id = ?",
                       (namespace, anchor.id)).fetchone()
    if row is None:
        return [], []
    pk, ts = row
    where = "namespace = ?"
    params: list[Any] = [namespace]
    if session_only and anchor.session_id is not None:
        where += " AND session_id = ?"
        params.append(anchor.session_id)
    st = [s.value for s in statuses]
    where += f" AND status IN ({marks(len(st))})"
    params += st
    if now is not None:  # without those whose own TTL ran out (issue 48)
        where += " AND (expires_at IS NULL OR expires_at > ?)"
        params.append(now.timestamp())
    earlier, later = (select(
        conn, f"SELECT {{cols}} FROM memories WHERE {where} AND (created_at {cmp} ? OR "
        f"(created_at = ? AND pk {cmp} ?)) ORDER BY created_at {order}, pk {order} LIMIT ?",
        (*params, ts, ts, pk, n)) if n > 0 else []
        for cmp, order, n in (("<", "DESC", before), (">", "ASC", after)))
    return earlier, later


def memory_page(conn: sqlite3.Connection, namespace: str, after_pk: int, page: int,
                embeddings: bool, statuses: Collection[Status] | None
                ) -> tuple[int, list[Memory]]:
    """The next ``page`` memories in pk order after ``after_pk``, and the last pk read."""
    cols, join = (COLS + EMB_COLS, EMB_JOIN) if embeddings else (COLS, "")
    where, extra = "", []
    if statuses is not None:
        extra = [s.value for s in statuses]
        where = f" AND status IN ({marks(len(extra))})"
    # the index in pk order, named: the planner's own choice sorted the namespace (ADR 0033)
    rows = conn.execute(
        f"SELECT memories.pk, {cols} FROM memories INDEXED BY ix_memories_ns_pk{join} "
        f"WHERE namespace = ? AND memories.pk > ?{where} ORDER BY memories.pk LIMIT ?",
        (namespace, after_pk, *extra, page)).fetchall()
    return (rows[-1][0] if rows else after_pk), [memory(r[1:], embeddings) for r in rows]


def list_page(conn: sqlite3.Connection, namespace: str, spec: ListSpec) -> list[Memory]:
    if spec.sort not in SORT_FIELDS:
        raise StoreError(f"cannot sort by {spec.sort!r}")
    where: list[str] = ["namespace = ?"]
    params: list[Any] = [namespace]
    if spec.now is not None and spec.statuses is not None:
        where.append(_status_now(spec.statuses))
        params.append(spec.now.timestamp())
    statuses = (spec.statuses if spec.now is None or spec.statuses is None
                else _stored_as(spec.statuses))
    for column, values in (("status", statuses), ("tier", spec.tiers), ("type", spec.types)):
        if values is not None:
            where.append(f"{column} IN ({marks(len(values))})")
            params += [getattr(x, "value", x) for x in values]
    for condition, value in (("source = ?", spec.source), ("session_id = ?", spec.session_id),
                             ("topic = ?", spec.topic), ("created_at >= ?", spec.since),
                             ("created_at < ?", spec.until)):
        if value is not None:
            where.append(condition)
            params.append(value.timestamp() if isinstance(value, datetime) else value)
    key = spec.sort  # from SORT_FIELDS
    cmp, order = ("<", "DESC") if spec.descending else (">", "ASC")
    if spec.after is not None:
        where.append(f"({key} {cmp} ? OR ({key} = ? AND id {cmp} ?))")
        params += [spec.after[0], spec.after[0], spec.after[1]]
    sql = (f"SELECT {{cols}} FROM memories WHERE {' AND '.join(where)} "
           f"ORDER BY {key} {order}, id {order} LIMIT ?")
    return select(conn, sql, [*params, max(0, int(spec.limit))])


def _stored_as(statuses: Collection[Status]) -> list[Status]:
    """The stored statuses a listing of ``statuses`` as of now reads: an expired one may
    still be stored active (its TTL ran out before maintenance marked it)."""
    out = list(statuses)
    if Status.EXPIRED in out and Status.ACTIVE not in out:
        out.append(Status.ACTIVE)
    return out


def _status_now(statuses: Collection[Status]) -> str:
    """The condition (one parameter: now) that the status as of now is one of ``statuses``
    (issue 48): an active memory whose own TTL ran out by now counts as expired.

    Example:
        >>> _status_now([Status.ACTIVE])
        "(status != 'active' OR expires_at IS NULL OR expires_at > ?)"
    """
    active, expired = Status.ACTIVE in statuses, Status.EXPIRED in statuses
    if active and not expired:
        return "(status != 'active' OR expires_at IS NULL OR expires_at > ?)"
    if expired and not active:
        return "(status != 'active' OR expires_at <= ?)"
    return "(? IS NOT NULL)"  # both or neither: the stored status decides


def transition_counts(conn: sqlite3.Connection, namespace: str, since: datetime
                      ) -> list[tuple[str, Tier, Tier, int, int]]:
    rows = conn.execute(
        "SELECT kind, from_tier, to_tier, count(*), sum(at >= ?) FROM transitions "
        "WHERE namespace = ? GROUP BY kind, from_tier, to_tier",
        (since.timestamp(), namespace)).fetchall()
    return [(k, Tier(a), Tier(b), int(n), int(r or 0)) for k, a, b, n, r in rows]


def _transitions(rows: list[Any]) -> list[Transition]:
    return [codec.transition(dict(zip(_TRANSITION_COLS, r, strict=True))) for r in rows]


def transitions_of(conn: sqlite3.Connection, namespace: str, memory_id: str
                   ) -> list[Transition]:
    return _transitions(conn.execute(
        f"SELECT {', '.join(_TRANSITION_COLS)} FROM transitions WHERE namespace = ? AND "
        "memory_id = ? ORDER BY at, id", (namespace, memory_id)).fetchall())


def recent_transitions(conn: sqlite3.Connection, namespace: str, limit: int,
                       since: datetime | None) -> list[Transition]:
    return _transitions(conn.execute(
        f"SELECT {', '.join(_TRANSITION_COLS)} FROM transitions WHERE namespace = ? AND "
        "at >= ? ORDER BY at DESC, id DESC LIMIT ?",
        (namespace, since.timestamp() if since else float("-inf"),
         max(0, int(limit)))).fetchall())


def edge_page(conn: sqlite3.Connection, namespace: str, after: tuple[str, str, str],
              page: int) -> list[Relation]:
    """The next ``page`` edges in key order after ``after`` (source, target, type)."""
    return [edge(r) for r in conn.execute(
        "SELECT namespace, source_id, target_id, type, score, created_at, source "
        "FROM edges WHERE namespace = ? AND (source_id, target_id, type) > (?, ?, ?) "
        "ORDER BY source_id, target_id, type LIMIT ?", (namespace, *after, page))]


def counts(conn: sqlite3.Connection, namespace: str) -> Counts:
    """From the tables the triggers keep (schema 9, ADR 0034): no scan of the namespace."""
    return Counts(
        memories={(Tier(t), Status(s), k): n for t, s, k, n in conn.execute(
            "SELECT tier, status, kind, n FROM memory_counts WHERE namespace = ? AND n > 0",
            (namespace,))},
        edges={RelationType(t): n for t, n in conn.execute(
            "SELECT type, n FROM edge_counts WHERE namespace = ? AND n > 0", (namespace,))})


def total_memories(conn: sqlite3.Connection) -> int:
    """Every namespace's memories, from the kept counts (ADR 0034)."""
    return int(conn.execute("SELECT coalesce(sum(n), 0) FROM memory_counts").fetchone()[0])


def share(conn: sqlite3.Connection, namespace: str, tiers: Collection[Tier] | None,
          statuses: Collection[Status], total: int) -> float:
    """The part of the store's ``total`` memories that are in ``namespace`` with one of
    ``statuses`` (and ``tiers``): a hint for the full-text search (ADR 0041)."""
    if total <= 0:
        return 0.0
    wanted = {s.value for s in statuses}
    wanted_tier = None if tiers is None else {t.value for t in tiers}
    mine: int = sum(n for tier, status, n in conn.execute(
        "SELECT tier, status, n FROM memory_counts WHERE namespace = ?", (namespace,))
               if status in wanted and (wanted_tier is None or tier in wanted_tier))
    return min(1.0, mine / total)


def _any_edges(conn: sqlite3.Connection, namespace: str, types: Collection[str]) -> bool:
    """Whether the namespace holds an edge of one of ``types``, from the counts the triggers
    keep in the same transaction as the edges (one key lookup a type): a retrieval's check
    for contradictions among its answers skips the edge indexes of a namespace that has
    none (0.2-0.9 ms at 1M memories; ADR 0039)."""
    return conn.execute(
        f"SELECT 1 FROM edge_counts WHERE namespace = ? AND type IN ({marks(len(types))}) "
        "AND n > 0 LIMIT 1", (namespace, *types)).fetchone() is not None


def edges_of(conn: sqlite3.Connection, namespace: str, ids: Collection[str],
             types: Collection[RelationType] | None) -> list[Relation]:
    """From the table (two indexed lookups per chunk; without ANALYZE the planner scanned
    the namespace's primary key for the targets), not a copy in memory: a million edges
    held as objects cost ~1 GB and several seconds to load at open (ADR 0018)."""
    out: dict[EdgeKey, Relation] = {}
    unique = list(dict.fromkeys(ids))
    # one wanted type is checked in the indexes (the primary key, and the target index
    # through it) before the row's other columns are read; an IN list made SQLite read
    # every row again
    wanted = None if types is None else {t.value for t in types}
    if wanted is not None and not _any_edges(conn, namespace, wanted):
        return []  # the kept counts (ADR 0034) say the namespace has none of these types
    typed, extra = (" AND type = ?", tuple(wanted)) if wanted and len(wanted) == 1 else ("", ())
    for chunk in chunks(unique):
        m = marks(len(chunk))
        for row in conn.execute(
                f"SELECT namespace, source_id, target_id, type, score, created_at, "
                f"source FROM edges WHERE namespace = ? AND source_id IN ({m}){typed} "
                f"UNION ALL SELECT namespace, source_id, target_id, type, score, "
                f"created_at, source FROM edges INDEXED BY ix_edges_target "
                f"WHERE namespace = ? AND target_id IN ({m}){typed}",
                (namespace, *chunk, *extra, namespace, *chunk, *extra)):
            if wanted is None or row[3] in wanted:
                e = edge(row)
                out[e.key] = e
    return list(out.values())


def keyword_rows(conn: sqlite3.Connection, namespace: str, terms: Sequence[str], k: int,
                 tiers: Collection[Tier] | None, statuses: Collection[Status],
                 newest: bool, ranked: bool = True, share: float = 0.0
                 ) -> list[tuple[Any, ...]]:
    """(id, score, keywords, context_keywords) of the full-text search, best first (ties:
    the newest); not ``ranked``: when all the matches fit in ``k``, all of them, unscored
    (ADR 0022). ``share``: the part of the store's rows that the namespace, ``statuses`` and
    ``tiers`` let through (a hint; from a half up, the terms are ranked alone first, ADR
    0041)."""
    words = " OR ".join('"' + t.replace('"', '""') + '"' for t in dict.fromkeys(terms) if t)
    if not words or k <= 0 or not statuses:
        return []
    expr = (f"tags : {ns_tag(namespace)} AND tags : ("
            + " OR ".join(f"s{s.value}" for s in statuses) + ")")
    if tiers is not None:
        if not tiers:
            return []
        expr += " AND tags : (" + " OR ".join(f"t{t.value}" for t in tiers) + ")"
    expr += f" AND {{keywords context_keywords}} : ({words})"
    # context weighs half, as in FalkorDB's index: the order only chooses candidates
    # newest: the last-stored k matches in rowid order, which FTS5 walks without scoring
    # any posting (ADR 0011); their score is 0, retrieval ranks them with its own BM25
    if not (ranked or newest):
        # bm25() counts every row of every phrase for its IDF, the namespace and status
        # tags included (all of the namespace): most of the query. Mostly the matches are
        # fewer than k (seed_postings), and then they are the answer in any order
        found = conn.execute(_FTS_ALL, (expr, k + 1)).fetchall()
        if len(found) <= k:
            return found
    if not newest and share >= _SHARE_ALONE:
        alone = _ranked_alone(conn, namespace, words, k, tiers, statuses, share)
        if alone is not None:
            return alone
    score = "0.0" if newest else _BM25
    sql = ("SELECT m.id, f.score, m.keywords, m.context_keywords FROM (SELECT rowid, "
           f"{score} AS score FROM memory_fts WHERE memory_fts MATCH ? "
           f"ORDER BY {'rowid' if newest else 'score DESC, rowid'} DESC LIMIT ?) AS f "
           "JOIN memories m ON m.pk = f.rowid ORDER BY f.score DESC, m.pk DESC")
    return conn.execute(sql, (expr, k)).fetchall()


def _ranked_alone(conn: sqlite3.Connection, namespace: str, words: str, k: int,
                  tiers: Collection[Tier] | None, statuses: Collection[Status],
                  share: float) -> list[tuple[Any, ...]] | None:
    """The ranked search without the namespace, status and tier tags in its expression,
    the rows that pass them kept: None when too few passed to be sure of the best ``k``.

    FTS5's bm25() counts every row of every phrase of the expression for its IDF, the tags'
    too: all of the namespace for its tag (at 100k the statement took 9.9 ms, the terms
    alone 3.6). The tags score nothing (their column weighs 0), so the terms alone rank the
    rows the same; the best ``k`` that pass are the answer unless the ``limit`` read were
    all kept out."""
    limit = math.ceil(k / share * 1.25) + 16
    wanted_status = {s.value for s in statuses}
    wanted_tier = None if tiers is None else {t.value for t in tiers}
    rows = conn.execute(_RANKED_ALONE, (f"{{keywords context_keywords}} : ({words})",
                                        limit)).fetchall()
    kept = [r[:4] for r in rows if r[4] == namespace and r[5] in wanted_status
            and (wanted_tier is None or r[6] in wanted_tier)]
    if len(kept) >= k or len(rows) < limit:  # the best k passed, or every match was read
        return kept[:k]
    return None
