"""Store leases: one run at a time across processes (consolidation's, maintenance's). An owner
names the run, the host and the process (``run@host:pid``), so a lease whose process is gone
on this host is taken over at once and one held on another host lapses at its expiry."""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable
from datetime import datetime, timedelta

from graphmem.errors import ConflictError
from graphmem.store.base import MemoryStore

log = logging.getLogger(__name__)


def dead_here(owner: str) -> bool:
    """True when ``owner`` (``run@host:pid``) names a process of this host that is gone.

    Example:
        >>> dead_here(f"run@{socket.gethostname()}:{os.getpid()}")  # this very process
        False
        >>> dead_here("run@another-host:1")
        False
    """
    _, _, where = owner.rpartition("@")
    host, _, pid = where.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class Lease:
    """The store lease ``name`` for run ``run`` of ``what``: held for ``span`` from each
    take or renewal, given back by ``release``.

    Example:
        >>> import tempfile
        >>> from datetime import UTC
        >>> from graphmem.store.sqlite.store import SQLiteStore
        >>> store = SQLiteStore(tempfile.mkdtemp()); store.open()
        >>> def clock() -> datetime: return datetime(2026, 1, 1, tzinfo=UTC)
        >>> a, b = (Lease(store, "job", run, timedelta(minutes=5), clock, "job")
        ...         for run in ("a", "b"))
        >>> a.take() is None, b.take() == a.owner
        (True, True)
        >>> a.release(); b.take() is None
        True
        >>> store.close()
    """

    def __init__(self, store: MemoryStore, name: str, run: str, span: timedelta,
                 clock: Callable[[], datetime], what: str) -> None:
        self.store, self.name, self.span, self.clock, self.what = store, name, span, clock, what
        self.owner = f"{run}@{socket.gethostname()}:{os.getpid()}"

    def _acquire(self) -> bool:
        now = self.clock()
        return self.store.acquire_lease(self.name, self.owner, now + self.span, now)

    def take(self) -> str | None:
        """None when this run holds the lease now, else who does."""
        if self._acquire():
            return None
        held = self.store.lease_holder(self.name)
        holder = held[0] if held is not None else "unknown"
        if dead_here(holder):
            log.warning("%s lease of a process that is gone (%s): taking over", self.what,
                        holder)
            self.store.release_lease(self.name, holder)
            if self._acquire():
                return None
        return holder

    def renew(self) -> None:
        if not self._acquire():
            raise ConflictError(f"the {self.what} lease was lost: another run took it")

    def release(self) -> None:
        self.store.release_lease(self.name, self.owner)
