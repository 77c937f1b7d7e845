"""Operating a store: init, serve, mcp, config show, keys, migrate, demo."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

import click

from graphmem.cli.common import (
    Location,
    _echo_json,
    _emit,
    handles_errors,
    json_option,
    main,
    ns_option,
    plain_data_option,
    stops_cleanly_on_sigterm,
    store_command,
)
from graphmem.engine.long_lived import settle
from graphmem.errors import MissingStoreError
from graphmem.memory import GraphMemory


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
    from graphmem.engine.migrate import migrate as run_migration
    from graphmem.store import make_store

    cfg = GraphMemConfig(store=StoreConfig(neo4j_user=neo4j_user,
                                           neo4j_password=neo4j_password,  # type: ignore[arg-type]
                                           neo4j_database=neo4j_database,
                                           falkordb_graph=falkordb_graph))
    src, dst = make_store(source, cfg, create=False), make_store(target, cfg)
    src.open()
    with closing(src):
        dst.open()
        with closing(dst):
            names = src.namespaces() if all_namespaces else [namespace]
            reports = []
            for ns in names:
                with tqdm(unit="rec", desc=ns, disable=as_json, file=sys.stderr) as bar:
                    reports.append(run_migration(src, dst, ns, progress=bar.update))
    if as_json:
        _echo_json([{"namespace": r.namespace, "memories": r.memories, "edges": r.edges,
                     "sampled": r.sampled, "ok": r.ok} for r in reports])
    for r in reports if not as_json else ():
        click.echo(f"{r.namespace}: copied {r.memories} memories and {r.edges} edges; "
                   f"verified counts and {r.sampled} sampled memories")

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
    from graphmem.api.server import ConnectionLimits, guarded_protocol
    from graphmem.api.settings import Settings

    settings = Settings.from_env(host=host, port=port, data=neo4j or data,
                                 dev_no_auth=dev_no_auth, metrics_public=metrics_public)
    # open the store first: a folder another process owns is a one-line error, not a
    # traceback from the server's start-up; SIGTERM closes it too
    with stops_cleanly_on_sigterm(), GraphMemory.open(settings.data,
                                                      config=settings.memory_config()) as mem:
        app = create_app(settings, memory=mem)
        # what start-up made, the model included, lives as long as the server: out of the
        # collector's sight (a full pass over it stalls a search: ADR 0021)
        settle(mem.embedder)
        # the connection limits (header timeout, bound on open connections, idle keep-alive)
        # live in the HTTP protocol: uvicorn alone holds slow request heads for ever
        limits = ConnectionLimits.from_settings(
            header_timeout=settings.header_timeout,
            keep_alive_timeout=settings.keep_alive_timeout,
            max_connections=settings.max_connections, fd_reserve=settings.fd_reserve,
            max_head_bytes=settings.max_head_bytes, log_seconds=settings.limits_log_seconds)
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="info",
                    http=guarded_protocol(limits), backlog=limits.backlog)

@store_command("mcp", ns=False, as_json=False)
@click.option("--namespace", "-n", "namespaces", multiple=True, default=["*"],
              show_default=True, help="namespaces this server may serve (repeatable)")
def mcp_command(data: Location, namespaces: tuple[str, ...]) -> None:
    """Serve graphmem's tools over the Model Context Protocol on stdio."""
    from graphmem.api.mcp import build_server

    # its client ends it by closing stdin; SIGTERM ends it as Ctrl+C does, the store closed
    try:
        with stops_cleanly_on_sigterm(), data.open() as mem:
            build_server(mem, namespaces).run("stdio")
    except SystemExit as stop:
        if stop.code != 128 + signal.SIGTERM:
            raise
        # the store is closed; anyio's stdin reader is not a daemon thread and blocks in a
        # read until the client closes the pipe, so the interpreter's exit would wait on it
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(stop.code)


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

    tuning = values.pop("tuning")
    for line in lines("", values):
        click.echo(line)
    click.echo("# tuning: performance knobs the benchmarks chose, not operator settings")
    for line in lines("TUNING", tuning):
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

    settings = Settings.from_env(data=data)
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
@json_option
@handles_errors
def keys_create(data: str, namespaces: tuple[str, ...], role: str, label: str | None,
                as_json: bool) -> None:
    with _keystore(data) as store:
        key_id, key = store.create(list(namespaces), role, label)
    _emit(as_json, {"id": key_id, "key": key, "role": role, "namespaces": list(namespaces)},
          f"created key {key_id} ({role}) for {', '.join(namespaces)}; it is shown once:\n{key}")


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
@json_option
@handles_errors
def keys_revoke(data: str, key_id: str, as_json: bool) -> None:
    with _keystore(data) as store:
        store.revoke(key_id)
    _emit(as_json, {"id": key_id, "revoked": True}, f"revoked {key_id}")

@main.command()
@plain_data_option
@handles_errors
def demo(data: str) -> None:
    """Store a small realistic memory set with relations, retrieve, print terms and paths."""
    from graphmem.cli.demo import run_demo

    run_demo(data, click.echo)


@main.command()
@plain_data_option
@json_option
@handles_errors
def init(data: str, as_json: bool) -> None:
    """Create an empty store in a data folder (or the schema in a database); an existing
    store is opened and left as it is."""
    existed = Location(data).exists()
    with Location(data, create=True).open() as mem:
        mem.ping()
    _emit(as_json, {"store": data, "created": not existed},
          f"{'found the' if existed else 'created a'} graphmem store at {data}")
