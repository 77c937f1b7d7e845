"""Every public class shows how it is used, and every example runs.

Examples run with a random embedder, so no model is loaded: the facade's own example, which
needs the model, runs in the model suite. Examples that need a server say ``+SKIP``.
"""

from __future__ import annotations

import ast
import doctest
import importlib

import pytest

from tests.unit.test_layers import MODULES

#: the facade's example loads the real model (see the model test below)
NEEDS_MODEL = {"graphmem.memory"}


def _public_classes(name: str) -> list[str]:
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    return [n.name for n in tree.body
            if isinstance(n, ast.ClassDef) and not n.name.startswith("_")]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n not in NEEDS_MODEL))
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _public_classes(n)))
def test_every_public_class_has_an_example(name: str) -> None:
    module = importlib.import_module(name)
    bare = [c for c in _public_classes(name) if ">>>" not in (getattr(module, c).__doc__ or "")]
    assert bare == [], f"{name}: public classes without a runnable example: {bare}"


@pytest.mark.model
def test_the_facades_example_runs_on_the_real_model() -> None:
    import graphmem.memory

    result = doctest.testmod(graphmem.memory)
    assert result.attempted > 0 and result.failed == 0
