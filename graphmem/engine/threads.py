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


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    global _controller
    if _controller is None:
        with _lock:
            if _controller is None:
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield
