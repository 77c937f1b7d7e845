from datetime import UTC, datetime

import networkx as nx
import pytest

from graphmem.config import RetrievalConfig
from graphmem.engine.walk import bounded_walk, personalised_pagerank, propagate
from graphmem.models import Relation, RelationType

T0 = datetime(2026, 1, 1, tzinfo=UTC)
W = RetrievalConfig().edge_weights


def rel(a: str, b: str, t: RelationType = RelationType.CAUSES,
        score: float | None = None) -> Relation:
    return Relation(a, b, t, "ns", score, T0)


# a -CAUSES-> b -REFERENCES-> c -CAUSES-> d ; a <-SIMILAR_TO(0.5)- e
EDGES = [rel("a", "b"), rel("b", "c", RelationType.REFERENCES), rel("c", "d"),
         rel("e", "a", RelationType.SIMILAR_TO, 0.5)]


def test_depth_bounds_the_walk() -> None:
    assert set(bounded_walk({"a": 1.0}, EDGES, 0, W)) == {"a"}
    assert set(bounded_walk({"a": 1.0}, EDGES, 1, W)) == {"a", "b", "e"}
    assert set(bounded_walk({"a": 1.0}, EDGES, 2, W)) == {"a", "b", "e", "c"}


def test_walk_scores_and_paths() -> None:
    got = bounded_walk({"a": 1.0}, EDGES, 2, W, hop_decay=0.8)
    assert got["a"].path.is_seed and str(got["a"].path) == "seed"
    assert got["b"].score == pytest.approx(0.9 * 0.8)
    assert got["c"].score == pytest.approx(0.9 * 0.8 * 0.8 * 0.8)
    assert str(got["c"].path) == "seed a -[CAUSES]-> b -[REFERENCES]-> c"
    # incoming edge walked backwards, SIMILAR_TO weighted by its score
    assert got["e"].score == pytest.approx(0.6 * 0.5 * 0.8)
    assert str(got["e"].path) == "seed a <-[SIMILAR_TO]- e"


def test_best_path_wins_and_zero_weight_is_not_walked() -> None:
    edges = [*EDGES, rel("a", "c", RelationType.CAUSES)]
    got = bounded_walk({"a": 1.0}, edges, 2, W)
    assert got["c"].hops == 1
    none = bounded_walk({"a": 1.0}, EDGES, 2, {RelationType.CAUSES: 0.0})
    assert set(none) == {"a"}


def test_max_nodes_caps_the_walk() -> None:
    star = [rel("hub", f"n{i}") for i in range(50)]
    got = bounded_walk({"hub": 1.0}, star, 1, W, max_nodes=10)
    assert len(got) == 10


def test_propagate_takes_best_from_others_never_from_itself() -> None:
    got = propagate({"a": 2.0, "b": -1.0, "c": 0.5, "d": 0.0, "e": 0.0}, EDGES, 2, W,
                    hop_decay=1.0)
    assert got["b"] == pytest.approx(2.0 * 0.9)  # from a; b's own negative spreads nothing
    assert got["a"] == pytest.approx(0.5 * 0.8 * 0.9)  # from c via b, not an echo of itself
    assert got["d"] == pytest.approx(0.5 * 0.9)
    skipped = propagate({"a": 1.0, "b": 0.0}, EDGES, 1, W, skip=(RelationType.CAUSES,))
    assert skipped["b"] == 0.0


def test_personalised_pagerank_matches_networkx() -> None:
    nodes = ["a", "b", "c", "d", "e"]
    pers = {"a": 1.0, "c": 0.5}
    ours = personalised_pagerank(nodes, EDGES, pers, W, alpha=0.85, iterations=200,
                                 tol=1e-12)
    g = nx.Graph()
    g.add_nodes_from(nodes)
    for e in EDGES:
        w = W[e.type] * (e.score if e.score is not None else 1.0)
        g.add_edge(e.source_id, e.target_id, weight=w)
    ref = nx.pagerank(g, alpha=0.85, personalization=pers, weight="weight", tol=1e-10,
                      max_iter=1000)
    for n in nodes:
        assert ours[n] == pytest.approx(ref[n], abs=1e-6)
    assert ours["a"] > ours["d"]
