"""A readers-writer lock for the embedded store: many reads at once, one write alone.

Reads (queries, each on its own SQLite connection) run side by side; a write (it changes
SQLite and the in-memory vector index) waits for the reads under way and runs alone. A
waiting write holds back new reads, so a stream of queries cannot starve it. Re-entrant the
ways the store nests: a read inside a read, a read or a write inside the thread's own write.
A read cannot become a write (that would deadlock two readers): it raises instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class RWLock:
    """Example:
        >>> lock = RWLock()
        >>> with lock.read(), lock.read():
        ...     lock.reading_here()
        True
        >>> with lock.write(), lock.read():
        ...     lock.reading_here()
        False
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0  # threads holding a read
        self._writer: int | None = None  # the thread holding the write
        self._waiting_writers = 0
        self._local = threading.local()

    def _read_depth(self) -> int:
        return int(getattr(self._local, "depth", 0))

    @contextmanager
    def read(self) -> Iterator[None]:
        depth = self._read_depth()
        # inside the thread's own write or read: nothing to wait for
        nested = bool(depth) or self._writer == threading.get_ident()
        if not nested:
            with self._cond:
                self._cond.wait_for(lambda: self._writer is None and not self._waiting_writers)
                self._readers += 1
        self._local.depth = depth + 1
        try:
            yield
        finally:
            self._local.depth = depth
            if not nested:
                with self._cond:
                    self._readers -= 1
                    if not self._readers:
                        self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        me = threading.get_ident()
        if self._writer == me:  # inside the thread's own write
            yield
            return
        if self._read_depth():
            raise RuntimeError("a read cannot become a write (it would deadlock)")
        with self._cond:
            self._waiting_writers += 1
            try:
                self._cond.wait_for(lambda: self._writer is None and not self._readers)
            finally:
                self._waiting_writers -= 1
            self._writer = me
        try:
            yield
        finally:
            with self._cond:
                self._writer = None
                self._cond.notify_all()

    def reading_here(self) -> bool:
        """The calling thread holds a read (and not the write)."""
        return bool(self._read_depth()) and self._writer != threading.get_ident()
