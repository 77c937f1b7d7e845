"""Who holds a store lease: an owner names the run, the host and the process
(``run@host:pid``), so a lease whose process is gone on this host is taken over at once and
one held on another host lapses at its expiry (consolidation's and maintenance's leases)."""

from __future__ import annotations

import os
import socket


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
