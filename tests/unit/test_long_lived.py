"""``settle`` (the server's start-up): the model loads before the freeze, so its objects are
out of the collector's passes; a model that fails to load is logged, not raised; BLAS is held
at one thread for the process's life."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import numpy as np  # noqa: F401  (loads numpy's OpenBLAS, the library held)
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from graphmem.engine import threads
from graphmem.engine.long_lived import YOUNG, settle
from graphmem.engine.threads import single_threaded_blas


@pytest.fixture(autouse=True)
def _restore(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    before = gc.get_threshold()
    monkeypatch.setattr(threads, "_held", False)  # undone after: other tests toggle the limit
    with threadpool_limits(limits=2, user_api="blas"):  # and the BLAS threads restored
        yield
    gc.unfreeze()
    gc.set_threshold(*before)


def blas_threads() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


class Loader:
    """Makes many tracked objects when it first embeds (as a model load does)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.loaded: list[list[list[int]]] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        if self.fail:
            raise RuntimeError("no model here")
        self.loaded = [[[i]] for i in range(20_000)]  # lists of lists: the GC tracks them
        return [[0.0] for _ in texts]


def test_the_models_objects_are_frozen_with_the_rest_of_start_up() -> None:
    gc.unfreeze()
    loader = Loader()
    settle(loader)
    assert loader.loaded and gc.get_threshold()[0] == YOUNG
    tracked = {id(o) for o in gc.get_objects()}  # every generation but the frozen one
    assert gc.is_tracked(loader.loaded[0])
    assert not any(id(x) in tracked for x in loader.loaded[:100])


def test_a_model_that_does_not_load_is_logged_and_start_up_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    assert settle(Loader(fail=True)) > 0
    assert "did not load" in caplog.text


def test_blas_stays_at_one_thread_and_requests_leave_it_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert blas_threads() == {2}
    settle()
    assert blas_threads() == {1}
    limits: list[object] = []
    monkeypatch.setattr(threads, "_controller", type("Spy", (), {
        "limit": lambda self, **kw: limits.append(kw)})())
    with single_threaded_blas(), single_threaded_blas():  # two requests, one inside the other
        assert blas_threads() == {1}
    assert blas_threads() == {1} and limits == []  # nothing set, nothing restored
