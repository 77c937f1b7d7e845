"""Pure graph logic: the bounded typed walk from seeds, and personalised PageRank.

Both take plain edges; the store only supplies the neighbourhood (``MemoryStore.neighbourhood``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from graphmem.models import PathStep, Relation, RelationType, WalkPath


@dataclass(slots=True)
class Reached:
    """A memory the walk reached: the score it carries there, the path, and the hops taken.

    Example:
        >>> from graphmem.models import WalkPath
        >>> Reached(0.8, WalkPath(("m1",)), 0).path.is_seed
        True
    """

    score: float
    path: WalkPath
    hops: int


def edge_weight(edge: Relation, weights: Mapping[RelationType, float]) -> float:
    w = weights.get(edge.type, 0.0)
    if edge.type is RelationType.SIMILAR_TO and edge.score is not None:
        w *= max(0.0, edge.score)
    return w


def adjacency(edges: Iterable[Relation]) -> dict[str, list[tuple[str, Relation, bool]]]:
    """node -> [(other end, edge, outgoing?)] in both directions."""
    adj: dict[str, list[tuple[str, Relation, bool]]] = {}
    for e in edges:
        adj.setdefault(e.source_id, []).append((e.target_id, e, True))
        adj.setdefault(e.target_id, []).append((e.source_id, e, False))
    return adj


def bounded_walk(
    seeds: Mapping[str, float],
    edges: Iterable[Relation],
    depth: int,
    weights: Mapping[RelationType, float],
    hop_decay: float = 0.8,
    max_nodes: int = 1000,
) -> dict[str, Reached]:
    """Best-scoring path to every node within ``depth`` hops of a seed.

    A node's walk score is the best over paths of ``seed score x product(edge weight) x
    hop_decay ** hops``; a seed keeps its own score and the path ``seed``. Edge types weighted 0
    are not walked. At most ``max_nodes`` nodes are reached (best scores first per layer).
    """
    best: dict[str, Reached] = {
        s: Reached(score, WalkPath(nodes=(s,)), 0) for s, score in seeds.items()
    }
    if depth <= 0:
        return best
    adj = adjacency(edges)
    frontier = dict(best)
    for hop in range(1, depth + 1):
        layer: dict[str, Reached] = {}
        for node, reached in frontier.items():
            for other, edge, outgoing in adj.get(node, ()):
                w = edge_weight(edge, weights)
                if w <= 0:
                    continue
                score = reached.score * w * hop_decay
                known = best.get(other) or layer.get(other)
                if known is not None and known.score >= score:
                    continue
                path = WalkPath(
                    nodes=(*reached.path.nodes, other),
                    steps=(*reached.path.steps, PathStep(edge.type, outgoing)),
                )
                layer[other] = Reached(score, path, hop)
        room = max_nodes - len(best)
        if room <= 0:
            break
        ranked = sorted(layer.items(), key=lambda kv: -kv[1].score)
        accepted: dict[str, Reached] = {}
        for node, reached in ranked:
            if node in best or len(accepted) < room:
                accepted[node] = reached
        best.update(accepted)
        frontier = accepted
        if not frontier:
            break
    return best


def personalised_pagerank(
    nodes: list[str],
    edges: Iterable[Relation],
    personalisation: Mapping[str, float],
    weights: Mapping[RelationType, float],
    alpha: float = 0.85,
    iterations: int = 30,
    tol: float = 1e-8,
) -> dict[str, float]:
    """PageRank on the undirected weighted subgraph, restarting at the seeds.

    Dangling nodes return their mass to the personalisation vector. Numpy power iteration
    (equivalent to ``networkx.pagerank(personalization=...)``, measured faster on the ~100-node
    subgraphs a retrieval walks). A step is one matrix product and one addition.
    """
    n = len(nodes)
    if n == 0:
        return {}
    index = {node: i for i, node in enumerate(nodes)}
    get = index.get
    ends: list[tuple[int, int]] = []
    strengths: list[float] = []
    for e in edges:
        i, j = get(e.source_id), get(e.target_id)
        if i is None or j is None or i == j:
            continue
        ew = edge_weight(e, weights)
        if ew > 0:
            ends.append((i, j))
            strengths.append(ew)
    w = np.zeros((n, n), dtype=np.float64)
    if ends:
        pairs = np.array(ends, dtype=np.intp)
        ws = np.array(strengths, dtype=np.float64)
        np.add.at(w, (pairs[:, 0], pairs[:, 1]), ws)
        np.add.at(w, (pairs[:, 1], pairs[:, 0]), ws)
    p = np.array([max(0.0, personalisation.get(node, 0.0)) for node in nodes])
    if p.sum() <= 0:
        p = np.ones(n)
    p /= p.sum()
    out_deg = w.sum(axis=1)
    dangling = out_deg == 0
    trans = np.divide(w, out_deg[:, None], out=np.zeros_like(w), where=out_deg[:, None] > 0)
    # one step, r -> alpha * (r @ trans + (mass on dangling nodes) * p) + (1 - alpha) * p,
    # as one product: the dangling rows of ``step`` hand their mass to p
    step = alpha * trans
    step[dangling] += alpha * p
    restart = (1 - alpha) * p
    r = p.copy()
    for _ in range(iterations):
        r, last = r @ step + restart, r
        if np.abs(r - last).sum() < tol:
            break
    return dict(zip(nodes, r.tolist(), strict=True))


def propagate(
    scores: Mapping[str, float],
    edges: Iterable[Relation],
    depth: int,
    weights: Mapping[RelationType, float],
    hop_decay: float = 0.8,
    skip: Collection[RelationType] = (),
) -> dict[str, float]:
    """The best score a node receives from *another* node within ``depth`` hops.

    ``received(x) = max over paths n -> .. -> x of scores[n] x product(edge weight) x
    hop_decay ** hops``, over edges in both directions, never counting a path that starts at
    ``x`` itself. Negative scores spread nothing. Pure; used for the ``walk`` rerank term.
    """
    adj = adjacency(e for e in edges if e.type not in skip)
    # per node, the two best (value, origin) of paths of the current length, with distinct
    # origins: enough to always have one that did not start at the node it reaches next
    current: dict[str, list[tuple[float, str]]] = {
        n: [(s, n)] for n, s in scores.items() if s > 0
    }
    received: dict[str, float] = dict.fromkeys(scores, 0.0)
    for _ in range(max(0, depth)):
        nxt: dict[str, list[tuple[float, str]]] = {}
        for node, offers in current.items():
            for other, edge, _outgoing in adj.get(node, ()):
                w = edge_weight(edge, weights)
                if w <= 0:
                    continue
                for value, origin in offers:
                    if origin != other:
                        _offer(nxt.setdefault(other, []), value * w * hop_decay, origin)
        for node, offers in nxt.items():
            if node in received and offers[0][0] > received[node]:
                received[node] = offers[0][0]
        current = nxt
    return received


def _offer(best: list[tuple[float, str]], value: float, origin: str) -> None:
    """Keep the two best offers with distinct origins, best first."""
    for i, (v, o) in enumerate(best):
        if o == origin:
            if value > v:
                best[i] = (value, origin)
                best.sort(key=lambda x: -x[0])
            return
    best.append((value, origin))
    best.sort(key=lambda x: -x[0])
    del best[2:]
