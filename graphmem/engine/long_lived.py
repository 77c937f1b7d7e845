"""A long-running process's start-up objects, kept out of the cyclic collector's passes.

Loading the embedding model through torch, transformers and sentence-transformers made ~490k
objects the collector tracks, none of them garbage (the ONNX backend no longer imports them
once its model is exported, ADR 0036; the torch backend still does, and start-up's own objects
remain). A full (generation 2) pass over them took
14-255 ms in a process serving the 1M store, longer as it lived, and it ran inside whichever
retrieval happened to allocate then (a 20 ms depth-1 query measured 260 ms). ``settle`` loads
the model, then freezes everything that exists (``gc.freeze``: those objects are never
scanned again; garbage among them is still freed by reference counting) and lets the young
generation grow larger before a pass (a search allocates thousands of objects). It also holds
the process's BLAS at one thread for good (ADR 0048): the hot paths' products are small, and
setting and restoring the limit around each request cost short requests more than they took.
"""

from __future__ import annotations

import gc
import logging
from typing import Any

from graphmem.engine.threads import hold_single_threaded_blas

log = logging.getLogger(__name__)

#: the young generation's threshold after start-up (Python's default is 700)
YOUNG = 50_000


def settle(embedder: Any = None) -> int:
    """Load ``embedder``'s model (if given; a failure is logged, the caller's readiness
    check reports it), then freeze what start-up made and hold BLAS at one thread. Returns
    the objects frozen.

    Example:
        >>> settle() > 0, gc.get_threshold()[0]
        (True, 50000)
        >>> gc.unfreeze(); gc.set_threshold(700, 10, 10)
    """
    if embedder is not None:
        try:
            embedder.embed(["graphmem is starting"])
        except Exception as exc:  # the model's own error; /readyz says so
            log.warning("the embedding model did not load at start-up: %s", exc)
    hold_single_threaded_blas()
    gc.collect()  # what start-up left as garbage is freed, not frozen
    gc.freeze()
    gc.set_threshold(YOUNG, 20, 100)
    return gc.get_freeze_count()
