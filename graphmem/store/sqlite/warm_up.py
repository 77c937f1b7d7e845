"""Reading the tables a retrieval reads once after the store opens (ADR 0030).

A retrieval at 1M memories reads a few hundred rows scattered over ~2 GB of b-trees (the
memories rows and their id index, the full-text index, the keyword statistics, the edges and
their target index). From a cold page cache each is a random read of its own: a new query's
p50 was ~53 ms where the same query with those pages cached took ~28. So after open a niced
thread scans those b-trees in order, on a read-only connection of its own, putting their pages
in the OS's page cache (not this process's memory: a small SQLite cache, no map). The vectors
table (4 GB at 1M) is not read: retrieval scores from the mapped rows.

It is skipped when the database file is smaller than ``min_bytes`` (its pages are cached after a
few queries anyway) or larger than ``share`` of the machine's memory (it would push out more
than it brings in), and stops when the store closes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

#: (b-tree, a statement that reads every page of it), in the order a retrieval needs them
STATEMENTS: tuple[tuple[str, str], ...] = (
    ("memories", "SELECT sum(length(content)) FROM memories"),
    ("memory ids", "SELECT count(*) FROM memories INDEXED BY sqlite_autoindex_memories_1 "
                   "WHERE namespace >= ''"),
    ("full-text index", "SELECT sum(length(block)) FROM memory_fts_data"),
    ("keyword statistics", "SELECT sum(df) FROM keyword_terms"),
    ("edges", "SELECT sum(length(source)) FROM edges"),
    ("edge targets", "SELECT count(*) FROM edges INDEXED BY ix_edges_target "
                     "WHERE namespace >= ''"),
)


def physical_memory() -> int | None:
    """The machine's memory in bytes (None where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


class WarmUp:
    """The scan, in a daemon thread; ``start`` after open, ``stop`` before close.

    Example:
        >>> import sqlite3, tempfile
        >>> path = Path(tempfile.mkdtemp()) / "small.db"
        >>> sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
        >>> warm = WarmUp(path)  # 64 MB at the least
        >>> warm.wanted(), warm.start(), warm.done
        (False, None, [])
    """

    def __init__(self, path: Path, *, share: float = 0.5, min_bytes: int = 64 << 20) -> None:
        self.path = path
        self.share = share
        self.min_bytes = min_bytes
        self.done: list[str] = []  # the b-trees read, in order
        self.seconds: float | None = None
        self._stop = threading.Event()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def wanted(self) -> bool:
        memory = physical_memory()
        try:
            size = self.path.stat().st_size
        except OSError:
            return False
        return size >= self.min_bytes and (memory is None or size <= self.share * memory)

    def start(self) -> None:
        if not self.wanted():
            log.debug("warm-up skipped: the database is under %d bytes or over %.0f%% of "
                      "memory", self.min_bytes, 100 * self.share)
            return
        self._stop.clear()
        self.done, self.seconds = [], None
        self._thread = threading.Thread(target=self._run, name="graphmem-warm-up",
                                        daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            if self._conn is not None:
                self._conn.interrupt()  # the statement running stops at its next step
        self.wait()

    def _run(self) -> None:
        from graphmem.store.ann.keeper import lowest_priority

        lowest_priority()
        began = time.perf_counter()
        try:
            with self._lock:
                if self._stop.is_set():
                    return
                self._conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                             check_same_thread=False)
            self._conn.execute("PRAGMA cache_size = -2048")  # the OS keeps the pages
            for name, sql in STATEMENTS:
                if self._stop.is_set():
                    return
                self._conn.execute(sql).fetchall()
                self.done.append(name)
            self.seconds = round(time.perf_counter() - began, 2)
            log.info("warm-up read %d b-trees in %.1f s", len(self.done), self.seconds)
        except sqlite3.Error as exc:  # interrupted by close, or a table this file lacks
            if not self._stop.is_set():
                log.warning("warm-up stopped: %s", exc)
        finally:
            with self._lock:
                if self._conn is not None:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.close()
                    self._conn = None
