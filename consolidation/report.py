"""The maintainer's report of a consolidation run: JSON, Markdown, and a self-contained HTML
page with plots (cluster sizes, coherence, tiers before/after, age of consolidated memories)."""

from __future__ import annotations

import base64
import io
from collections import Counter
from datetime import datetime
from typing import Any

from graphmem.config import TiersConfig
from graphmem.rules.tiers import tier_for_importance

TIERS = ("fast", "medium", "slow", "glacial")


def build_report(run: dict[str, Any], tiers_before: Counter[str],
                 archived_tiers: Counter[str], now: datetime, tiers: TiersConfig
                 ) -> dict[str, Any]:
    clusters = run["clusters"]
    policies = Counter(c["policy"] for c in clusters)
    summaries = [c for c in clusters if c["summary"]]
    after = Counter(tiers_before)
    for tier, n in archived_tiers.items():
        after[tier] -= n
    for c in summaries:  # the tier the summary is written in (plan.py), from the config
        after[tier_for_importance(c["summary"]["importance"], tiers).value] += 1
    return {
        "run_id": run["id"], "generated_at": now.isoformat(), "namespace": run["namespace"],
        "status": run["status"], "candidates": run["candidates"], "clusters": len(clusters),
        "policies": {p: policies.get(p, 0) for p in ("compressed", "loose", "keep_all",
                                                      "digest")},
        "summaries": len(summaries),
        "archived": sum(len(c["archive"]) for c in clusters),
        "kept": sum(len(c["keep"]) for c in clusters),
        "tiers_before": {t: tiers_before.get(t, 0) for t in TIERS},
        "tiers_after": {t: after.get(t, 0) for t in TIERS},
        "retrieval_check": run["retrieval_check"],
        "check_lines": check_lines(run["retrieval_check"]),
        # every candidate no cluster took, and why (the clusters list the others)
        "unclustered": len(run.get("unclustered", ())),
        "unclustered_why": dict(Counter(u["why"] for u in run.get("unclustered", ()))),
        "unclustered_sample": run.get("unclustered", [])[:50],
        "cluster_details": [
            {"key": c["key"], "size": c["size"], "coherence": c["coherence"],
             "policy": c["policy"], "reason": c["reason"], "span": c["span"],
             "summary": c["summary"]["content"] if c["summary"] else None,
             "kept": len(c["keep"]), "archived": len(c["archive"]),
             "summary_id": c["summary"]["id"] if c["summary"] else None,
             # every member: what happened to it and why (the rule and its numbers)
             "members": c.get("detail") or [
                 {"id": i, "preview": p, "action": "kept" if i in c["keep"] else "archived",
                  "why": ""} for i, p in zip(c["members"], c["previews"], strict=True)],
             "member_previews": c["previews"][:8]} for c in clusters],
        "ages_days": [a for c in clusters if c["archive"] for a in c["ages_days"]],
        "sizes": [c["size"] for c in clusters],
        "coherences": [c["coherence"] for c in clusters],
    }


def check_lines(check: dict[str, Any]) -> list[str]:
    """The retrieval check in words: both views, before and after (ADR 0059); older runs'
    checks (one vector-only estimate) as they were recorded."""
    if "default" not in check:
        return [f"{check.get('queries', 0)} queries, recall {check.get('recall_before')} -> "
                f"{check.get('recall_after')} (loss {check.get('loss')}; an older run's check)"]
    probes = ", ".join(f"{n} {k}" for k, n in check["probes"].items())
    lines = [f"{check['queries']} probes about {check['members']} archived members ({probes}),"
             " asked with the real pipeline on a copy of the namespace, before and after"]
    for view, words in (("default", "default view (what retrieve(q) returns)"),
                        ("comprehensive", "comprehensive view")):
        v = check[view]
        held = " - holds the run" if check["view"] == view else ""
        lines.append(f"{words}: recall {v['before']:.3f} -> {v['after']:.3f}; of the probes "
                     f"it answered before, {v['lost']} no longer (loss {v['loss']:.3f}; held "
                     f"above {check['max_loss']}{held})")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _png(draw: Any) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3), dpi=90)
    draw(ax)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def plots(r: dict[str, Any]) -> dict[str, str]:
    def sizes(ax: Any) -> None:
        ax.hist(r["sizes"] or [0], bins=10, color="#4c72b0")
        ax.set(title="Cluster sizes", xlabel="memories", ylabel="clusters")

    def coherence(ax: Any) -> None:
        ax.hist(r["coherences"] or [0], bins=10, range=(0, 1), color="#55a868")
        ax.axvline(0.7, color="k", linestyle="--", linewidth=1)
        ax.set(title="Cluster coherence (mean cosine)", xlabel="coherence", ylabel="clusters")

    def tiers(ax: Any) -> None:
        x = range(len(TIERS))
        ax.bar([i - 0.2 for i in x], [r["tiers_before"][t] for t in TIERS], 0.4,
               label="before")
        ax.bar([i + 0.2 for i in x], [r["tiers_after"][t] for t in TIERS], 0.4, label="after")
        ax.set_xticks(list(x), TIERS)
        ax.set(title="Active memories per tier")
        ax.legend()

    def ages(ax: Any) -> None:
        ax.hist(r["ages_days"] or [0], bins=12, color="#c44e52")
        ax.set(title="Age of consolidated memories (since stored)", xlabel="days",
               ylabel="memories")

    return {"sizes": _png(sizes), "coherence": _png(coherence), "tiers": _png(tiers),
            "ages": _png(ages)}


def _render(template: str, autoescape: bool, **values: Any) -> str:
    from importlib.resources import files

    import jinja2

    source = (files("graphmem.consolidation") / "templates" / template).read_text(
        encoding="utf-8")
    env = jinja2.Environment(autoescape=autoescape, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["cell"] = _cell
    return env.from_string(source).render(**values)


def render(r: dict[str, Any], fmt: str) -> str:
    """The report as JSON, Markdown (``templates/report.md.j2``) or a self-contained HTML page
    (``templates/report.html.j2``, autoescaped)."""
    import json

    if fmt == "json":
        return json.dumps(r, indent=2)
    if fmt == "md":
        return _render("report.md.j2", False, r=r, tiers=TIERS).removesuffix("\n")
    if fmt == "html":
        return _render("report.html.j2", True, r=r, plots=plots(r), tiers=TIERS)
    raise ValueError(f"unknown report format {fmt!r}: json, md or html")
