"""API replicas on one graph database never lose an acknowledged write (issue 45): two (and,
marked slow, four) ``graphmem serve`` processes on FalkorDB and on the real Neo4j of the test
run; eight clients spread over them race on the same explicit id, the same content,
overlapping batches and one session, several rounds each. Every 201 is readable afterwards
with its own content, the losers got 409 or the one memory reinforced, no twins, the session
one chain."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphmem.api.keys import KeyStore
from tests.api.test_rest import _free_port, _wait_ready
from tests.conftest import fresh_graph

CLIENTS = 8
NS = "race"


class Replicas:
    """``n`` serve processes on ``target``, and a client per racer, spread over them."""

    def __init__(self, tmp: Path, target: str, n: int, graph: str | None) -> None:
        gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
        assert gm
        keys = tmp / "keys.db"
        self.key = KeyStore(keys).create([NS], "writer")[1]
        env = {**os.environ, "GRAPHMEM_KEYS_FILE": str(keys), "GRAPHMEM_SCHEDULER": "false"}
        if graph:
            env["GRAPHMEM_FALKORDB_GRAPH"] = graph
        self.procs: list[subprocess.Popen[bytes]] = []
        self.urls: list[str] = []
        for i in range(n):
            port = _free_port()
            log = tmp / f"serve-{i}.log"
            proc = subprocess.Popen([gm, "serve", "--data", target, "--port", str(port)],
                                    env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))
            self.procs.append(proc)
            self.urls.append(f"http://127.0.0.1:{port}")
            _wait_ready(proc, self.urls[-1], log)
        auth = {"Authorization": f"Bearer {self.key}"}
        self.clients = [httpx.Client(base_url=self.urls[i % n], headers=auth, timeout=120)
                        for i in range(CLIENTS)]

    def race(self, request: Callable[[int, httpx.Client], httpx.Response]
             ) -> list[httpx.Response]:
        gate = threading.Barrier(CLIENTS)
        out: list[Any] = [None] * CLIENTS

        def go(i: int) -> None:
            gate.wait()
            out[i] = request(i, self.clients[i])

        threads = [threading.Thread(target=go, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        return out

    def close(self) -> None:
        for c in self.clients:
            c.close()
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            p.wait(timeout=60)


def _replicas(request: pytest.FixtureRequest, tmp_path: Path, n: int) -> Iterator[Replicas]:
    target, graph = fresh_graph(request, request.param)
    r = Replicas(tmp_path, target, n, graph)
    yield r
    r.close()


@pytest.fixture(params=["falkordb", "neo4j"])
def two(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Replicas]:
    yield from _replicas(request, tmp_path, 2)


@pytest.fixture(params=["falkordb", "neo4j"])
def four(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Replicas]:
    yield from _replicas(request, tmp_path, 4)


def _rounds(r: Replicas, rounds: int) -> None:
    c = r.clients[0]
    for n in range(rounds):
        # the same explicit id: one 201, the rest 409, the 201's content stored
        rid = f"race-{n}-{uuid.uuid4().hex[:8]}"
        def claim(i: int, cl: httpx.Client, rid: str = rid) -> httpx.Response:
            return cl.post("/v1/memories", json={"namespace": NS, "id": rid,
                                                 "content": f"writer {i} claims {rid}"})

        got = r.race(claim)
        codes = [g.status_code for g in got]
        assert codes.count(201) == 1 and set(codes) <= {201, 409}, codes
        winner = codes.index(201)
        stored = c.get(f"/v1/memories/{rid}", params={"namespace": NS}).json()
        assert stored["content"] == f"writer {winner} claims {rid}"
        # the same content: every writer answered with the one memory, no twin
        text = f"round {n} {uuid.uuid4().hex} the cache service note"
        def same(i: int, cl: httpx.Client, text: str = text) -> httpx.Response:
            return cl.post("/v1/memories", json={"namespace": NS, "content": text})

        got = r.race(same)
        assert all(g.status_code in (200, 201) for g in got), [g.text for g in got]
        assert len({g.json()["id"] for g in got}) == 1
        # overlapping batches: the shared items one memory each, every own item stored
        shared = [f"shared {n} {k} {uuid.uuid4().hex}" for k in range(3)]
        def overlap(i: int, cl: httpx.Client, shared: list[str] = shared,
                    n: int = n) -> httpx.Response:
            return cl.post("/v1/memories", json={
                "namespace": NS, "items": [{"content": t} for t in shared]
                + [{"content": f"own {n} {i} {uuid.uuid4().hex}"}]})

        got = r.race(overlap)
        assert all(g.status_code in (200, 201) for g in got), [g.text for g in got]
        batches = [g.json() for g in got]
        for k in range(3):
            assert len({b[k]["id"] for b in batches}) == 1
        for b in batches:
            assert c.get(f"/v1/memories/{b[-1]['id']}", params={"namespace": NS}
                         ).status_code == 200
        # one session: one chain in writing order
        sid = f"s{n}-{uuid.uuid4().hex[:6]}"
        def turn(i: int, cl: httpx.Client, sid: str = sid) -> httpx.Response:
            return cl.post("/v1/memories", json={
                "namespace": NS, "content": f"turn {i} of {sid}", "session_id": sid,
                "created_at": f"2026-01-01T00:{i:02d}:00Z"})

        got = r.race(turn)
        assert all(g.status_code == 201 for g in got), [g.text for g in got]
        order = [g.json()["id"] for g in got]
        follows = set()
        for mid in order:
            edges = c.get(f"/v1/memories/{mid}/relations", params={"namespace": NS}).json()
            follows |= {(e["source_id"], e["target_id"]) for e in edges
                        if e["type"] == "FOLLOWS"}
        assert follows == set(itertools.pairwise(order))
    # no twins anywhere
    listed = c.get("/v1/memories", params={"namespace": NS, "limit": 1000}).json()
    items = listed["items"] if isinstance(listed, dict) else listed
    contents = [m["content"] for m in items]
    assert len(contents) == len(set(contents))


def test_two_replicas_never_lose_an_acknowledged_write(two: Replicas) -> None:
    _rounds(two, 2)


@pytest.mark.slow
def test_four_replicas_never_lose_an_acknowledged_write(four: Replicas) -> None:
    _rounds(four, 10)
