"""Pure BM25 over pre-analysed keyword fields, with collection statistics from the store.

The store's full-text index finds keyword *seeds*; the keyword terms of the rerank are computed
here so that k1 and b are configuration (k1 1.2, b 0.3 measured best on LoCoMo, ADR 0002) and
every backend scores alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def idf(n_docs: int, df: int) -> float:
    """Lucene's always-positive BM25 idf: ln(1 + (N - df + 0.5) / (df + 0.5)).

    Example:
        >>> round(idf(100, 3), 3)
        3.362
    """
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
