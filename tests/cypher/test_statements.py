"""Every Cypher statement: loads, has a header that names its parameters, interpolates
nothing, and (Neo4j dialect) passes Neo4j's own parser and semantic checks."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from graphmem import cypher
from tests.cypher.statements import header, parameters

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
FILES = sorted((ROOT / "cypher").rglob("*.cypher"))


def _declared(parameters: str) -> set[str]:
    """Top-level names in a header's parameters text (``name (type)``), braces skipped."""
    flat = re.sub(r"\{[^{}]*\}", "", parameters)
    while (collapsed := re.sub(r"\((?:[^()]|\(\))+\)", "()", flat)) != flat:
        flat = collapsed
    return set(re.findall(r"([A-Za-z_]\w*) \(\)", flat)) - {"none"}


def _load(path: Path) -> cypher.Statement:
    rel = path.relative_to(ROOT / "cypher").as_posix()[: -len(".cypher")]
    name, _, dialect = rel.partition(".")
    return cypher.load(name, dialect or None)


def test_there_are_statements_in_both_dialects() -> None:
    assert len(FILES) >= 12
    assert any(f.name.endswith(".neo4j.cypher") for f in FILES)
    assert any(f.name.endswith(".falkordb.cypher") for f in FILES)
    assert any(f.parent.name == "browser" for f in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_header_matches_the_statement(path: Path) -> None:
    st = _load(path)
    head = header(st)
    rel = path.relative_to(ROOT / "cypher").as_posix()
    for key in ("name", "purpose", "parameters", "returns", "mode"):
        assert head.get(key), f"{rel}: header lacks '{key}'"
    assert head["name"] == rel.split(".")[0], rel
    if "." in rel[: -len(".cypher")]:
        assert head.get("dialect") == rel.split(".")[1], rel
    assert head["mode"] in ("read", "write", "schema"), rel
    assert _declared(head["parameters"]) == parameters(st), rel
    # no Python-side templating left in a statement: values only ever go in as $parameters
    assert not re.search(r"\{\s*[A-Za-z_]\w*\s*\}|%s|\{\d\}", st.body), rel
    assert st.body, rel


def test_loader_prefers_the_dialect_variant() -> None:
    shared = cypher.load("memory/get", "neo4j")
    assert shared.dialect is None and "MATCH" in shared.body
    variant = cypher.load("memory/write_batch", "falkordb")
    assert variant.dialect == "falkordb" and "vecf32" in variant.body
    assert "vecf32" not in cypher.load("memory/write_batch", "neo4j").body
    with pytest.raises(FileNotFoundError):
        cypher.load("memory/nope", "neo4j")
    with pytest.raises(ValueError):
        cypher.load("memory/get", "sqlite")


def test_the_adapter_builds_no_cypher_of_its_own() -> None:
    """Statements come from files; string literals in the adapter name them, never query."""
    modules = sorted((ROOT / "graphmem" / "store" / "graph").glob("*.py"))
    assert len(modules) >= 6, modules  # the adapter, its rows and context, two connections
    for path in modules:
        module = path.name
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not re.search(r"\b(MATCH|MERGE|CREATE|DELETE|RETURN|UNWIND)\b\s+\S",
                                     node.value), f"{module}: {node.value[:60]!r}"
            if isinstance(node, ast.JoinedStr):
                text = ast.unparse(node)
                assert not re.search(r"\b(MATCH|MERGE|CREATE|RETURN)\b", text), text


def _lint(files: list[Path]) -> tuple[int, dict[str, list[str]]]:
    node = shutil.which("node")
    assert node, "node is required for the Cypher parser check"
    assert (HERE / "node_modules" / "@neo4j-cypher" / "language-support").exists(), (
        "run `npm ci --prefix tests/cypher` (make test does)")
    out = subprocess.run([node, str(HERE / "lint.mjs"), *map(str, files)],
                         capture_output=True, text=True, cwd=HERE, timeout=120)
    return out.returncode, json.loads(out.stdout or "{}")


def test_neo4j_statements_pass_neo4j_parser() -> None:
    files = [f for f in FILES if not f.name.endswith(".falkordb.cypher")]
    code, report = _lint(files)
    assert code == 0 and report == {}, report


def test_parser_check_can_fail(tmp_path: Path) -> None:
    broken = tmp_path / "broken.cypher"
    broken.write_text("// name: broken\nMATCH (m:Memory {namespace: $namespace})\nRETRUN m\n")
    misspelt = tmp_path / "misspelt.cypher"
    misspelt.write_text("CALL db.index.vector.queryNode('x', 3, $v) YIELD node RETURN node\n")
    unbound = tmp_path / "unbound.cypher"
    unbound.write_text("MATCH (m:Memory) RETURN n\n")
    code, report = _lint([broken, misspelt, unbound])
    assert code == 1
    assert set(report) == {str(broken), str(misspelt), str(unbound)}
    assert any("RETRUN" in msg for msg in report[str(broken)])
    assert any("queryNode" in msg for msg in report[str(misspelt)])
