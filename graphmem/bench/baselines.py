"""The LoCoMo baselines, on the same embeddings graphmem uses: dense cosine, BM25 (Okapi over
lowercase word tokens, as rank_bm25 scores it) and hybrid RRF(dense, BM25) with k = 60."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from graphmem.rules.fusion import rrf

_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class OkapiBM25:
    """rank_bm25's BM25Okapi: k1 1.5, b 0.75, negative idf floored at epsilon x mean idf.

    Example:
        >>> bm = OkapiBM25([["deploy", "fail"], ["lunch"], ["deploy"]])
        >>> int(bm.scores(["lunch"]).argmax())
        1
    """

    def __init__(self, docs: Sequence[list[str]], k1: float = 1.5, b: float = 0.75,
                 epsilon: float = 0.25) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(d) for d in docs]
        self.len = np.array([len(d) for d in docs], dtype=np.float64)
        self.avg = float(self.len.mean()) if len(docs) else 0.0
        df: Counter[str] = Counter()
        for d in docs:
            df.update(set(d))
        n = len(docs)
        self.idf = {t: math.log(n - f + 0.5) - math.log(f + 0.5) for t, f in df.items()}
        mean = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0
        floor = epsilon * mean
        self.idf = {t: (v if v >= 0 else floor) for t, v in self.idf.items()}

    def scores(self, query: list[str]) -> np.ndarray:
        out = np.zeros(len(self.tf))
        norm = self.k1 * (1 - self.b + self.b * self.len / (self.avg or 1.0))
        for q in query:
            idf = self.idf.get(q)
            if idf is None:
                continue
            f = np.array([tf.get(q, 0) for tf in self.tf], dtype=np.float64)
            out += idf * f * (self.k1 + 1) / (f + norm)
        return out


def rank(scores: np.ndarray, ids: Sequence[str], k: int) -> list[str]:
    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[i] for i in order]


def hybrid(dense: list[str], keyword: list[str], k: int, rrf_k: int = 60) -> list[str]:
    fused = rrf([dense, keyword], k=rrf_k)
    return sorted(fused, key=lambda i: -fused[i])[:k]
