"""Retrieval's arithmetic, pure: the seed fusion, the relevance of each candidate, the session
(FOLLOWS) share and the final weighted score (ADR 0002). ``retrieval.py`` gathers the
inputs from the store and calls these; nothing here reads a store or a clock."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from graphmem.config import RetrievalConfig, RetrievalWeights
from graphmem.models import Relation, RelationType
from graphmem.rules import fusion

Hits = Sequence[tuple[str, float]]


def seeds(dense: Hits, context: Hits, keyword: Hits, min_similarity: float, rrf_k: int,
          limit: int) -> tuple[list[str], dict[str, float]]:
    """Every seed candidate in fused order (reciprocal rank fusion of the vector, keyword and
    context lists; a vector hit below ``min_similarity`` only counts when the keyword list
    has it too), and the best ``limit`` with their fused score over the best one's."""
    best_sim: dict[str, float] = {}
    for id_, s in [*dense, *context]:
        best_sim[id_] = max(s, best_sim.get(id_, -1.0))
    matched = {id_ for id_, _ in keyword}

    def admitted(i: str) -> bool:
        return i in matched or best_sim.get(i, -1.0) >= min_similarity

    rank = fusion.rrf([[i for i, _ in dense if admitted(i)], [i for i, _ in keyword],
                       [i for i, _ in context if admitted(i)]], k=rrf_k)
    if not rank:
        return [], {}
    ordered = sorted(rank, key=lambda i: -rank[i])
    top = rank[ordered[0]]
    return ordered, {i: rank[i] / top for i in ordered[:limit]}


def relevance(signals: Sequence[Mapping[str, float]], weights: Sequence[float],
              cands: Sequence[str], rc: RetrievalConfig) -> dict[str, float]:
    """The candidates' fused relevance: z-scores (``fusion="zscore"``) or weighted reciprocal
    ranks scaled by 60 (so both live on a comparable scale)."""
    if rc.fusion == "zscore":
        return fusion.zscore_fuse(list(signals), list(weights), list(cands))
    return {i: s * 60 for i, s in fusion.rank_fuse(list(signals), list(weights), list(cands),
                                                   k=rc.rrf_k).items()}


def follows(relevance: Mapping[str, float], edges: Iterable[Relation], cands: Iterable[str],
            share: float) -> dict[str, float]:
    """A candidate's share of its session neighbours' relevance (FOLLOWS edges between two
    candidates, both ways)."""
    cand_set = set(cands)
    out = dict.fromkeys(cand_set, 0.0)
    if share <= 0:
        return out
    for e in edges:
        if e.type is RelationType.FOLLOWS and e.source_id in cand_set \
                and e.target_id in cand_set:
            out[e.source_id] += share * relevance[e.target_id]
            out[e.target_id] += share * relevance[e.source_id]
    return out


#: the score terms added with a weight, each named as its weight in ``RetrievalWeights``
WEIGHTED = ("walk", "graph", "importance", "recency", "popularity", "tier", "source")


def weighted(w: RetrievalWeights) -> list[tuple[str, float]]:
    """The weighted terms' names and weights, in ``score``'s order: a ranking that scores a
    hundred candidates reads the weights once."""
    return [(name, getattr(w, name)) for name in WEIGHTED]


def score(terms: Mapping[str, float], w: RetrievalWeights,
          pairs: list[tuple[str, float]] | None = None) -> float:
    """relevance + follows + the weighted walk, graph, importance, recency, popularity, tier
    and source terms (``pairs``: ``weighted(w)``, when the caller has it)."""
    total = terms["relevance"] + terms["follows"]
    for name, weight in pairs if pairs is not None else weighted(w):
        total += weight * terms[name]  # left to right, as ADR 0002 writes it
    return total
