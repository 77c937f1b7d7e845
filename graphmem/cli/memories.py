"""Commands on memories: store, search, show, relate, stats, import, export."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from graphmem.cli.agents import since_option, until_option
from graphmem.cli.common import Location, _echo_json, _emit, _fail, store_command
from graphmem.memory import GraphMemory


def _pairs(items: tuple[str, ...], sep: str, needs: str) -> list[tuple[str, str]]:
    """Each item split at its first ``sep``; an item without one is a one-line error."""
    for item in items:
        if sep not in item:
            _fail(f"{needs}, got {item!r}")
    return [(head, tail) for head, _, tail in (item.partition(sep) for item in items)]


@store_command()
@click.argument("content")
@click.option("--importance", type=float, default=None,
              help="default: the type's (0.5 for an observation)")
@click.option("--tier", type=click.Choice(["fast", "medium", "slow", "glacial"]))
@click.option("--type", "type_", default=None, help="memory type (default observation)")
@click.option("--session", "session_id", help="session / episode id (adds FOLLOWS edges)")
@click.option("--source", help="who said it (speaker / agent)")
@click.option("--topic")
@click.option("--meta", multiple=True, metavar="KEY=VALUE", help="metadata, repeatable")
@click.option("--relate", "relations", multiple=True, metavar="TYPE:ID",
              help="relation from the new memory, e.g. CAUSES:<id>; repeatable")
@click.option("--ttl", type=float, default=None,
              help="seconds it lives: then searches leave it out and it shows expired")
def store(data: Location, namespace: str, as_json: bool, content: str,
          importance: float | None, tier: str | None, type_: str | None,
          session_id: str | None, source: str | None, topic: str | None,
          meta: tuple[str, ...], relations: tuple[str, ...], ttl: float | None) -> None:
    """Store one memory."""
    metadata = dict(_pairs(meta, "=", "--meta needs KEY=VALUE"))
    rels = _pairs(relations, ":", "--relate needs TYPE:ID")
    with data.open() as mem:
        m = mem.store(content, namespace=namespace, importance=importance, tier=tier,
                      session_id=session_id, source=source, topic=topic, metadata=metadata,
                      relations=rels, type=type_, ttl=ttl)
    _emit(as_json, m.to_dict(), f"{m.id}  [{m.tier.value}] {m.content[:70]}")


@store_command()
@click.argument("query")
@click.option("--limit", "-k", type=int, default=10, show_default=True)
@click.option("--depth", type=int, default=None, help="walk depth 0..2")
@click.option("--strategy", type=click.Choice(["weighted", "fast_first", "comprehensive"]))
@click.option("--tier", "tiers", multiple=True,
              type=click.Choice(["fast", "medium", "slow", "glacial"]))
@click.option("--min-similarity", type=float, default=None)
@click.option("--index", "index_only", is_flag=True, help="compact previews only")
@click.option("--archived/--active-only", "include_archived", default=None,
              help="archived memories (reached through their summaries) ranked as if "
                   "active, or left out; by default they rank below active ones")
@click.option("--record-access", is_flag=True,
              help="count the results as accessed, as an agent's search does (by default an "
                   "operator's search is read-only and changes nothing)")
@click.option("--type", "types", multiple=True, help="memory type; repeatable")
@since_option
@until_option
@click.option("--as-of", type=click.DateTime(), default=None,
              help="answer as of this time: what was known and valid then")
@click.option("--now", type=click.DateTime(), default=None,
              help="the reference time of a time the query names relative to now "
                   "('last week'); default: the clock")
def search(data: Location, namespace: str, as_json: bool, query: str, limit: int,
           depth: int | None, strategy: str | None, tiers: tuple[str, ...],
           min_similarity: float | None, index_only: bool, include_archived: bool | None,
           record_access: bool, types: tuple[str, ...], since: datetime | None,
           until: datetime | None, as_of: datetime | None, now: datetime | None) -> None:
    """Retrieve memories for a query (full pipeline), with score terms and paths."""
    opts: dict[str, Any] = {"limit": limit, "depth": depth, "strategy": strategy,
                            "tiers": list(tiers) or None, "min_similarity": min_similarity,
                            "include_archived": include_archived,
                            "filters": {"type": list(types)} if types else None,
                            "since": since, "until": until, "as_of": as_of, "now": now}
    with data.open() as mem:
        if index_only:
            entries = mem.search_index(query, namespace=namespace, **opts)
            if as_json:
                _echo_json([e.to_dict() for e in entries])
            for e in entries if not as_json else ():
                click.echo(f"{e.score:7.3f}  {e.id}  [{e.tier.value}] ~{e.token_estimate} tok  "
                           f"{e.preview}")
            return
        results = mem.retrieve(query, namespace=namespace, record_access=record_access, **opts)
    if as_json:
        _echo_json([r.to_dict() for r in results])
        return
    if not results:
        click.echo("no results")
    for r in results:
        flag = "  DISPUTED" if r.disputed else ""
        click.echo(f"{r.score:7.3f}  [{r.memory.tier.value}] {r.memory.content[:90]}{flag}")
        click.echo(f"         id {r.memory.id}  via {r.path}")
        click.echo("         " + "  ".join(f"{k}={v:.3f}" for k, v in r.terms.items() if v))
        for term, reason in r.reasons.items():
            click.echo(f"         {term}: {reason}")


@store_command()
@click.argument("memory_id")
def show(data: Location, namespace: str, as_json: bool, memory_id: str) -> None:
    """Show one memory with its relations."""
    with data.open() as mem:
        m = mem.get(memory_id, namespace=namespace)
        rels = mem.relations(memory_id, namespace=namespace)
    if as_json:
        _echo_json({"memory": m.to_dict(), "relations": [r.to_dict() for r in rels]})
        return
    for key, value in m.to_dict().items():
        click.echo(f"{key:>17}: {value}")
    for r in rels:
        other, arrow = ((r.target_id, f"-[{r.type.value}]->") if r.source_id == memory_id
                        else (r.source_id, f"<-[{r.type.value}]-"))
        score = f" score={r.score:.3f}" if r.score is not None else ""
        click.echo(f"  {arrow} {other} ({r.source.value}{score})")


@store_command()
@click.argument("source_id")
@click.argument("type")
@click.argument("target_id")
@click.option("--score", type=float, default=None)
@click.option("--delete", is_flag=True, help="remove the relation instead")
def relate(data: Location, namespace: str, as_json: bool, source_id: str, type: str,
           target_id: str, score: float | None, delete: bool) -> None:
    """Relate two memories: SOURCE_ID TYPE TARGET_ID (CAUSES, REFERENCES, SIMILAR_TO,
    CONTRADICTS)."""
    with data.open() as mem:
        if delete:
            mem.unrelate(source_id, target_id, type, namespace=namespace)
            out: dict[str, Any] = {"deleted": True, "source_id": source_id, "type": type.upper(),
                                   "target_id": target_id}
        else:
            out = mem.relate(source_id, target_id, type, namespace=namespace,
                             score=score).to_dict()
    verb = "removed" if delete else "related"
    _emit(as_json, out, f"{verb}: {source_id} -[{type.upper()}]-> {target_id}")


@store_command()
def stats(data: Location, namespace: str, as_json: bool) -> None:
    """Counts by tier, status, kind and edge type."""
    with data.open() as mem:
        s = mem.stats(namespace=namespace)
    if as_json:
        _echo_json(s)
        return
    click.echo(f"namespace {s['namespace']}: {s['memories']} memories")
    for group in ("tiers", "statuses", "kinds", "edges"):
        click.echo(f"  {group:>8}: " + "  ".join(f"{k}={v}" for k, v in s[group].items()))


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with (sys.stdin if str(path) == "-" else path.open(encoding="utf-8")) as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise json.JSONDecodeError(f"line {n}: {exc.msg}", exc.doc, exc.pos) from None
                if not isinstance(rec, dict):
                    _fail(f"line {n}: not a JSON object")
                yield rec


@store_command("import")
@click.argument("path", type=click.Path(path_type=Path, allow_dash=True))
@click.option("--batch", "batch_size", type=int, default=1000, show_default=True)
def import_(data: Location, namespace: str, as_json: bool, path: Path, batch_size: int) -> None:
    """Import JSONL records (as written by export; memories without embedding are embedded).

    Plain lines with just {"content": ...} are stored as new memories."""
    from tqdm import tqdm

    if str(path) != "-" and not path.exists():
        _fail(f"no such file: {path}")
    total = None
    if str(path) != "-":
        with path.open("rb") as fh:
            total = sum(1 for line in fh if line.strip())
    with data.open() as mem, tqdm(total=total, unit="rec", disable=as_json,
                                             file=sys.stderr) as bar:
        n_mem, n_edges = _import(mem, _read_jsonl(path), namespace, batch_size, bar.update)
    _emit(as_json, {"memories": n_mem, "edges": n_edges},
          f"imported {n_mem} memories and {n_edges} edges into {namespace}")


def _import(mem: GraphMemory, records: Iterator[dict[str, Any]], namespace: str,
            batch_size: int, progress: Callable[[int], None]) -> tuple[int, int]:
    """Exported records are written as they are; plain {"content": ...} lines are stored."""
    first = next(records, None)
    if first is None:
        return 0, 0
    stream = itertools.chain([first], records)
    if "record" in first:
        return mem.import_records(stream, namespace=namespace, batch_size=batch_size,
                                  progress=progress)
    count = 0
    while chunk := list(itertools.islice(stream, batch_size)):
        count += len(mem.store_many(chunk, namespace=namespace))
        progress(len(chunk))
    return count, 0


@store_command(as_json=False)
@click.argument("path", type=click.Path(path_type=Path, allow_dash=True), default="-")
@click.option("--without-vectors", is_flag=True,
              help="leave the embeddings out: an import embeds the memories again with its "
                   "own model (to change the model or embedding.quantize)")
def export(data: Location, namespace: str, path: Path, without_vectors: bool) -> None:
    """Export a namespace as JSONL (memories with embeddings, then edges)."""
    with data.open() as mem:
        if str(path) == "-":
            n = mem.export_jsonl(sys.stdout, namespace=namespace, vectors=not without_vectors)
        else:
            with path.open("w", encoding="utf-8") as fh:
                n = mem.export_jsonl(fh, namespace=namespace, vectors=not without_vectors)
    click.echo(f"exported {n} records", err=True)
