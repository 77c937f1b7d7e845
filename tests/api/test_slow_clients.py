"""Slow clients against a real `graphmem serve` process with a 1024 open-files limit (issue 45).

uvicorn alone held every connection that sent its request head slowly, for as long as the
client kept it open, and accepted connections until the process ran out of file descriptors:
1,100 such sockets from a client without a key made every keyed request fail, and the log said
nothing. The server (``api/server.py``) bounds open connections below the open-files limit
(closing the one waiting longest for a request head to make room), closes a connection whose
request head is not complete within ``GRAPHMEM_HEADER_TIMEOUT`` and logs what it closed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphmem.api.keys import KeyStore
from graphmem.api.server import ConnectionGuard, ConnectionLimits
from graphmem.api.settings import Settings
from graphmem.errors import ConfigError
from tests.api.test_rest import _free_port, _wait_ready

SLOW_SOCKETS = 1100
FD_LIMIT = 1024
HEADER_TIMEOUT = 6.0
KEEP_ALIVE = 2.0
HEAD = b"GET /v1/stats?namespace=ops HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # never finished


@dataclass
class Served:
    url: str
    key: str
    log: Path
    proc: subprocess.Popen[bytes]

    def text(self) -> str:
        return self.log.read_text(errors="replace")


def _limit_open_files() -> None:  # in the child, before exec: `ulimit -n 1024`
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, hard))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = SLOW_SOCKETS + 200  # this process holds the slow sockets
    if hard != resource.RLIM_INFINITY and hard < max(need, FD_LIMIT):
        pytest.skip(f"the open-files hard limit ({hard}) is below {need}")
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    tmp = tmp_path_factory.mktemp("slow")
    keys = tmp / "keys.db"
    key = KeyStore(keys).create(["ops"], "reader")[1]
    gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert gm
    env = {**os.environ, "GRAPHMEM_KEYS_FILE": str(keys), "GRAPHMEM_SCHEDULER": "false",
           "GRAPHMEM_HEADER_TIMEOUT": str(HEADER_TIMEOUT),
           "GRAPHMEM_KEEP_ALIVE_TIMEOUT": str(KEEP_ALIVE),
           "GRAPHMEM_LIMITS_LOG_SECONDS": "2"}
    port = _free_port()
    log = tmp / "serve.log"
    proc = subprocess.Popen([gm, "-v", "serve", "--data", str(tmp / "data"),
                             "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=log.open("w"), preexec_fn=_limit_open_files)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_ready(proc, url, log)
        yield Served(url, key, log, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    with contextlib.suppress(ValueError):  # sockets of this process open above the old limit
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _slow_socket(url: str) -> socket.socket | None:
    host, port = url.removeprefix("http://").split(":")
    try:
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(HEAD)
    except OSError:
        return None
    s.setblocking(False)
    return s


def _still_open(s: socket.socket) -> bool:
    """Whether the server still holds ``s``: one more header line goes through and the server
    has not closed it (a closed socket reads as readable: end of stream or a reset)."""
    try:
        if s.recv(1, socket.MSG_PEEK) == b"":  # it never answers an unfinished head
            return False
    except BlockingIOError:  # nothing to read: not closed
        pass
    except OSError:
        return False
    try:
        s.send(b"X-Slow: 1\r\n")
    except OSError:
        return False
    return True


def _keyed(served: Served) -> int | str:
    try:
        r = httpx.get(f"{served.url}/v1/stats", params={"namespace": "ops"},
                      headers={"Authorization": f"Bearer {served.key}"}, timeout=5)
        return r.status_code
    except httpx.HTTPError as exc:
        return type(exc).__name__


def _wait_for_line(served: Served, pattern: str, seconds: float = 10) -> re.Match[str]:
    deadline = time.monotonic() + seconds
    while True:
        found = re.search(pattern, served.text())
        if found or time.monotonic() > deadline:
            assert found, f"no log line like {pattern!r} in:\n{served.text()[-3000:]}"
            return found
        time.sleep(0.2)


def test_keyed_requests_are_served_while_1100_slow_sockets_without_a_key_are_open(
        served: Served) -> None:
    started = time.monotonic()
    socks = [s for s in (_slow_socket(served.url) for _ in range(SLOW_SOCKETS)) if s]
    try:
        answers = []
        held = []
        # within the header timeout: only the bound protects the keyed requests
        while time.monotonic() - started < HEADER_TIMEOUT - 2:
            held.append(sum(_still_open(s) for s in socks))
            answers.append(_keyed(served))
            time.sleep(0.3)
        assert answers and all(a == 200 for a in answers), answers
        # the server held as many slow sockets as its bound allows: far more than none, fewer
        # than the open-files limit leaves (once it has accepted the ones the kernel queued)
        assert min(held) > 300 and max(held[1:]) < FD_LIMIT - 100, held
        # the log says what the bound closed, with counts
        over = _wait_for_line(served, r"WARNING graphmem\.api\.server: connection limits: "
                                      r"(\d+) closed to stay within (\d+) open")
        closed, bound = int(over[1]), int(over[2])
        assert bound < FD_LIMIT - 100 and closed >= SLOW_SOCKETS - bound, over[0]
    finally:
        for s in socks:
            s.close()


def test_a_request_head_not_complete_within_the_header_timeout_is_closed(
        served: Served) -> None:
    slow = _slow_socket(served.url)
    assert slow is not None
    opened = time.monotonic()
    try:
        while _still_open(slow):  # a header line every 0.25 s does not keep it open
            assert time.monotonic() - opened < HEADER_TIMEOUT + 4, "still open"
            time.sleep(0.25)
        assert time.monotonic() - opened > HEADER_TIMEOUT - 1
    finally:
        slow.close()
    assert _keyed(served) == 200
    _wait_for_line(served, rf"[1-9]\d* closed whose request head was not complete within "
                           rf"{HEADER_TIMEOUT:g} s")


def _read_until_closed(s: socket.socket, seconds: float) -> bytes:
    s.settimeout(seconds)
    got = b""
    try:
        while chunk := s.recv(65536):
            got += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return got


def test_a_request_head_over_the_size_bound_is_answered_431_and_closed(served: Served) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(HEAD)
        with contextlib.suppress(OSError):  # the server may close while this still sends
            for _ in range(20):  # 20 x 8 KiB of one header, never finished
                s.sendall(b"X-Big-" + b"a" * 8192 + b": b\r\n")
        answer = _read_until_closed(s, 5)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    _wait_for_line(served, r"[1-9]\d* answered 431 whose request head exceeded 65536 bytes")
    assert _keyed(served) == 200


def test_a_request_head_over_the_bound_in_one_burst_is_answered_431(served: Served) -> None:
    """The same bound when the whole head arrives in one read (it completes before the
    count of unfinished heads sees it): 431, closed, the app never called."""
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nhost: x\r\n"
                  + b"".join(b"X-Big-%d: " % i + b"a" * 8192 + b"\r\n" for i in range(12))
                  + b"\r\n")
        answer = _read_until_closed(s, 5)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert _keyed(served) == 200


def test_an_idle_keep_alive_connection_is_closed_after_the_keep_alive_timeout(
        served: Served) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answered = time.monotonic()
        answer = _read_until_closed(s, KEEP_ALIVE + 3)
        idle = time.monotonic() - answered
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert KEEP_ALIVE - 0.5 < idle < KEEP_ALIVE + 2, idle
    _wait_for_line(served, r"INFO graphmem\.api\.server: connection limits: "
                           rf"[1-9]\d* idle keep-alive closed after {KEEP_ALIVE:g} s")


class _Conn:
    """What the guard sees of a connection."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.shed_calls = 0

    def shed(self) -> None:
        self.shed_calls += 1


