"""The BLAS thread limit of the hot paths is the process's: concurrent callers share it, and
it is restored only when the last of them leaves."""

from __future__ import annotations

import numpy as np  # noqa: F401  (loads numpy's OpenBLAS, the library limited)
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from graphmem.engine import threads
from graphmem.engine.threads import single_threaded_blas


def blas_threads() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_the_limit_holds_until_the_last_caller_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    # a controller of the libraries loaded now (an earlier test's may predate some of them)
    monkeypatch.setattr(threads, "_controller", None)
    # the scoped limit (a library caller's), not a server's held one: an earlier test in this
    # process may have started a server (``long_lived.settle``)
    monkeypatch.setattr(threads, "_held", False)
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == {2}
        first, second = single_threaded_blas(), single_threaded_blas()
        first.__enter__()
        assert blas_threads() == {1}
        second.__enter__()  # another request thread, say
        first.__exit__(None, None, None)  # not the last one out: still one thread
        assert blas_threads() == {1}
        second.__exit__(None, None, None)
        assert blas_threads() == {2}
        with single_threaded_blas():  # and it applies again after
            assert blas_threads() == {1}
        assert blas_threads() == {2}
