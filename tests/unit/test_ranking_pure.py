"""The ranking is pure stages (issue 46): given the store port, the query and the config it
keeps no cache and starts no thread; serving them is ``Retriever``'s."""

from __future__ import annotations

import ast
from pathlib import Path

import graphmem.engine.ranking as ranking

SERVING = {"threading", "concurrent.futures", "graphmem.engine.hot_cache",
           "graphmem.engine.query_batcher", "graphmem.engine.threads",
           "graphmem.engine.access", "graphmem.engine.retrieval", "functools"}


def test_the_ranking_imports_nothing_that_serves() -> None:
    tree = ast.parse(Path(ranking.__file__).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not imported & SERVING, imported & SERVING
