"""Pure BM25 over pre-analysed keyword fields, with collection statistics from the store.

The store's full-text index finds keyword *seeds*; the keyword terms of the rerank are computed
here so that k1 and b are configuration (k1 1.2, b 0.3 measured best on LoCoMo, ADR 0002) and
every backend scores alike.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain


@dataclass(slots=True)
class FieldStats:
    """Document count, total length and document frequencies of one keyword field.

    Example:
        >>> stats = FieldStats()
        >>> stats.add(["deploy", "fail"]); stats.add(["deploy"])
        >>> stats.snapshot(["deploy", "rollback"])
        TermStats(docs=2, avg_length=1.5, df={'deploy': 2, 'rollback': 0})
        >>> stats.add_many([["rollback", "rollback"], []]); stats.snapshot(["rollback"])
        TermStats(docs=3, avg_length=1.6666666666666667, df={'rollback': 1})
    """

    docs: int = 0
    total_length: int = 0
    df: Counter[str] = field(default_factory=Counter)

    def add(self, terms: Sequence[str], sign: int = 1) -> None:
        if not terms:
            return
        self.docs += sign
        self.total_length += sign * len(terms)
        for t in set(terms):
            self.df[t] += sign
            if self.df[t] <= 0:
                del self.df[t]

    def add_many(self, documents: Iterable[Sequence[str]]) -> None:
        """``add`` for many documents at once (opening a store counts every memory)."""
        docs = [d for d in documents if d]
        self.docs += len(docs)
        self.total_length += sum(map(len, docs))
        self.df.update(chain.from_iterable(map(set, docs)))

    def snapshot(self, terms: Sequence[str]) -> TermStats:
        """The statistics BM25 needs for these query terms (a copy, safe to keep)."""
        avg = self.total_length / self.docs if self.docs else 0.0
        return TermStats(self.docs, avg, {t: self.df.get(t, 0) for t in terms})


@dataclass(slots=True, frozen=True)
class TermStats:
    """Collection statistics for some query terms: documents, average length, document
    frequencies.

    Example:
        >>> s = TermStats(docs=100, avg_length=12.0, df={"deploy": 3})
        >>> round(idf(s.docs, s.df["deploy"]), 3)
        3.362
    """

    docs: int
    avg_length: float
    df: dict[str, int]


def idf(n_docs: int, df: int) -> float:
    """Lucene's always-positive BM25 idf: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25(query_terms: Sequence[str], docs: Mapping[str, Sequence[str]],
         df: Mapping[str, int], n_docs: int, avg_length: float,
         k1: float = 1.2, b: float = 0.3) -> dict[str, float]:
    """BM25 of each document (its analysed terms) for the query terms; 0 when none match."""
    terms = list(dict.fromkeys(query_terms))
    weights = {t: idf(n_docs, df.get(t, 0)) for t in terms}
    wanted = frozenset(terms)
    avg = avg_length or 1.0
    out: dict[str, float] = {}
    for doc_id, doc_terms in docs.items():
        if not doc_terms or wanted.isdisjoint(doc_terms):
            out[doc_id] = 0.0
            continue
        # only the query's terms are counted (a Counter of every term of every candidate
        # was most of a LoCoMo query's time); same terms, same order, same arithmetic
        norm = k1 * (1 - b + b * len(doc_terms) / avg)
        score = 0.0
        for t in terms:
            f = doc_terms.count(t)
            if f:
                score += weights[t] * f * (k1 + 1) / (f + norm)
        out[doc_id] = score
    return out
