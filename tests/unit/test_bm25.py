"""BM25 over candidates counts only the query's terms: the scores must equal, bit for bit,
the textbook form that counts every term of every document (the ranking, and so LoCoMo, may
not move)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from graphmem.rules.bm25 import bm25, idf

WORDS = st.sampled_from(["deploy", "fail", "lock", "table", "billing", "refund", "disk"])


def reference(terms: list[str], docs: dict[str, list[str]], df: dict[str, int], n: int,
              avg: float, k1: float, b: float) -> dict[str, float]:
    terms = list(dict.fromkeys(terms))
    weights = {t: idf(n, df.get(t, 0)) for t in terms}
    out = {}
    for doc_id, doc in docs.items():
        tf = Counter(doc)
        norm = k1 * (1 - b + b * len(doc) / (avg or 1.0))
        out[doc_id] = sum(weights[t] * tf[t] * (k1 + 1) / (tf[t] + norm)
                          for t in terms if t in tf) if doc else 0.0
    return out


@given(terms=st.lists(WORDS, max_size=6),
       docs=st.dictionaries(st.text("abc", min_size=1, max_size=3), st.lists(WORDS, max_size=12),
                            max_size=8),
       k1=st.floats(0.1, 3.0), b=st.floats(0.0, 1.0))
def test_bm25_equals_the_textbook_form(terms: list[str], docs: dict[str, list[str]],
                                       k1: float, b: float) -> None:
    df = Counter(t for d in docs.values() for t in set(d))
    n = max(1, len(docs))
    avg = sum(map(len, docs.values())) / n
    assert bm25(terms, docs, df, n, avg, k1=k1, b=b) == reference(terms, docs, df, n, avg, k1, b)


def test_a_document_without_query_terms_scores_zero() -> None:
    got = bm25(["deploy"], {"a": ["deploy", "fail"], "b": ["lunch"], "c": []}, {"deploy": 1},
               3, 1.0)
    assert got["b"] == got["c"] == 0.0 and got["a"] > 0
