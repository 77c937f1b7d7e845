"""BLAS thread control for the small matrix products of the hot paths.

After a sentence-transformers call, torch's OpenMP workers keep spinning for a while; an
OpenBLAS product started then fights them for the 2 cores and a 1 ms matrix-vector product
takes a hundred times longer (ADR 0048 has the numbers). The products graphmem
runs after embedding are small enough for one thread, so they run under this limit.

A long-lived server holds the limit for good instead (``hold_single_threaded_blas``, from
``long_lived.settle``; ADR 0048): setting and restoring it around every request took a lock
that short requests queued on (the hot cache's repeats most of all).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_controller: Any = None
#: threads inside ``single_threaded_blas`` now, and the limiter that set the limit for them
_inside = 0
_limiter: Any = None
#: the process holds one BLAS thread for good (a server): nothing to set or restore
_held = False


def hold_single_threaded_blas() -> None:
    """One BLAS thread from now on, for the whole process: a server's requests then skip
    ``single_threaded_blas``'s bookkeeping. For processes graphmem owns (``graphmem serve``),
    not a library caller's, whose own numpy would be limited too."""
    global _held
    from threadpoolctl import ThreadpoolController

    with _lock:
        if not _held:  # the libraries loaded by now; not restored: the process's setting
            ThreadpoolController().limit(limits=1, user_api="blas")
            _held = True


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """One BLAS thread while any caller is inside: the first to enter sets the limit, the
    last to leave restores it. The limit is the process's, so concurrent retrievals share
    it (each setting and restoring it raced, and cost the server's request threads ~4% of
    their time under load)."""
    global _controller, _inside, _limiter
    if _held:
        yield
        return
    with _lock:
        if _controller is None:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
        if _inside == 0:
            _limiter = _controller.limit(limits=1, user_api="blas")
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                _limiter.restore_original_limits()
                _limiter = None


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS says, else the count).

    Example:
        >>> usable_cpus() >= 1
        True
    """
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
