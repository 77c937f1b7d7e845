"""Plots for docs/BENCHMARKS.md from the JSON in bench/results (``graphmem bench plots``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: the scale runs drawn as curves against n: bench/results file names per series
SERIES = {
    "random vectors (query not embedded)": (
        "scale-10k-random-sqlite.json", "scale-100k-random.json", "scale-1m-random.json"),
    "MiniLM": ("scale-10k.json", "scale-100k-real.json", "scale-1m-real.json"),
}


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
    series = {name: sorted((r for r in (_load(results / f) for f in files) if r),
                           key=lambda r: r["n"])
              for name, files in SERIES.items()}
    if any(series.values()):
        fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
        top = 30.0
        for name, runs in series.items():
            if runs:
                ns = [r["n"] for r in runs]
                p95 = [r["retrieve"]["depth_1"]["with_query_embedding"]["p95_ms"]
                       for r in runs]
                line = ax.plot(ns, p95, marker="o", label=f"{name}: depth 1 p95")[0]
                # what linear growth from the smallest run would have reached
                ax.plot(ns, [p95[0] * n / ns[0] for n in ns], linestyle=":",
                        color=line.get_color(), label=f"{name}: linear from {ns[0]:,}")
                top = max(top, *p95)
        ax.axhline(30, color="grey", linestyle="--", label="issue 14 target at 1M (30 ms)")
        ax.set(title="Retrieve latency vs store size (depth 1, 2 cores)",
               xlabel="memories", ylabel="ms", xscale="log", ylim=(0, top * 1.6))
        written.append(_save(fig, ax, out / "latency-vs-size.png"))
        fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
        for name, runs in series.items():
            if runs:
                ax.plot([r["n"] for r in runs], [r["rss_mb"] / 1024 for r in runs],
                        marker="o", label=f"{name}: RSS (GB)")
                ax.plot([r["n"] for r in runs], [r["startup_s"] for r in runs],
                        marker="s", linestyle=":", label=f"{name}: start-up (s)")
        ax.axhline(3, color="grey", linestyle="--", label="targets at 1M (3 GB, 3 s)")
        ax.set(title="Serving process memory and start-up vs store size",
               xlabel="memories", ylabel="GB / s", xscale="log", ylim=(0, None))
        written.append(_save(fig, ax, out / "memory-vs-size.png"))
    return written
