"""The Neo4j launcher of the tests and benchmarks cleans up after itself: a server started
without a data folder of its own removes its temporary one when it stops (it used to leave
an empty ``graphmem-neo4j-*`` folder in /tmp on every run), and one given a folder keeps it
(the benchmarks name one to measure the store's size)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem.bench.neo4j_launcher import Neo4jServer, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))


def _started(server: Neo4jServer) -> Path:
    try:
        server.start()
    except Exception as exc:  # Maven Central out of reach: say so, as the session fixture does
        pytest.skip(f"the Neo4j launcher could not start: {exc}")
    assert server.folder is not None
    return server.folder


def test_a_temporary_data_folder_goes_with_the_server() -> None:
    server = Neo4jServer(heap="512m")
    folder = _started(server)
    try:
        assert folder.is_dir()
        assert folder.name.startswith("graphmem-neo4j-")
    finally:
        server.stop()
    assert not folder.exists()


@pytest.mark.slow
def test_a_data_folder_given_is_kept(tmp_path: Path) -> None:
    server = Neo4jServer(tmp_path / "neo4j", heap="512m")
    folder = _started(server)
    try:
        assert folder == tmp_path / "neo4j"
    finally:
        server.stop()
    assert folder.is_dir()  # the harness removes its own store inside; the folder stays
