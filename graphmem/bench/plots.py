"""Plots for docs/BENCHMARKS.md from the JSON in bench/results (``graphmem bench plots``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _load(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


def _save(fig: Any, ax: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def make_plots(results: Path, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    locomo = _load(results / "locomo.json")
    if locomo:
        fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
        ks = locomo["ks"]
        for name, res in locomo["systems"].items():
            ax.plot(ks, [res["overall"][f"recall@{k}"] for k in ks], marker="o", label=name)
        ax.set(title="LoCoMo recall@k (categories 1-4)", xlabel="k", ylabel="recall",
               ylim=(0, 1))
        written.append(_save(fig, ax, out / "locomo-recall-at-k.png"))
    sizes = [r for r in (_load(results / "scale-10k.json"),
                         _load(results / "scale-100k-random.json")) if r]
    if sizes:
        fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
        for depth in ("depth_0", "depth_1", "depth_2"):
            ax.plot([r["n"] for r in sizes],
                    [r["retrieve"][depth]["without_query_embedding"]["p95_ms"] for r in sizes],
                    marker="o", label=f"{depth.replace('_', ' ')} p95")
        ax.set(title="Retrieve latency vs store size (no query embedding)",
               xlabel="memories", ylabel="ms", xscale="log")
        written.append(_save(fig, ax, out / "latency-vs-size.png"))
    return written
