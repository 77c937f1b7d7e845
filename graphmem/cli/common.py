"""The ``graphmem`` console script's shared parts: the command group, how a command names
its store (``--data DIR|URL``, ``--create``), options and the one-line error exit."""

from __future__ import annotations

import json
import logging
import signal
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
    that holds no store may be created (``--create``, ``graphmem init``).

    Example:
        >>> Location("neo4j://db:7687").exists()
        True
    """

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
        from graphmem.store.sqlite.store import DB_FILE

        return "://" in self.target or (Path(self.target) / DB_FILE).is_file()


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
        except (GraphMemError, OSError, json.JSONDecodeError) as exc:
            _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    return wrapper  # type: ignore[return-value]


@contextmanager
def stops_cleanly_on_sigterm() -> Iterator[None]:
    """SIGTERM (how Docker, systemd and Kubernetes stop a service) ends the process the way
    Ctrl+C does: through the ``with`` blocks and ``finally`` clauses, so the store closes
    (product codes saved, queued accesses recorded) and a viewer's session key is revoked.
    uvicorn shuts down on the signal and then raises it again; with the default action that
    second signal killed the process before anything after ``uvicorn.run`` ran. Exit status
    143 (128 + SIGTERM), as a shell reports a process the signal ended."""
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=None, default=str))


def _emit(as_json: bool, obj: Any, text: str) -> None:
    """``obj`` as one JSON line with ``--json``, else ``text``."""
    _echo_json(obj) if as_json else click.echo(text)


def store_command(name: str | None = None, *, ns: bool = True,
                  as_json: bool = True) -> Callable[[F], F]:
    """A command on a store: ``--data``/``--create``, ``--namespace``, ``--json`` (listed in
    that order, before the command's own options) and the one-line error exit."""
    def decorate(fn: F) -> F:
        fn = handles_errors(fn)
        if as_json:
            fn = json_option(fn)
        if ns:
            fn = ns_option(fn)
        return main.command(name)(data_option(fn))  # type: ignore[return-value]
    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", count=True, help="log more (-v info, -vv debug)")
def main(verbose: int) -> None:
    """graphmem: long-term memory for LLM agents, backed by a property graph."""
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