def test_beyond_the_bound_the_longest_waiting_goes_and_with_none_waiting_the_new_one(
        caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.new_event_loop()
    try:
        guard: Any = ConnectionGuard(ConnectionLimits(  # Any: it admits fakes below
            header_timeout=10, keep_alive_timeout=5, max_connections=2))
        a, b, c, d = (_Conn(loop) for _ in range(4))
        for conn in (a, b):
            assert guard.admit(conn)
            guard.waiting[conn] = None  # waiting for a request head
        assert guard.admit(c)
        assert (a.shed_calls, b.shed_calls) == (1, 0)  # the longest waiting made room
        guard.waiting.clear()  # b and c have requests in flight: nothing to close
        assert not guard.admit(d)
        assert len(guard.open) == 2
        with caplog.at_level(logging.INFO, logger="graphmem.api.server"):
            guard.write_line()
        assert caplog.records[-1].levelno == logging.WARNING
        assert caplog.records[-1].getMessage() == (
            "connection limits: 1 closed to stay within 2 open (the longest waiting for a "
            "request head); 1 refused at 2 open (every one with a request in flight); "
            "2 open now")
    finally:
        loop.close()


def test_the_limits_are_settings() -> None:
    s = Settings.from_env({"GRAPHMEM_HEADER_TIMEOUT": "3", "GRAPHMEM_MAX_CONNECTIONS": "50"})
    assert (s.header_timeout, s.keep_alive_timeout, s.max_connections) == (3.0, 5.0, 50)
    with pytest.raises(ConfigError, match="GRAPHMEM_HEADER_TIMEOUT"):
        Settings.from_env({"GRAPHMEM_HEADER_TIMEOUT": "0"})
    limits = ConnectionLimits.from_settings(
        header_timeout=s.header_timeout, keep_alive_timeout=s.keep_alive_timeout,
        max_connections=10**9, fd_reserve=s.fd_reserve, max_head_bytes=s.max_head_bytes,
        log_seconds=s.limits_log_seconds)
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY:  # never more connections than descriptors
        assert limits.max_connections < soft
