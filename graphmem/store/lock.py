"""One writer per data folder: an exclusive, non-blocking ``flock`` on ``<dir>/graphmem.lock``.

The OS drops the lock when the owning process dies, so a crash never leaves the folder locked.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from graphmem.errors import StoreLockedError


class FolderLock:
    def __init__(self, folder: Path) -> None:
        self.path = folder / "graphmem.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise StoreLockedError(
                f"data folder {self.path.parent} is in use by another process (pid {holder}); "
                "the embedded store allows one process per folder - use Neo4j for several "
                "replicas"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
