"""The pure scoring functions retrieval uses (ADR 0002)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from graphmem.config import RetrievalConfig, RetrievalWeights
from graphmem.models import Relation, RelationType
from graphmem.rules import scoring

T = datetime(2026, 1, 1, tzinfo=UTC)


def test_seeds_fuse_three_lists_and_keep_weak_vector_hits_only_with_a_keyword() -> None:
    dense = [("a", 0.9), ("weak", 0.1), ("b", 0.8)]
    context = [("b", 0.85), ("weak2", 0.05)]
    keyword = [("weak", 3.0), ("c", 2.0)]
    ordered, top = scoring.seeds(dense, context, keyword, min_similarity=0.3, rrf_k=60,
                                 limit=2)
    # weak2: below the floor and no keyword; weak: admitted by its keyword, in two lists
    assert ordered == ["weak", "b", "a", "c"]
    assert list(top) == ordered[:2] and top[ordered[0]] == 1.0 and 0 < top[ordered[1]] < 1
    assert scoring.seeds([], [], [], 0.3, 60, 5) == ([], {})


def test_follows_shares_relevance_along_session_edges_only() -> None:
    rel = {"a": 1.0, "b": 0.5, "c": 0.2}
    edges = [Relation("a", "b", RelationType.FOLLOWS, "ns", None, T),
             Relation("b", "x", RelationType.FOLLOWS, "ns", None, T),  # x: no candidate
             Relation("a", "c", RelationType.CAUSES, "ns", None, T)]
    got = scoring.follows(rel, edges, ["a", "b", "c"], share=0.1)
    assert got == pytest.approx({"a": 0.05, "b": 0.1, "c": 0.0})
    assert scoring.follows(rel, edges, ["a", "b"], share=0.0) == {"a": 0.0, "b": 0.0}


def test_score_is_relevance_follows_and_the_weighted_terms() -> None:
    w = RetrievalWeights()
    terms = {"relevance": 1.0, "follows": 0.1, "walk": 0.5, "graph": 0.2, "importance": 0.7,
             "recency": 0.9, "popularity": 0.3, "tier": 0.8, "source": 1.0}
    expected = (1.0 + 0.1 + w.walk * 0.5 + w.graph * 0.2 + w.importance * 0.7
                + w.recency * 0.9 + w.popularity * 0.3 + w.tier * 0.8 + w.source * 1.0)
    assert scoring.score(terms, w) == expected  # the same float, summed in the same order
    assert scoring.score(terms, w, scoring.weighted(w)) == expected  # weights read once
    assert set(scoring.WEIGHTED) == set(terms) - {"relevance", "follows"}


def test_relevance_fusion_modes_rank_alike() -> None:
    signals = [{"a": 0.9, "b": 0.1}, {"a": 2.0, "b": 1.0}]
    for mode in ("rrf", "zscore"):
        rc = RetrievalConfig(fusion=mode)
        rel = scoring.relevance(signals, [1.0, 1.0], ["a", "b"], rc)
        assert rel["a"] > rel["b"], mode
