"""Pure score fusion: Reciprocal Rank Fusion and z-score fusion over a candidate set."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def rrf(rankings: Sequence[Sequence[str]], k: int = 60,
        weights: Sequence[float] | None = None) -> dict[str, float]:
    """sum_i w_i / (k + rank_i(d)), rank starting at 1; absent from a ranking adds nothing."""
    if weights is None:
        weights = [1.0] * len(rankings)
    out: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            out[item] = out.get(item, 0.0) + weight / (k + rank)
    return out


def zscores(values: Mapping[str, float], candidates: Sequence[str],
            missing: float = 0.0) -> dict[str, float]:
    """Standardise one signal over the candidates (a constant signal gives all zeros)."""
    xs = [values.get(c, missing) for c in candidates]
    if not xs:
        return {}
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    sd = math.sqrt(var)
    if sd < 1e-12:
        return dict.fromkeys(candidates, 0.0)
    return {c: (x - mean) / sd for c, x in zip(candidates, xs, strict=True)}


def zscore_fuse(signals: Sequence[Mapping[str, float]], weights: Sequence[float],
                candidates: Sequence[str]) -> dict[str, float]:
    """Weighted sum of each signal's z-scores over the candidates."""
    out = dict.fromkeys(candidates, 0.0)
    for signal, weight in zip(signals, weights, strict=True):
        if weight == 0:
            continue
        for c, z in zscores(signal, candidates).items():
            out[c] += weight * z
    return out


def rank_fuse(signals: Sequence[Mapping[str, float]], weights: Sequence[float],
              candidates: Sequence[str], k: int = 60) -> dict[str, float]:
    """RRF over the candidates, each signal ranked by value (zero values are not ranked)."""
    rankings = [sorted((c for c in candidates if s.get(c, 0.0) > 0), key=s.__getitem__,
                       reverse=True) for s in signals]
    fused = rrf(rankings, k=k, weights=weights)
    return {c: fused.get(c, 0.0) for c in candidates}


def normalise_max(values: Mapping[str, float]) -> dict[str, float]:
    """Scale to 0..1 by the maximum (negatives clamp to 0)."""
    top = max(values.values(), default=0.0)
    if top <= 0:
        return dict.fromkeys(values, 0.0)
    return {k: max(0.0, v) / top for k, v in values.items()}
