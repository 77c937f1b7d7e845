"""The layers point one way: faces (api, cli, mcp, client) -> facade -> core -> store port ->
adapters. Read from the source with ``ast``, so a wrong import fails here before review."""

from __future__ import annotations

import ast
import doctest
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: installed package name -> folder in the checkout (pyproject's package-dir)
FOLDERS = {"graphmem.api": "api", "graphmem.consolidation": "consolidation",
           "graphmem.cypher": "cypher", "graphmem": "graphmem"}
FACES = ("graphmem.api", "graphmem.cli", "graphmem.client", "graphmem.bench",
         "graphmem.integrations")
#: the folders a newcomer reads the layers from (ADR 0008)
RULES, ENGINE, STORE = "graphmem.rules", "graphmem.engine", "graphmem.store"
#: what pure rules may lean on: the shared vocabulary, nothing that does I/O
RULES_MAY_IMPORT = ("graphmem.rules", "graphmem.models", "graphmem.config", "graphmem.errors")
DRIVERS = ("sqlite3", "neo4j", "falkordb", "redis")
#: none left: the API key file moved behind the port (graphmem.store.sqlite.keyfile)
DRIVER_EXCEPTIONS: set[str] = set()


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg, folder in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([pkg, *parts])
            out.setdefault(name, path)
    return out


def _imports(path: Path, name: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's package
                base = name.rsplit(".", node.level)[0]
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return {i.replace("api.", "graphmem.api.", 1) if i.startswith("api.") else i for i in out}


MODULES = _modules()


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_layout_is_found() -> None:
    assert {"graphmem.memory", "graphmem.engine.core", "graphmem.store.sqlite.store",
            "graphmem.api.app", "graphmem.consolidation.runner"} <= set(MODULES)


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not _under(n, FACES)))
def test_the_core_never_imports_a_face(name: str) -> None:
    bad = {i for i in _imports(MODULES[name], name) if _under(i, FACES)}
    assert not bad, f"{name} imports faces {bad}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES
                                        if _under(n, ("graphmem.consolidation",))))
def test_consolidation_never_imports_the_facade(name: str) -> None:
    bad = {i for i in _imports(MODULES[name], name) if _under(i, ("graphmem.memory",))}
    assert not bad, f"{name} imports the facade: {bad}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_only_the_store_touches_a_database(name: str) -> None:
    if _under(name, ("graphmem.store",)) or name in DRIVER_EXCEPTIONS:
        return
    bad = {i for i in _imports(MODULES[name], name) if _under(i, DRIVERS)}
    assert not bad, f"{name} imports database drivers {bad}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _under(n, (RULES,))))
def test_rules_are_pure(name: str) -> None:
    """rules/ takes plain values: no store, no engine, no model, no facade."""
    own = {i for i in _imports(MODULES[name], name) if _under(i, ("graphmem",))}
    bad = {i for i in own if not _under(i, RULES_MAY_IMPORT) and i != "graphmem"}
    assert not bad, f"{name} is a rule but imports {bad}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _under(n, (ENGINE, STORE))))
def test_the_engine_and_store_never_import_the_facade(name: str) -> None:
    bad = {i for i in _imports(MODULES[name], name) if _under(i, ("graphmem.memory",))}
    assert not bad, f"{name} imports the facade: {bad}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _under(n, (STORE,))))
def test_the_store_never_imports_a_layer_above_the_port(name: str) -> None:
    above = (ENGINE, "graphmem.consolidation", RULES)
    bad = {i for i in _imports(MODULES[name], name) if _under(i, above)}
    assert not bad, f"{name} imports a layer above the port: {bad}"


def test_the_top_of_the_package_is_the_public_surface() -> None:
    """Every module directly in graphmem/ is part of what callers import; work lives below."""
    top = {p.stem for p in (ROOT / "graphmem").glob("*.py")}
    assert top == {"__init__", "memory", "models", "config", "errors", "testing"}, top


def _doctest_imports(path: Path) -> set[str]:
    """What the examples in the module's docstrings import."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                          | ast.AsyncFunctionDef):
            continue
        for example in doctest.DocTestParser().get_examples(ast.get_docstring(node) or ""):
            for inner in ast.walk(ast.parse(example.source)):
                if isinstance(inner, ast.Import):
                    out.update(a.name for a in inner.names)
                elif isinstance(inner, ast.ImportFrom) and not inner.level:
                    out.add(inner.module or "")
    return out


#: the console script is the benchmarks' door: it registers ``graphmem bench`` when they are there
BENCH_DOOR = "graphmem.cli"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not _under(n, ("graphmem.bench",))
                                        and n != BENCH_DOOR))
def test_nothing_outside_the_benchmarks_imports_them(name: str) -> None:
    """Product code and its doctests run without the bench package (test doubles live in
    ``graphmem.testing``)."""
    used = _imports(MODULES[name], name) | _doctest_imports(MODULES[name])
    bad = {i for i in used if _under(i, ("graphmem.bench",))}
    assert not bad, f"{name} imports the benchmarks: {bad}"


def test_each_engine_driver_lives_in_its_own_connection_module() -> None:
    for driver, home in (("neo4j", "graphmem.store.graph.neo4j_conn"),
                         ("falkordb", "graphmem.store.graph.falkordb_conn")):
        users = {n for n in MODULES if _under(n, ("graphmem.store",))
                 and any(_under(i, (driver,)) for i in _imports(MODULES[n], n))}
        assert users <= {home, "graphmem.store.graph.falkordb_server"}, (driver, users)


def test_faces_reach_the_store_only_through_the_facade() -> None:
    """api/ (REST and MCP) calls GraphMemory, never ``.backend`` or an adapter."""
    for name in MODULES:
        if not _under(name, ("graphmem.api",)):
            continue
        source = MODULES[name].read_text(encoding="utf-8")
        assert ".backend" not in source and "._store" not in source, name
        assert not {i for i in _imports(MODULES[name], name)
                    if _under(i, ("graphmem.store.sqlite.store",
                                  "graphmem.store.graph.store"))}, name
