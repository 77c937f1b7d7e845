"""Leave-one-conversation-out tuning of the retrieval weights on LoCoMo-format data.

Ingests the conversations once, scores every candidate configuration on every conversation
(R@10 and MRR per question), then for each conversation picks the configuration best on the
*other* conversations and reports it on the held-out one: the estimate of how the chosen
defaults do on conversations the tuning never saw. ``graphmem bench tune-locomo``.
"""

from __future__ import annotations

import itertools
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphmem import GraphMemory
from graphmem.bench.locomo import CachedEmbedder, conversations, ingest
from graphmem.config import GraphMemConfig, RetrievalConfig

GRID: dict[str, tuple[Any, ...]] = {
    "weights.keyword": (0.35, 0.5, 0.7),
    "weights.context_semantic": (0.15, 0.25, 0.4),
    "weights.context_keyword": (0.15, 0.25, 0.4),
    "follows_share": (0.2, 0.3, 0.4),
    "weights.source": (0.3, 0.6),
    "seeds": (20, 40),
}


def variant(changes: dict[str, Any]) -> RetrievalConfig:
    base = RetrievalConfig()
    weights = {k.split(".", 1)[1]: v for k, v in changes.items() if k.startswith("weights.")}
    plain = {k: v for k, v in changes.items() if not k.startswith("weights.")}
    return base.model_copy(update={"weights": base.weights.model_copy(update=weights),
                                   **plain})


def candidates(samples: int = 60, seed: int = 0) -> list[dict[str, Any]]:
    keys = list(GRID)
    every = [dict(zip(keys, values, strict=True))
             for values in itertools.product(*(GRID[k] for k in keys))]
    return [{}, *random.Random(seed).sample(every, min(samples, len(every)))]


def score_all(folder: Path, configs: list[dict[str, Any]], *, embedder: Any = None,
              progress: Callable[[str], None] = print) -> dict[int, dict[str, list[float]]]:
    """config index -> conversation -> recall@10 of each scored question."""
    from graphmem.engine.embedding import make_embedder

    convs = conversations(folder)
    emb = CachedEmbedder(embedder or make_embedder())
    out: dict[int, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with GraphMemory.open(data, embedder=emb) as mem:
            maps = {c.name: ingest(mem, c) for c in convs}
        for i, changes in enumerate(configs):
            cfg = GraphMemConfig(retrieval=variant(changes))
            with GraphMemory.open(data, embedder=emb, config=cfg) as mem:
                out[i] = {}
                for c in convs:
                    rows = []
                    for qa in c.questions:
                        if not qa["evidence"] or qa["category"] == 5:
                            continue
                        hits = mem.search_index(qa["question"], namespace=c.name, limit=10)
                        got = {maps[c.name][h.id] for h in hits}
                        rows.append(len(got & set(qa["evidence"])) / len(qa["evidence"]))
                    out[i][c.name] = rows
            progress(f"config {i}/{len(configs) - 1}: R@10 {mean(out[i]):.4f} {changes}")
    return out


def mean(per_conv: dict[str, list[float]], skip: str | None = None) -> float:
    rows = [x for name, xs in per_conv.items() if name != skip for x in xs]
    return sum(rows) / len(rows) if rows else 0.0


def leave_one_out(scores: dict[int, dict[str, list[float]]]) -> dict[str, Any]:
    """Per held-out conversation: the config best on the others, and its held-out recall."""
    convs = sorted(next(iter(scores.values())))
    folds, held = {}, []
    for name in convs:
        best = max(scores, key=lambda i: (mean(scores[i], skip=name), -i))
        held.extend(scores[best][name])
        folds[name] = {"config": best, "held_out_recall@10": round(mean(
            {name: scores[best][name]}), 4)}
    overall = max(scores, key=lambda i: (mean(scores[i]), -i))
    return {"folds": folds, "loo_recall@10": round(sum(held) / len(held), 4),
            "best_overall": overall, "best_overall_recall@10": round(mean(scores[overall]), 4),
            "defaults_recall@10": round(mean(scores[0]), 4)}
