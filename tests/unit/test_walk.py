from datetime import UTC, datetime

import networkx as nx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

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


@settings(max_examples=150, deadline=None)
@example(3, [(0, 1, RelationType.CAUSES, None), (0, 1, RelationType.CAUSES, None),
             (0, 2, RelationType.CAUSES, None)], {0: 1.0})  # parallel edges from a hub
@given(st.integers(1, 6), st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6),
                                             st.sampled_from(list(RelationType)),
                                             st.none() | st.floats(0.0, 1.0).map(
                                                 # networkx's reference overflows on weights
                                                 # near the smallest float (1 / w)
                                                 lambda s: s if s > 1e-9 else 0.0)),
                                   max_size=25),
       st.dictionaries(st.integers(0, 6), st.floats(0.0, 1.0), max_size=4))
def test_personalised_pagerank_matches_networkx_with_dangling_nodes_and_parallel_edges(
        n: int, raw: list[tuple[int, int, RelationType, float | None]],
        seeds: dict[int, float]) -> None:
    """Random subgraphs: nodes without (weighted) edges return their mass through the
    seeds, parallel edges add up, edges to nodes outside the subgraph are left out."""
    nodes = [f"m{i}" for i in range(n)]
    edges = [rel(f"m{a}", f"m{b}", t, s) for a, b, t, s in raw]
    pers = {f"m{i}": v for i, v in seeds.items()}
    ours = personalised_pagerank(nodes, edges, pers, W, iterations=500, tol=1e-13)
    g = nx.Graph()
    g.add_nodes_from(nodes)
    for e in edges:
        w = W[e.type] * (max(0.0, e.score) if e.type is RelationType.SIMILAR_TO
                         and e.score is not None else 1.0)
        if e.source_id in g and e.target_id in g and e.source_id != e.target_id and w > 0:
            old = g.get_edge_data(e.source_id, e.target_id, {"weight": 0.0})["weight"]
            g.add_edge(e.source_id, e.target_id, weight=old + w)
    restart = {k: v for k, v in pers.items() if k in g and v > 0} or None
    ref = nx.pagerank(g, alpha=0.85, personalization=restart, weight="weight", tol=1e-12,
                      max_iter=2000)
    for node in nodes:
        assert ours[node] == pytest.approx(ref[node], abs=1e-6)
