"""The Python client's transport behaviour against real HTTP servers on loopback: a server
that cannot be reached is ``UnavailableError``; reads are retried on 502/503/504 and on
connection failures, writes never are."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from graphmem.client import AsyncGraphMemClient, GraphMemClient
from graphmem.errors import GraphMemError, StoreError, UnavailableError
from graphmem.models import Memory

MEMORY = Memory(id="m1", namespace="ops", content="the deploy failed").to_dict()


class Flaky:
    """Answers 503 to the first ``failures`` requests, then 200 with a memory."""

    def __init__(self, failures: int) -> None:
        self.failures, self.requests = failures, 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.requests += 1
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                if outer.requests <= outer.failures:
                    status, body = 503, {"error": {"code": "store_error",
                                                   "message": "the store is restarting"}}
                else:
                    status, body = 200, MEMORY
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def flaky(request: pytest.FixtureRequest) -> Iterator[Flaky]:
    server = Flaky(request.param)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_is_an_unavailable_error() -> None:
    c = GraphMemClient(f"http://127.0.0.1:{_closed_port()}", "gm_x", backoff=0.01)
    for call in (lambda: c.get("m1", namespace="ops"),
                 lambda: c.store("a note", namespace="ops"),
                 lambda: c.retrieve("q", namespace="ops")):
        with pytest.raises(UnavailableError) as err:
            call()
        assert isinstance(err.value, GraphMemError) and "could not be reached" in str(err.value)


@pytest.mark.parametrize("flaky", [2], indirect=True)
def test_a_read_is_retried_until_the_server_answers(flaky: Flaky) -> None:
    got = GraphMemClient(flaky.url, "gm_x", retries=2, backoff=0.01).get("m1", namespace="ops")
    assert isinstance(got, Memory) and got.content == "the deploy failed"
    assert flaky.requests == 3


@pytest.mark.parametrize("flaky", [3], indirect=True)
def test_retries_end_with_the_servers_error(flaky: Flaky) -> None:
    with pytest.raises(StoreError, match="restarting"):
        GraphMemClient(flaky.url, "gm_x", retries=2, backoff=0.01).get("m1", namespace="ops")
    assert flaky.requests == 3


@pytest.mark.parametrize("flaky", [1], indirect=True)
def test_a_write_is_never_repeated(flaky: Flaky) -> None:
    with pytest.raises(StoreError):
        GraphMemClient(flaky.url, "gm_x", retries=5, backoff=0.01).store("x", namespace="ops")
    assert flaky.requests == 1


@pytest.mark.parametrize("flaky", [1], indirect=True)
def test_the_async_client_retries_reads_too(flaky: Flaky) -> None:
    import asyncio

    async def go() -> Memory:
        async with AsyncGraphMemClient(flaky.url, "gm_x", backoff=0.01) as c:
            return await c.get("m1", namespace="ops")

    assert asyncio.run(go()).id == "m1" and flaky.requests == 2
