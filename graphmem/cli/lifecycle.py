"""Lifecycle commands: maintain, mark (pin / unpin / restore), consolidate, approve,
rollback, reports, report."""

from __future__ import annotations

import sys
from typing import Any

import click

from graphmem.cli.common import (
    Location,
    _echo_json,
    _emit,
    _fail,
    data_option,
    handles_errors,
    json_option,
    main,
    store_command,
)


@main.command()
@data_option
@click.option("--namespace", "-n", default=None, help="one namespace (default: all)")
@click.option("--dry-run", is_flag=True, help="print what would change, change nothing")
@json_option
@handles_errors
def maintain(data: Location, namespace: str | None, dry_run: bool, as_json: bool) -> None:
    """Apply decay, promotions, demotions, expiry and eviction (idempotent)."""
    with data.open() as mem:
        report = mem.maintain(namespace, dry_run=dry_run)
    if as_json:
        _echo_json(report.to_dict())
        return
    verb = "would change" if dry_run else "changed"
    counts = ", ".join(f"{k} {v}" for k, v in report.counts().items())
    click.echo(f"{verb}: {counts}; importance updated on {report.importance_updates} of "
               f"{report.scanned} memories ({', '.join(report.namespaces) or 'no namespaces'})")
    for t in report.transitions:
        click.echo(f"  {t.kind.value:9} {t.memory_id}  {t.from_tier.value}->{t.to_tier.value}"
                   f"  {t.to_status.value if t.to_status != t.from_status else ''}  {t.reason}")


@store_command()
@click.argument("memory_id")
@click.argument("action", type=click.Choice(["pin", "unpin", "restore"]))
@click.option("--ttl", type=float, default=None,
              help="with restore: a new TTL in seconds (a memory whose TTL ran out comes "
                   "back without one otherwise)")
def mark(data: Location, namespace: str, as_json: bool, memory_id: str, action: str,
         ttl: float | None) -> None:
    """Pin, unpin or restore a memory: MEMORY_ID pin|unpin|restore."""
    if ttl is not None and action != "restore":
        _fail("--ttl goes with restore only")
    with data.open() as mem:
        m = (mem.restore(memory_id, namespace=namespace, ttl=ttl) if action == "restore"
             else getattr(mem, action)(memory_id, namespace=namespace))
    _emit(as_json, m.to_dict(), f"{action}: {m.id} [{m.tier.value}, {m.status.value}, "
                                f"{'pinned' if m.pinned else 'not pinned'}]")

@main.command()
@data_option
@click.option("--namespace", "-n", default=None, help="one namespace (default: all)")
@click.option("--dry-run", is_flag=True, help="compute the report, write nothing")
@json_option
@handles_errors
def consolidate(data: Location, namespace: str | None, dry_run: bool, as_json: bool) -> None:
    """Cluster old memories into summaries (resumes a crashed run first). A dry run is saved
    too: `graphmem report RUN_ID` opens it."""
    from tqdm import tqdm

    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            unit = "memories" if stage == "plan" else "clusters"
            bar = bars[stage] = tqdm(total=total, unit=unit, desc=stage, disable=as_json,
                                     file=sys.stderr)
        bar.total = total
        bar.update(done - bar.n)

    try:
        with data.open() as mem:
            run = mem.consolidate(namespace, dry_run=dry_run, progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    if as_json:
        _echo_json({"id": run.id, "status": run.status, "report": run.report})
        return
    r = run.report
    click.echo(f"{run.id}: {run.status}; {r['candidates']} candidates, {r['clusters']} "
               f"clusters, {r['summaries']} summaries, {r['archived']} archived; retrieval "
               f"check loss {r['retrieval_check']['loss']}")


def _echo_run(run: Any, as_json: bool) -> None:
    _emit(as_json, {"id": run.id, "status": run.status}, f"{run.id}: {run.status}")


@store_command(ns=False)
@click.argument("run_id")
def approve(data: Location, run_id: str, as_json: bool) -> None:
    """Apply a consolidation run held for approval."""
    with data.open() as mem:
        run = mem.approve(run_id)
    _echo_run(run, as_json)


@store_command(ns=False)
@click.argument("run_id")
def rollback(data: Location, run_id: str, as_json: bool) -> None:
    """Undo a consolidation run: summaries removed, archived members restored."""
    with data.open() as mem:
        run = mem.rollback(run_id)
    _echo_run(run, as_json)


@store_command(ns=False)
def reports(data: Location, as_json: bool) -> None:
    """List consolidation runs and their reports."""
    with data.open() as mem:
        rows = mem.runs()
    if as_json:
        _echo_json(rows)
        return
    for r in rows:
        click.echo(f"{r['id']}  {r['status']:16}  {r['namespace'] or 'all':12}  "
                   f"summaries {r['summaries']}, archived {r['archived']}")


@store_command(ns=False, as_json=False)
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md",
              show_default=True)
def report(data: Location, run_id: str, fmt: str) -> None:
    """Print one run's report (Markdown, self-contained HTML, or JSON)."""
    with data.open() as mem:
        click.echo(mem.report(run_id, fmt))
