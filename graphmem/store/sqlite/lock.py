"""One writer per data folder: an exclusive, non-blocking ``flock`` on the folder itself
(``<dir>/graphmem.lock`` holds the owner's pid for the message). Deleting the lock file by hand
does not let a second writer in; the OS drops the lock when the owning process dies, so a crash
never leaves the folder locked.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from graphmem.errors import StoreLockedError


class FolderLock:
    """One process owns a data folder: an exclusive flock on graphmem.lock in it.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> lock = FolderLock(folder)
        >>> lock.acquire()
        >>> FolderLock(folder).acquire()  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        graphmem.errors.StoreLockedError: ...
        >>> lock.release()
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / "graphmem.lock"
        self._fd: int | None = None
        self._dir_fd: int | None = None

    def acquire(self) -> None:
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            fcntl.flock(dir_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(dir_fd)
            try:
                with open(self.path, encoding="utf-8", errors="replace") as fh:
                    holder = fh.read(32).strip() or "unknown"
            except OSError:
                holder = "unknown"
            raise StoreLockedError(
                f"data folder {self.path.parent} is in use by another process (pid {holder}); "
                "the embedded store allows one process per folder - use Neo4j for several "
                "replicas"
            ) from None
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd, self._dir_fd = fd, dir_fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._dir_fd is not None:
            fcntl.flock(self._dir_fd, fcntl.LOCK_UN)
            os.close(self._dir_fd)
            self._dir_fd = None
