"""BLAS thread control for the small matrix products of the hot paths.

After a sentence-transformers call, torch's OpenMP workers keep spinning for a while; an
OpenBLAS product started then fights them for the 2 cores and a 1 ms matrix-vector product
takes ~100 ms (measured: retrieve p95 115 ms -> 18 ms at 10k memories). The products graphmem
runs after embedding are small enough for one thread, so they run under this limit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_controller: Any = None
#: threads inside ``single_threaded_blas`` now, and the limiter that set the limit for them
_inside = 0
_limiter: Any = None


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """One BLAS thread while any caller is inside: the first to enter sets the limit, the
    last to leave restores it. The limit is the process's, so concurrent retrievals share
    it (each setting and restoring it raced, and cost the server's request threads ~4% of
    their time under load)."""
    global _controller, _inside, _limiter
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
