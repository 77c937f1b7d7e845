"""The runnable examples in the public classes' docstrings run (with a random embedder, so
no model is loaded: the facade's own example, which needs the model, runs in the model
suite)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["graphmem.engine.core", "graphmem.engine.access", "graphmem.config",
           "graphmem.engine.edits", "graphmem.engine.maintenance", "graphmem.engine.retrieval",
           "graphmem.engine.writes", "graphmem.api.auth", "graphmem.api.keys",
           "graphmem.api.settings", "graphmem.client.http"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.model
def test_the_facades_example_runs_on_the_real_model() -> None:
    import graphmem.memory

    result = doctest.testmod(graphmem.memory)
    assert result.attempted > 0 and result.failed == 0


def test_the_core_classes_have_examples() -> None:
    """Each part of the core a newcomer meets first shows how it is used."""
    from graphmem.api.auth import Principal
    from graphmem.api.keys import KeyStore
    from graphmem.api.settings import Settings
    from graphmem.config import GraphMemConfig
    from graphmem.engine.access import AccessLog
    from graphmem.engine.core import Core
    from graphmem.engine.edits import Editor
    from graphmem.engine.maintenance import Maintainer
    from graphmem.engine.retrieval import Retriever
    from graphmem.engine.writes import Writer
    from graphmem.memory import GraphMemory

    classes = [AccessLog, Principal, KeyStore, GraphMemConfig, Core, Editor, Maintainer,
               GraphMemory, Retriever, Writer]
    assert [c.__name__ for c in classes if ">>>" not in (c.__doc__ or "")] == []
    import graphmem.api.settings as settings_module

    assert Settings.__module__ == settings_module.__name__
    assert ">>>" in (settings_module.__doc__ or "")  # the settings show their example
