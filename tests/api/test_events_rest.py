"""``GET /v1/events`` over real HTTP (issue 48): the app under uvicorn on a free port with
``graphmem serve``'s connection limits, written to through REST while clients listen.

A listener that goes away and comes back with ``Last-Event-ID`` misses nothing inside the
retained window and never sees another namespace; the key's scope is checked before the
stream starts; an idle stream gets heartbeats; a shutdown does not wait for listeners."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from graphmem import GraphMemory
from graphmem.api.app import create_app
from graphmem.api.keys import KeyStore
from graphmem.api.server import ConnectionLimits, guarded_protocol
from graphmem.api.settings import Settings
from graphmem.client import AsyncGraphMemClient, GraphMemClient
from graphmem.engine.events import EventLog, MemoryEvent
from graphmem.errors import AuthError, ForbiddenError, UnavailableError, ValidationError
from tests.api.test_rest import _free_port
from tests.conftest import Clock, FakeEmbedder

NS, OTHER = "ops", "hr"


@dataclass
class Served:
    url: str
    keys: dict[str, str]
    mem: GraphMemory
    server: uvicorn.Server
    thread: threading.Thread

    def client(self, who: str = "ops") -> GraphMemClient:
        return GraphMemClient(self.url, self.keys[who])

    def write(self, content: str, ns: str = NS) -> str:
        r = httpx.post(f"{self.url}/v1/memories", json={"namespace": ns, "content": content},
                       headers={"Authorization": f"Bearer {self.keys[ns]}"}, timeout=30)
        assert r.status_code == 201, r.text
        return str(r.json()["id"])


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30  # a liveness bound, not a measurement
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.fixture
def served(tmp_path: Path, clock: Clock) -> Iterator[Served]:
    limits = ConnectionLimits(header_timeout=5, keep_alive_timeout=5, max_connections=64)
    yield from _serve(tmp_path, clock, guarded_protocol(limits))


def _serve(tmp_path: Path, clock: Clock, http: type[asyncio.Protocol]) -> Iterator[Served]:
    mem = GraphMemory.open(tmp_path / "data", clock=clock, embedder=FakeEmbedder())
    store = KeyStore(tmp_path / "keys.db")
    keys = {"ops": store.create([NS], "writer")[1], "hr": store.create([OTHER], "writer")[1],
            "reader": store.create([NS], "reader")[1]}
    port = _free_port()
    app = create_app(Settings(data=str(tmp_path / "data"), keys_file=tmp_path / "keys.db",
                              scheduler=False, port=port), memory=mem)
    app.state.events_heartbeat = 0.2
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, http=http,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    _until(lambda: server.started, "the server did not start")
    yield Served(f"http://127.0.0.1:{port}", keys, mem, server, thread)
    server.should_exit = True
    thread.join(timeout=30)
    mem.close()


def _listen(served: Served, count: int, out: list[MemoryEvent], **kw: Any
            ) -> threading.Thread:
    """A listener in a thread until ``count`` events; it hangs up after the last one."""
    def run() -> None:
        with served.client() as client, contextlib.suppress(UnavailableError):
            for event in client.events(namespace=NS, **kw):  # ends when the server does
                out.append(event)
                if len(out) == count:
                    break

    before = served.mem.core.events.listening()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    _until(lambda: served.mem.core.events.listening() > before, "the listener did not connect")
    return thread


def test_a_listener_that_comes_back_misses_nothing_and_sees_no_other_namespace(
        served: Served) -> None:
    first: list[MemoryEvent] = []
    listener = _listen(served, 3, first)
    written = [served.write("deploy note 0")]
    foreign = [served.write("an hr note while ops listens", ns=OTHER)]
    written += [served.write(f"deploy note {i}") for i in (1, 2)]
    listener.join(timeout=30)
    assert [(e.type, e.memory_id) for e in first] == [("stored", i) for i in written]
    _until(lambda: served.mem.core.events.listening() == 0, "the listener did not hang up")

    # while nobody listens: more writes here, and writes in another namespace
    later = [served.write(f"later note {i}") for i in range(4)]
    foreign += [served.write(f"hr note {i}", ns=OTHER) for i in range(2)]
    httpx.delete(f"{served.url}/v1/memories/{written[0]}", params={"namespace": NS},
                 headers={"Authorization": f"Bearer {served.keys['ops']}"}).raise_for_status()

    again: list[MemoryEvent] = []
    listener = _listen(served, 6, again, last_event_id=first[-1].id)
    live = served.write("a note after the resume")
    listener.join(timeout=30)
    assert [(e.type, e.memory_id) for e in again] == \
        [("stored", i) for i in later] + [("deleted", written[0]), ("stored", live)]
    assert not {e.memory_id for e in first + again} & set(foreign)
    assert {e.namespace for e in first + again} == {NS}


def test_the_stream_resumes_itself_when_the_connection_drops(served: Served) -> None:
    got: list[MemoryEvent] = []
    listener = _listen(served, 4, got)
    ids = [served.write("before the drop"), served.write("just before the drop")]
    _until(lambda: len(got) == 2, "no events")
    # the server ends every stream (as a restart of a proxy would): the client reconnects
    # with the last id it saw, and the writes made meanwhile arrive once
    served.mem.core.events.close()
    ids += [served.write("during the drop"), served.write("after the drop")]
    listener.join(timeout=30)
    assert [e.memory_id for e in got] == ids and [e.type for e in got] == ["stored"] * 4


def test_the_key_is_checked_before_the_stream_starts(served: Served) -> None:
    url = f"{served.url}/v1/events"
    for headers, status in (({}, 401), ({"Authorization": "Bearer gm_nope"}, 401),
                            ({"Authorization": f"Bearer {served.keys['hr']}"}, 403)):
        with httpx.stream("GET", url, params={"namespace": NS}, headers=headers,
                          timeout=10) as r:  # a stream, were it one, is not read to its end
            assert r.status_code == status
            assert r.headers["content-type"] == "application/json"
    with httpx.stream("GET", url, params={"namespace": NS}, timeout=10,
                      headers={"Authorization": f"Bearer {served.keys['ops']}",
                               "Last-Event-ID": "no-such-id"}) as bad:
        assert bad.status_code == 422
        assert json.loads(bad.read())["error"]["code"] == "invalid_input"
    with pytest.raises(ForbiddenError):
        next(iter(served.client("hr").events(namespace=NS)))
    with pytest.raises(AuthError), GraphMemClient(served.url, "gm_nope") as nobody:
        next(iter(nobody.events(namespace=NS)))
    with pytest.raises(ValidationError):
        next(iter(served.client().events(namespace=NS, last_event_id="x")))
    assert served.mem.core.events.listening() == 0
    # a reader may listen (reading is all it does)
    with httpx.stream("GET", url, params={"namespace": NS}, timeout=10,
                      headers={"Authorization": f"Bearer {served.keys['reader']}"}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")


def test_an_idle_stream_gets_heartbeats_and_a_window_too_old_is_told(
        served: Served, clock: Clock) -> None:
    object.__setattr__(served.mem.core, "events", EventLog(retain=2, clock=clock))
    ids = [served.write(f"note {i}") for i in range(4)]
    log = served.mem.core.events
    with httpx.stream("GET", f"{served.url}/v1/events", params={"namespace": NS}, timeout=10,
                      headers={"Authorization": f"Bearer {served.keys['ops']}",
                               "Last-Event-ID": f"{log.epoch}-1"}) as r:
        lines: list[str] = []
        for line in r.iter_lines():
            lines.append(line)
            if lines.count(": heartbeat") == 2:
                break
    assert lines[0] == "retry: 2000"
    events = [line for line in lines if line.startswith("event: ")]
    assert events == ["event: missed", "event: stored", "event: stored"]
    assert f'"memory_id": "{ids[-1]}"' in "\n".join(lines)


def test_the_async_client_iterates_the_events(served: Served) -> None:
    async def main() -> list[MemoryEvent]:
        got: list[MemoryEvent] = []
        async with AsyncGraphMemClient(served.url, served.keys["ops"]) as client:
            stream = client.events(namespace=NS, last_event_id=f"{log.epoch}-0")
            async for event in stream:
                got.append(event)
                if len(got) == 2:
                    break
            await stream.aclose()  # type: ignore[attr-defined]
        return got

    log = served.mem.core.events
    ids = [served.write("async one"), served.write("async two")]
    got = asyncio.run(main())
    assert [e.memory_id for e in got] == ids


def test_a_shutdown_does_not_wait_for_listeners(served: Served) -> None:
    got: list[MemoryEvent] = []
    _listen(served, 1000, got, reconnect=False)
    served.server.should_exit = True  # uvicorn's graceful shutdown, as on SIGTERM
    served.thread.join(timeout=20)
    assert not served.thread.is_alive(), "the open event stream held the shutdown"


def test_the_viewers_server_does_not_wait_for_an_open_page_either(tmp_path: Path,
                                                                   clock: Clock) -> None:
    """``graphmem viewer`` runs uvicorn without the limits: its protocol still closes event
    streams at shutdown (an open page held Ctrl+C until it was closed)."""
    from graphmem.api.server import stream_closing_protocol

    serving = _serve(tmp_path, clock, stream_closing_protocol())
    served = next(serving)
    _listen(served, 1000, [], reconnect=False)
    served.server.should_exit = True
    served.thread.join(timeout=20)
    assert not served.thread.is_alive(), "the open event stream held the shutdown"
    next(serving, None)  # the memory closes


def test_the_bench_listeners_read_every_event(served: Served) -> None:
    """``graphmem bench api --listeners N``'s pool: N streams open before the writes, each
    reads every event of the written namespace, and all of them end on ``close``."""
    from graphmem.bench.listeners import Listeners

    pool = Listeners(served.url, served.keys["reader"], NS, 5)
    pool.open()
    assert pool.connected == 5 and served.mem.core.events.listening() == 5
    for i in range(3):
        served.write(f"bench note {i}")
    served.write("not theirs", ns=OTHER)
    _until(lambda: pool.events == 15, f"{pool.events} of 15 events read")
    assert pool.close() == {"listeners": 5, "connected": 5, "events_read": 15}
    _until(lambda: served.mem.core.events.listening() == 0, "the streams did not end")
    refused = Listeners(served.url, served.keys["hr"], NS, 2)
    with pytest.raises(RuntimeError, match="refused"):
        refused.open()
    refused.close()
