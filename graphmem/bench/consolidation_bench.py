"""Consolidation time and peak memory for N old candidates (synthetic topics, seeded vectors
clustered around topic centres so HDBSCAN has structure to find)."""

from __future__ import annotations

import hashlib
import resource
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from graphmem import GraphMemory
from graphmem.bench import synthetic

_SUBJECTS = tuple(x.lower() for x in synthetic.SUBJECTS)
_VERBS = tuple(synthetic.VERBS)


def _topic(text: str) -> str:
    """The first synthetic subject and the verb after it (a summary, which quotes its
    members' sentences after a list of key phrases, has its members' topic); another text:
    its first five words."""
    low = text.lower()
    hits = [(low.find(s), s) for s in _SUBJECTS if s in low]
    if hits:
        at, subject = min(hits)
        rest = low[at + len(subject):]
        verbs = [(rest.find(v), v) for v in _VERBS if v in rest]
        if verbs:
            return f"{subject} {min(verbs)[1]}"
    return " ".join(text.split()[:5])


class TopicEmbedder:
    """Texts of one synthetic subject+object share a centre: vectors cluster by topic. A
    function of the text (seeded by its hash), as a model is: embedding it again gives the
    same vector (ADR 0025 compares them).

    Example:
        >>> e = TopicEmbedder()
        >>> e.embed(["a", "b"]).shape, bool(np.array_equal(e.embed(["a"]), e.embed(["a"])))
        ((2, 384), True)
    """

    dim = 384

    def __init__(self) -> None:
        self.centres: dict[str, np.ndarray] = {}

    @staticmethod
    def _rng(text: str) -> np.random.Generator:
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        return np.random.default_rng(int.from_bytes(digest, "little"))

    def embed(self, texts: Any) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            topic = _topic(t)
            c = self.centres.get(topic)
            if c is None:
                c = self.centres[topic] = self._rng("topic:" + topic).standard_normal(self.dim)
            v = c + 0.35 * self._rng(t).standard_normal(self.dim)
            out[i] = v / np.linalg.norm(v)
        return out


def run_consolidation_bench(n: int, progress: Any = print) -> dict[str, Any]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    now = [start]
    with tempfile.TemporaryDirectory() as tmp, \
            GraphMemory.open(Path(tmp), embedder=TopicEmbedder(), clock=lambda: now[0]) as m:
        progress(f"storing {n} memories ...")
        records = synthetic.records(n)
        for r in records:
            r["importance"] = 0.3
            r.pop("session_id")  # no FOLLOWS chains: clusters are about topics here
        for i in range(0, n, 2000):
            m.store_many(records[i:i + 2000], namespace="bench")
        last: datetime = max(r["created_at"] for r in records)  # type: ignore[type-var,assignment]
        now[0] = last + timedelta(days=31)  # every stored memory is old enough
        progress("consolidating ...")
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        run = m.consolidate(namespace="bench")
        seconds = time.perf_counter() - t0
        r = run.report
    return {"n": n, "seconds": round(seconds, 1), "status": run.status,
            "candidates": r["candidates"], "clusters": r["clusters"],
            "summaries": r["summaries"], "archived": r["archived"],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "peak_rss_before_mb": round(rss_before, 1)}
