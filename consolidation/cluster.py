"""Pure clustering: HDBSCAN on normalised embeddings, split by time window, coherence."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

#: above this many candidates HDBSCAN runs on a PCA projection (tree indexes work in few
#: dimensions; in 384 they degrade to all pairs)
PCA_ABOVE = 3000
PCA_DIMS = 32
#: the coherent pass links at most this many memories at once (its distances are all pairs)
LINK_AT_MOST = 2000
#: a HDBSCAN group less coherent than this (mean cosine) is clustered again on its own
SPLIT_BELOW = 0.4


def hdbscan_groups(vectors: np.ndarray, idx: list[int], min_cluster_size: int,
                   min_samples: int) -> list[list[int]]:
    """HDBSCAN's clusters of ``vectors[idx]`` (noise left out), as lists of ``idx``'s items.
    On unit vectors euclidean distance orders as cosine.

    ``allow_single_cluster`` stays off: with it HDBSCAN's excess-of-mass selection prefers the
    root, and memories on clearly separate topics come back as one cluster; without it they
    separate (ADR 0006's numbers). A namespace that really is about one
    thing is caught by ``clusters``' coherent-whole fallback instead."""
    n = len(idx)
    if n < max(min_cluster_size, 2) + 1:
        return []
    from sklearn.cluster import HDBSCAN

    points = vectors[idx]
    if n > PCA_ABOVE and points.shape[1] > PCA_DIMS:
        from sklearn.decomposition import PCA

        points = PCA(n_components=PCA_DIMS, random_state=0).fit_transform(points)

    model = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=min(min_samples, n - 1),
                    metric="euclidean", allow_single_cluster=False, copy=True)
    labels = model.fit_predict(np.asarray(points, dtype=np.float64))
    return [[idx[int(i)] for i in np.flatnonzero(labels == label)]
            for label in sorted(set(labels.tolist()) - {-1})]


def split_by_window(indices: list[int], times: list[datetime], window: timedelta
                    ) -> list[list[int]]:
    """Split a cluster (indices into ``times``) so no part spans more than ``window``."""
    ordered = sorted(indices, key=lambda i: (times[i], i))
    parts: list[list[int]] = []
    for i in ordered:
        if parts and times[i] - times[parts[-1][0]] <= window:
            parts[-1].append(i)
        else:
            parts.append([i])
    return parts


def coherence(vectors: np.ndarray) -> float:
    """Mean pairwise cosine of unit vectors (1.0 for a single vector)."""
    n = len(vectors)
    if n < 2:
        return 1.0
    sims = vectors @ vectors.T
    return float((sims.sum() - np.trace(sims)) / (n * (n - 1)))


def coherent_parts(vectors: np.ndarray, idx: list[int], threshold: float,
                   min_size: int) -> list[list[int]]:
    """The coherent groups inside ``idx``: average-linkage agglomeration that merges two
    groups only while their mean cross cosine reaches ``threshold``, so every part's mean
    pairwise cosine does too (ADR 0059); parts smaller than ``min_size`` are left out.

    Example:
        >>> import numpy as np
        >>> v = np.array([[1, 0], [0.99, 0.14], [0.98, 0.2], [0, 1], [0.1, 0.99]], "f4")
        >>> v /= np.linalg.norm(v, axis=1, keepdims=True)
        >>> coherent_parts(v, [0, 1, 2, 3, 4], 0.7, 3)
        [[0, 1, 2]]
    """
    if len(idx) < min_size:
        return []
    if coherence(vectors[idx]) >= threshold:
        return [list(idx)]
    from sklearn.cluster import AgglomerativeClustering

    out: list[list[int]] = []
    for start in range(0, len(idx), LINK_AT_MOST):  # chunks in the caller's (time) order
        chunk = idx[start:start + LINK_AT_MOST]
        if len(chunk) < min_size:
            continue
        labels = AgglomerativeClustering(
            n_clusters=None, metric="cosine", linkage="average",
            distance_threshold=1.0 - threshold).fit_predict(vectors[chunk])
        out.extend(part for label in sorted(set(labels.tolist()))
                   if len(part := [chunk[int(i)] for i in np.flatnonzero(labels == label)])
                   >= min_size)
    return sorted(out)


def clusters(vectors: np.ndarray, times: list[datetime], *, min_cluster_size: int,
             window: timedelta, min_samples: int = 2, whole_coherence: float = 0.7,
             coherent: float | None = None) -> list[list[int]]:
    """Temporal clusters: HDBSCAN's topical groups, each split by the time window; parts
    smaller than ``min_cluster_size`` are left out (they stay as they are). When HDBSCAN finds
    no structure but the candidates are coherent as a whole (mean cosine >= ``whole_coherence``)
    they form one group. With ``coherent``, then made fit for summaries (``refine``)."""
    groups = _refined(vectors, list(range(len(vectors))), min_cluster_size, min_samples)
    if not groups and len(vectors) >= min_cluster_size and \
            coherence(vectors) >= whole_coherence:
        groups = [list(range(len(vectors)))]
    out: list[list[int]] = []
    for members in groups:
        out.extend(part for part in split_by_window(members, times, window)
                   if len(part) >= min_cluster_size)
    if coherent is None:
        return out
    return refine(vectors, times, out, min_cluster_size=min_cluster_size, window=window,
                  threshold=coherent)


def refine(vectors: np.ndarray, times: list[datetime], groups: list[list[int]], *,
           min_cluster_size: int, window: timedelta, threshold: float) -> list[list[int]]:
    """HDBSCAN's groups made fit for summaries (ADR 0059): a loose group (mean cosine below
    ``threshold``) gives its coherent parts and, when still large enough, the loose rest; the
    memories in no group (HDBSCAN's noise) give the coherent parts found within each time
    window. On conversations HDBSCAN alone leaves most turns in no coherent group; this pass
    finds several times more (ADR 0059's numbers)."""
    out: list[list[int]] = []
    for g in groups:
        if coherence(vectors[g]) >= threshold:
            out.append(g)
            continue
        parts = coherent_parts(vectors, g, threshold, min_cluster_size)
        taken = {i for p in parts for i in p}
        rest = [i for i in g if i not in taken]
        out.extend(parts)
        if len(rest) >= min_cluster_size:
            out.append(rest)
    grouped = {i for g in groups for i in g}
    noise = [i for i in range(len(vectors)) if i not in grouped]
    for part in split_by_window(noise, times, window):
        out.extend(coherent_parts(vectors, part, threshold, min_cluster_size))
    return sorted(out)


def _refined(vectors: np.ndarray, idx: list[int], min_cluster_size: int, min_samples: int
             ) -> list[list[int]]:
    """HDBSCAN's groups; a group that is not coherent (mean cosine below ``SPLIT_BELOW``) and
    large enough is clustered again on its own, and replaced by its parts when it splits.
    Small topics merge at the top level; this pass separates them (ADR 0006's numbers)."""
    out: list[list[int]] = []
    todo = hdbscan_groups(vectors, idx, min_cluster_size, min_samples)
    rounds = 0
    while todo:
        g = todo.pop()
        if rounds < 32 and len(g) >= 2 * min_cluster_size and \
                coherence(vectors[g]) < SPLIT_BELOW:
            rounds += 1
            parts = hdbscan_groups(vectors, g, min_cluster_size, min_samples)
            if len(parts) >= 2:
                todo.extend(parts)
                continue
        out.append(g)
    return sorted(out)

