"""WAL checkpoints off the writers' path (ADR 0044).

SQLite's automatic checkpoint runs inside the commit that takes the write-ahead log past 1,000
pages: that commit copies the log into the database file and syncs it before it returns. At 1M
memories such a commit took 24-126 ms, and a retrieval that records its accesses waited for it
(the embedded library's default). Here the store's connections checkpoint by themselves only
far behind (``BACKSTOP_PAGES``), and a thread of this module's runs a PASSIVE checkpoint on a
connection of its own shortly after commits: readers and writers go on meanwhile, and a commit
returns as soon as its log pages are written.

A checkpoint that fails (the disk, a lock) is logged and tried again after the next commit;
nothing is lost by a late checkpoint: the committed pages are in the log until copied.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

#: the store's own connections checkpoint inside a commit only past this many log pages (the
#: thread fell behind: readers pinned old pages, or it failed); SQLite's default is 1000
BACKSTOP_PAGES = 10_000
#: commits within this many seconds share one checkpoint
GATHER_SECONDS = 0.2


class Checkpointer:
    """Runs ``PRAGMA wal_checkpoint(PASSIVE)`` on ``path`` in a thread of its own, at most once
    per ``gather`` seconds while commits come (``committed``). No I/O before the first commit.

    Example:
        >>> import sqlite3, tempfile
        >>> from pathlib import Path
        >>> db = Path(tempfile.mkdtemp()) / "x.db"
        >>> conn = sqlite3.connect(db, isolation_level=None)
        >>> _ = conn.execute("PRAGMA journal_mode = WAL")
        >>> _ = conn.execute("CREATE TABLE t (x)")
        >>> checkpoints = Checkpointer(db)
        >>> checkpoints.committed()
        >>> checkpoints.stop(); checkpoints.runs >= 1
        True
    """

    def __init__(self, path: Path, *, gather: float = GATHER_SECONDS,
                 busy_timeout_ms: int = 30_000) -> None:
        self.path = path
        self.gather = gather
        self.busy_timeout_ms = busy_timeout_ms
        #: checkpoints run, and the log pages the last one found and copied (tests, stats)
        self.runs = 0
        self.last: tuple[int, int] | None = None
        self._cond = threading.Condition()
        self._dirty = False
        self._stopping = False
        self._thread: threading.Thread | None = None

    def committed(self) -> None:
        """A commit added log pages: a checkpoint follows within ``gather`` seconds."""
        with self._cond:
            if self._stopping:
                return
            self._dirty = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="graphmem-checkpoint")
                self._thread.start()
            self._cond.notify_all()

    def stop(self) -> None:
        """Run the checkpoint still due, then end the thread (the store closes after)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        with self._cond:
            self._thread = None
            self._stopping = False

    def _run(self) -> None:
        conn: list[sqlite3.Connection] = []  # this thread's own, opened at the first run
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self._dirty or self._stopping)
                    if not self._dirty:
                        return
                    # gather the commits that come meanwhile into one checkpoint
                    self._cond.wait_for(lambda: self._stopping, self.gather)
                    self._dirty = False
                self._checkpoint(conn)
        finally:
            for c in conn:
                c.close()

    def _checkpoint(self, conn: list[sqlite3.Connection]) -> None:
        try:
            if not conn:
                conn.append(sqlite3.connect(self.path, isolation_level=None))
                conn[0].execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            busy, pages, copied = conn[0].execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error as exc:
            log.warning("WAL checkpoint failed (tried again after the next commit): %s", exc)
            return
        self.runs += 1
        self.last = (int(pages), int(copied))
        log.debug("WAL checkpoint: %d of %d log pages copied (busy %d)", copied, pages, busy)
