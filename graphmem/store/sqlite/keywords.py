"""BM25 collection statistics of the embedded store, kept in SQLite at write time.

Two tables (schema v6): ``keyword_docs`` holds per namespace and field (0 keywords, 1
context_keywords) the documents with a non-empty field and their total length;
``keyword_terms`` the document frequency of each term. ``write`` updates both inside the
write's transaction from the fields a batch replaces or deletes and the fields it writes, so
opening a store reads nothing (it counted every memory's terms before: ~11 s at 1M) and a
query reads its own terms' rows only (ADR 0018).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence

from graphmem.models import TermStats
from graphmem.store.sqlite.rows import select_in

FIELDS = (0, 1)  # keywords, context_keywords


class Deltas:
    """What one batch changes in the statistics.

    Example:
        >>> d = Deltas(); d.add("deploy fail deploy", "", 1); d.add("deploy", "", -1)
        >>> sorted(d.df.items()), d.docs
        ([((0, 'deploy'), 0), ((0, 'fail'), 1)], {0: [0, 2], 1: [0, 0]})
    """

    def __init__(self) -> None:
        self.df: Counter[tuple[int, str]] = Counter()
        self.docs: dict[int, list[int]] = {f: [0, 0] for f in FIELDS}  # [docs, total]

    def add(self, keywords: str | None, context: str | None, sign: int) -> None:
        for field, text in zip(FIELDS, (keywords, context), strict=True):
            terms = (text or "").split()
            if not terms:
                continue
            self.docs[field][0] += sign
            self.docs[field][1] += sign * len(terms)
            for t in set(terms):
                self.df[(field, t)] += sign


def write(conn: sqlite3.Connection, namespace: str, deltas: Deltas) -> None:
    """Apply ``deltas`` (inside the caller's transaction); terms counted down to 0 go."""
    changed = [(namespace, f, t, n) for (f, t), n in deltas.df.items() if n]
    conn.executemany(
        "INSERT INTO keyword_terms (namespace, field, term, df) VALUES (?, ?, ?, ?) "
        "ON CONFLICT DO UPDATE SET df = df + excluded.df", changed)
    conn.executemany(
        "DELETE FROM keyword_terms WHERE namespace = ? AND field = ? AND term = ? AND df <= 0",
        [(namespace, f, t) for _, f, t, n in changed if n < 0])
    conn.executemany(
        "INSERT INTO keyword_docs (namespace, field, docs, total) VALUES (?, ?, ?, ?) "
        "ON CONFLICT DO UPDATE SET docs = docs + excluded.docs, total = total + excluded.total",
        [(namespace, f, d, t) for f, (d, t) in deltas.docs.items() if d or t])


def read(conn: sqlite3.Connection, namespace: str, terms: Sequence[str]
         ) -> tuple[TermStats, TermStats]:
    """The statistics of both fields for the query's terms."""
    docs = dict.fromkeys(FIELDS, (0, 0))
    for field, n, total in conn.execute(
            "SELECT field, docs, total FROM keyword_docs WHERE namespace = ?", (namespace,)):
        docs[field] = (n, total)
    df: dict[int, dict[str, int]] = {f: dict.fromkeys(terms, 0) for f in FIELDS}
    for field, term, n in select_in(conn, "SELECT field, term, df FROM keyword_terms WHERE "
                                    "namespace = ? AND term IN ({keys})", namespace, terms):
        df[field][term] = n
    out = [TermStats(docs[f][0], docs[f][1] / docs[f][0] if docs[f][0] else 0.0,
                     {t: df[f][t] for t in terms}) for f in FIELDS]
    return out[0], out[1]


def rebuild(conn: sqlite3.Connection, rows: Iterable[tuple[str, str | None, str | None]]
            ) -> None:
    """Count every (namespace, keywords, context_keywords) afresh (the v6 migration)."""
    conn.execute("DELETE FROM keyword_terms")
    conn.execute("DELETE FROM keyword_docs")
    per_ns: dict[str, Deltas] = {}
    for namespace, keywords, context in rows:
        per_ns.setdefault(namespace, Deltas()).add(keywords, context, 1)
    for namespace, deltas in per_ns.items():
        write(conn, namespace, deltas)
