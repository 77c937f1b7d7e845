"""Pure clustering: HDBSCAN on normalised embeddings, split by time window, coherence."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

#: above this many candidates HDBSCAN runs on a PCA projection (tree indexes work in few
#: dimensions; in 384 they degrade to all pairs)
PCA_ABOVE = 3000
PCA_DIMS = 32


def hdbscan_labels(vectors: np.ndarray, min_cluster_size: int) -> np.ndarray:
    """Cluster labels (-1 = noise). On unit vectors euclidean distance orders as cosine."""
    n = len(vectors)
    if n < min_cluster_size:
        return np.full(n, -1)
    from sklearn.cluster import HDBSCAN

    if n > PCA_ABOVE and vectors.shape[1] > PCA_DIMS:
        from sklearn.decomposition import PCA

        vectors = PCA(n_components=PCA_DIMS, random_state=0).fit_transform(vectors)

    # allow_single_cluster: old memories that are all about one thing form one cluster
    model = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=1, metric="euclidean",
                    allow_single_cluster=True,
                    copy=True)
    return np.asarray(model.fit_predict(np.asarray(vectors, dtype=np.float64)))


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


def clusters(vectors: np.ndarray, times: list[datetime], *, min_cluster_size: int,
             window: timedelta) -> list[list[int]]:
    """Temporal clusters: HDBSCAN groups, each split by the time window; parts smaller than
    two members are left out (they stay as they are)."""
    labels = hdbscan_labels(vectors, min_cluster_size)
    out: list[list[int]] = []
    for label in sorted(set(labels.tolist()) - {-1}):
        members = [int(i) for i in np.flatnonzero(labels == label)]
        out.extend(part for part in split_by_window(members, times, window) if len(part) >= 2)
    return out
