"""When a namespace gets its faiss indexes: from ``TuningConfig.ann_min`` rows, built from a
snapshot in the vector layer's one background thread (``graphmem-ann-build``) while the exact
scan answers, and built again once a quarter of their positions are stale or the namespace has
doubled since. The store owns the builder and stops it at close (ADR 0068)."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from typing import Any

import numpy as np

from graphmem.store.ann import faiss_fields
from graphmem.store.ann.index import FIELDS, VectorIndex

log = logging.getLogger(__name__)


class Builder:
    """Builds the faiss indexes of one store's large namespaces.

    Example:
        >>> b = Builder(ann_min=100, background=False)
        >>> b.wanted(VectorIndex(4)), b.state
        (False, {})
    """

    def __init__(self, ann_min: int, background: bool = True) -> None:
        self.ann_min, self.background = ann_min, background
        self.state: dict[str, str] = {}  # namespace -> loaded | building | built
        self._todo: dict[str, VectorIndex] = {}
        self._thread: threading.Thread | None = None
        self._mutex = threading.Lock()
        self._stop = threading.Event()

    def wanted(self, index: VectorIndex) -> bool:
        n = len(index)
        if not self.ann_min or n < self.ann_min:
            return False
        return index.ann is None or index.stale() > n // 4 or n >= 2 * index.trained

    def consider(self, ns: str, index: VectorIndex, lock: Any) -> None:
        """After a write or a load (``lock`` held, or ``index`` not yet published): build
        now, or have the thread build, if the namespace wants indexes."""
        index.exact_max = self.ann_min
        if not self.wanted(index) or self.state.get(ns) == "building":
            return
        if not self.background:
            self.build(ns, index)
            return
        with self._mutex:
            self.state[ns], self._todo[ns] = "building", index
            if self._thread is None:
                self._stop.clear()
                self._thread = threading.Thread(target=self._run, args=(lock,), daemon=True,
                                                name="graphmem-ann-build")
                self._thread.start()

    def build(self, ns: str, index: VectorIndex, lock: Any = None) -> None:
        """Snapshot (under a read of ``lock``), build, install (under its write)."""
        with lock.read() if lock is not None else contextlib.nullcontext():
            n = len(index)
            keys = index.col["key"][:n].copy()
            rows = {f: np.array(index.rows[f][:n]) for f in FIELDS}
        built = {f: faiss_fields.build(rows[f]) for f in FIELDS}
        with lock.write() if lock is not None else contextlib.nullcontext():
            if lock is None or not self._stop.is_set():
                index.install(built, keys, n)
                self.state[ns] = "built"
        log.info("faiss indexes of %d rows built", n)

    def _run(self, lock: Any) -> None:
        with contextlib.suppress(AttributeError, OSError):  # nice 19: Linux schedules threads
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        while not self._stop.is_set():
            with self._mutex:
                if not self._todo:
                    self._thread = None
                    return
                ns, index = self._todo.popitem()
            try:
                self.build(ns, index, lock)
            except Exception:  # a cache: the exact scan keeps answering
                log.exception("building a namespace's faiss indexes failed")
                self.state.pop(ns, None)

    def wait(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def stop(self) -> None:
        """At close: the build under way ends uninstalled, the others are dropped."""
        self._stop.set()
        with self._mutex:
            self._todo.clear()
        self.wait()
        self._thread = None
        self.state.clear()
