"""Limits that hold across processes and replicas (issue 45, "Limits enforced across processes
and replicas"): the tool-capture cap is counted in the store, so ``graphmem capture`` hook
calls (a process each) and API replicas count against one window per namespace, agent and
tool; maintenance takes a lease in the store, so one replica runs it at a time and one per
interval, the others skip and count it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from graphmem.config import CaptureConfig, GraphMemConfig, StoreConfig
from graphmem.errors import ConflictError
from tests.conftest import Clock, FakeEmbedder

GM = shutil.which("graphmem", path=str(Path(sys.executable).parent)) or shutil.which("graphmem")
NS = "limits"
CAP = 2


def _capture(env: dict[str, str], data: str, tool: str, i: int) -> subprocess.Popen[str]:
    """One ``graphmem capture`` hook call: a process of its own."""
    assert GM, "the graphmem console script is not installed"
    return subprocess.Popen([GM, "capture", "--data", data, "--json", "-n", NS,
                             "--agent", "coder", "--tool", tool, "--input", f"make test {i}",
                             "--output", "ok"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _captured(proc: subprocess.Popen[str]) -> bool:
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    return bool(json.loads(out)["captured"])


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")
           or k in ("GRAPHMEM_NEO4J_USER", "GRAPHMEM_NEO4J_PASSWORD")}
    return {**env, "GRAPHMEM_CAPTURE__MAX_PER_MINUTE": str(CAP), **extra}


def _tool_usages(mem: GraphMemory) -> list[str]:
    return [m.metadata["tool"] for m in mem.list_page(namespace=NS, type="tool_usage").items]


def test_capture_cap_holds_across_cli_processes_on_one_folder(tmp_path: Path) -> None:
    """Four hook calls, one after the other (the folder takes one process at a time), with a
    cap of 2: today each process counted from zero and all four were captured."""
    data = str(tmp_path / "data")
    GraphMemory.open(data, embedder=FakeEmbedder()).close()
    env = _env()
    got = [_captured(_capture(env, data, "Bash", i)) for i in range(4)]
    assert got == [True, True, False, False]
    assert _captured(_capture(env, data, "Edit", 9))  # one window per tool
    with GraphMemory.open(data, embedder=FakeEmbedder()) as mem:
        assert sorted(_tool_usages(mem)) == ["Bash", "Bash", "Edit"]


@pytest.fixture(params=["falkordb", "neo4j"])
def graph(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, str]]]:
    """A graph store shared by several processes: its URL and the environment naming it
    (a fresh FalkorDB graph, or the test run's Neo4j emptied). The schema is made before
    the processes start."""
    from graphmem.store.graph.store import CypherStore

    if request.param == "falkordb":
        from tests.conftest import open_falkordb_store

        server = request.getfixturevalue("falkordb_server")
        name = f"t{uuid.uuid4().hex}"
        open_falkordb_store(server, name).close()
        yield server.url, {"GRAPHMEM_FALKORDB_GRAPH": name}
        return
    from graphmem.store.graph.neo4j_conn import Neo4jConnection
    from tests.conftest import _wipe_neo4j

    uri = request.getfixturevalue("neo4j_uri")
    _wipe_neo4j(uri)
    store = CypherStore(Neo4jConnection(uri, user=os.environ.get("GRAPHMEM_NEO4J_USER", "neo4j"),
                                        password=os.environ.get("GRAPHMEM_NEO4J_PASSWORD")))
    store.open()
    store.close()
    yield uri, {}


def _config(env: dict[str, str], cap: int = CAP) -> GraphMemConfig:
    from pydantic import SecretStr

    graph, password = env.get("GRAPHMEM_FALKORDB_GRAPH"), os.environ.get(
        "GRAPHMEM_NEO4J_PASSWORD")
    store = StoreConfig(falkordb_graph=graph) if graph else StoreConfig(
        neo4j_password=SecretStr(password) if password else None)
    return GraphMemConfig(store=store, capture=CaptureConfig(max_per_minute=cap))


def test_capture_cap_holds_across_cli_processes_on_a_graph(
        graph: tuple[str, dict[str, str]]) -> None:
    """Four hook calls at once against one graph database, a cap of 2: exactly two kept."""
    url, names = graph
    env = _env(**names)
    procs = [_capture(env, url, "Bash", i) for i in range(4)]
    assert sorted(_captured(p) for p in procs) == [False, False, True, True]
    with GraphMemory.open(url, config=_config(names), embedder=FakeEmbedder()) as mem:
        assert _tool_usages(mem) == ["Bash", "Bash"]


def test_capture_cap_holds_across_replicas_at_the_same_moment(
        graph: tuple[str, dict[str, str]]) -> None:
    """Eight replicas (a GraphMemory each) capture the same agent's tool at one moment, a
    cap of 3: exactly three are kept, the others are counted as dropped where they were
    turned away; another tool has a window of its own."""
    url, names = graph
    clock = Clock()  # one minute for all: the window cannot lapse in between
    replicas = [GraphMemory.open(url, config=_config(names, cap=3), clock=clock,
                                 embedder=FakeEmbedder()) for _ in range(8)]
    try:
        start = threading.Barrier(len(replicas))

        def capture(mem: GraphMemory, n: int) -> bool:
            start.wait()
            return mem.capture_tool(agent="coder", tool="Bash", input=f"ls {n}", output="",
                                    ok=True, namespace=NS) is not None

        threads: list[threading.Thread] = []
        kept: list[bool] = []
        for n, mem in enumerate(replicas):
            t = threading.Thread(target=lambda m=mem, n=n: kept.append(capture(m, n)))
            threads.append(t)
            t.start()
        for t in threads:
            t.join(120)
        assert sorted(kept) == [False] * 5 + [True] * 3
        stats = [mem.stats(namespace=NS)["capture"] for mem in replicas]
        assert sum(s["captured"] for s in stats) == 3 and sum(s["dropped"] for s in stats) == 5
        assert replicas[0].capture_tool(agent="coder", tool="Edit", input="f", output="",
                                        ok=True, namespace=NS) is not None
        clock.advance(seconds=61)  # the window lapsed: a new one opens
        assert replicas[1].capture_tool(agent="coder", tool="Bash", input="pwd", output="",
                                        ok=True, namespace=NS) is not None
        assert sorted(_tool_usages(replicas[0])) == ["Bash"] * 4 + ["Edit"]
    finally:
        for mem in replicas:
            mem.close()


def _stores(request: pytest.FixtureRequest, engine: str, n: int) -> list[Any]:
    """``n`` stores, a connection each, on one graph: a fresh FalkorDB graph (one that has
    never seen a window or a lease), or the test run's Neo4j."""
    from graphmem.store.graph.store import CypherStore

    if engine == "falkordb":
        from tests.conftest import open_falkordb_store

        server, name = request.getfixturevalue("falkordb_server"), f"t{uuid.uuid4().hex}"
        return [open_falkordb_store(server, name) for _ in range(n)]
    from graphmem.store.graph.neo4j_conn import Neo4jConnection

    uri = request.getfixturevalue("neo4j_uri")
    stores = [CypherStore(Neo4jConnection(
        uri, user=os.environ.get("GRAPHMEM_NEO4J_USER", "neo4j"),
        password=os.environ.get("GRAPHMEM_NEO4J_PASSWORD"))) for _ in range(n)]
    for store in stores:
        store.open()
    return stores


@pytest.mark.parametrize("engine", ["falkordb", "neo4j"])
def test_windows_and_leases_hold_when_taken_at_the_same_moment(
        request: pytest.FixtureRequest, engine: str) -> None:
    """Eight connections count against a new window and take a free lease at one moment,
    ten rounds: three events admitted and one owner each round. Before the schema held a
    uniqueness constraint (Neo4j) and an index (FalkorDB, on a graph new to the label)
    for them, concurrent MERGEs each created a node: Neo4j gave every taker the lease,
    FalkorDB some rounds two."""
    from tests.conftest import _wipe_neo4j

    if engine == "neo4j":
        _wipe_neo4j(request.getfixturevalue("neo4j_uri"))
    for round_ in range(10 if engine == "falkordb" else 3):  # FalkorDB: a new graph each
        stores = _stores(request, engine, 8)
        try:
            owners, admitted = _race(stores, f"race-{round_}")
            assert len(owners) == 1, (round_, owners)
            assert sorted(admitted) == [False] * 5 + [True] * 3, round_
            assert stores[0].lease_holder(f"race-{round_}")[0] == owners[0]
        finally:
            for store in stores:
                store.close()


def _race(stores: list[Any], name: str) -> tuple[list[str], list[bool]]:
    """Every store takes the lease ``name`` and counts an event against the window ``name``
    (a limit of 3) at one moment: the owners that got the lease, the events admitted."""
    now = Clock().now
    start = threading.Barrier(len(stores))
    owners: list[str] = []
    admitted: list[bool] = []

    def race(n: int, store: Any) -> None:
        start.wait()
        if store.acquire_lease(name, f"owner-{n}", now + timedelta(minutes=5), now):
            owners.append(f"owner-{n}")
        admitted.append(store.count_event(NS, name, 3, 60, now))

    threads = [threading.Thread(target=race, args=(n, s)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return owners, admitted


def test_maintenance_runs_on_one_replica_at_once(graph: tuple[str, dict[str, str]]) -> None:
    """Two replicas on one graph database run maintenance at the same moment: the one that
    took the lease runs, the other skips (its report says why, nothing scanned) and counts
    it."""
    url, names = graph
    clock = Clock()
    a = GraphMemory.open(url, config=_config(names), clock=clock, embedder=FakeEmbedder())
    b = GraphMemory.open(url, config=_config(names), clock=clock, embedder=FakeEmbedder())
    try:
        for i in range(3):
            a.store(f"note {i} for the maintenance race", namespace=NS, importance=0.9)
        clock.advance(hours=3)
        inside, go_on = threading.Event(), threading.Event()
        namespaces = a.backend.namespaces

        def held_namespaces() -> list[str]:  # a's run, lease taken, waits for b's attempt
            inside.set()
            assert go_on.wait(60)
            return namespaces()

        a.backend.namespaces = held_namespaces  # type: ignore[method-assign]
        reports: dict[str, Any] = {}
        runner = threading.Thread(target=lambda: reports.update(a=a.maintain()))
        runner.start()
        assert inside.wait(60)
        reports["b"] = b.maintain()
        go_on.set()
        runner.join(60)
        assert reports["a"].skipped is None and reports["a"].scanned == 3
        assert reports["b"].skipped and reports["b"].scanned == 0
        assert reports["b"].to_dict()["skipped"] == reports["b"].skipped
        assert (a._maintainer.skipped, b._maintainer.skipped) == (0, 1)
        assert b.maintain().scanned == 3  # a's lease was given back at the end of its run
    finally:
        a.close()
        b.close()


def test_scheduled_maintenance_runs_on_one_replica_per_interval(
        graph: tuple[str, dict[str, str]]) -> None:
    """Two replicas' schedulers tick every 0.3 s on one graph database (the clock stands
    still, so every tick is within one interval): one replica runs maintenance, the other
    skips every tick and counts it; once the runner is gone and its interval has passed,
    the other takes over."""
    import time

    from graphmem.engine.scheduler import MAINTENANCE_JOB, start_scheduler

    url, names = graph
    clock = Clock()
    replicas = [GraphMemory.open(url, config=_config(names), clock=clock,
                                 embedder=FakeEmbedder()) for _ in range(2)]
    runs = [0, 0]
    for n, mem in enumerate(replicas):
        real = mem.maintain

        def counted(*args: Any, _n: int = n, _real: Any = real, **kwargs: Any) -> Any:
            runs[_n] += 1
            return _real(*args, **kwargs)

        mem.maintain = counted  # type: ignore[method-assign]
    schedulers = [start_scheduler(mem, interval_minutes=0.005, consolidation=False)
                  for mem in replicas]
    try:
        deadline = time.monotonic() + 30
        while sum(runs) < 4 or max(j.skipped for j in _jobs(schedulers)) < 4:
            assert time.monotonic() < deadline, f"runs {runs}"
            time.sleep(0.1)
        schedulers[0].pause()
        schedulers[1].pause()
        jobs = _jobs(schedulers)
        runner = 0 if runs[0] else 1
        other = 1 - runner
        assert runs[other] == 0 and jobs[other].ran == 0, runs
        assert jobs[other].skipped >= 4 and jobs[runner].skipped == 0
        schedulers[runner].shutdown(wait=True)  # the runner is gone
        clock.advance(minutes=1)  # and its interval (0.3 s) has long passed
        schedulers[other].resume()
        while schedulers[other].get_job(MAINTENANCE_JOB).func.ran == 0:
            assert time.monotonic() < deadline + 30, "the other replica never took over"
            time.sleep(0.1)
        assert runs[other] >= 1
    finally:
        for s in schedulers:
            if s.running:
                s.shutdown(wait=True)
        for mem in replicas:
            mem.close()


def _jobs(schedulers: list[Any]) -> list[Any]:
    from graphmem.engine.scheduler import MAINTENANCE_JOB

    return [s.get_job(MAINTENANCE_JOB).func for s in schedulers]


def test_maintenance_lease_of_a_dead_process_is_taken_over_a_live_one_skipped(
        tmp_path: Path, clock: Clock) -> None:
    """A run killed on this host left its lease: the next run takes over at once. A lease
    held by a run on another host is respected until it lapses."""
    from graphmem.engine.maintenance import LEASE

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with GraphMemory.open(tmp_path, clock=clock, embedder=FakeEmbedder()) as mem:
        mem.store("a note", namespace=NS)
        until = clock.now + timedelta(minutes=15)
        dead = f"run@{socket.gethostname()}:{gone}"
        assert mem.backend.acquire_lease(LEASE, dead, until, clock.now)
        report = mem.maintain()
        assert report.skipped is None and report.scanned == 1
        assert mem.backend.lease_holder(LEASE) is None  # given back
        elsewhere = "run@another-host:1"
        assert mem.backend.acquire_lease(LEASE, elsewhere, until, clock.now)
        skipped = mem.maintain()
        assert skipped.skipped is not None and elsewhere in skipped.skipped
        assert mem.maintain(dry_run=True).scanned == 1  # a dry run writes nothing: no lease
        clock.advance(minutes=16)  # the other host's lease lapsed
        assert mem.maintain().skipped is None


def test_a_run_that_lost_its_lease_stops(tmp_path: Path, clock: Clock) -> None:
    """A run renews its lease page by page; when another run took it meanwhile (the run
    outlived its lease), it stops instead of running beside it."""
    from graphmem.config import TuningConfig
    from graphmem.engine.maintenance import LEASE

    config = GraphMemConfig(tuning=TuningConfig(maintenance_batch=1))
    with GraphMemory.open(tmp_path, config=config, clock=clock,
                          embedder=FakeEmbedder()) as mem:
        for i in range(3):
            mem.store(f"note {i}", namespace=NS)
        edges_of = mem.backend.edges_of

        def slow_page(*args: Any, **kwargs: Any) -> Any:  # the first page outlives the lease
            clock.advance(minutes=20)
            assert mem.backend.acquire_lease(LEASE, "thief@another-host:1",
                                             clock.now + timedelta(minutes=15), clock.now)
            mem.backend.edges_of = edges_of  # type: ignore[method-assign]
            return edges_of(*args, **kwargs)

        mem.backend.edges_of = slow_page  # type: ignore[method-assign]
        with pytest.raises(ConflictError, match="lease was lost"):
            mem.maintain()
        holder = mem.backend.lease_holder(LEASE)
        assert holder is not None and holder[0] == "thief@another-host:1"


def test_a_store_of_schema_9_opens_with_the_event_windows(tmp_path: Path) -> None:
    """A folder written before the windows existed is migrated when it opens."""
    from graphmem.store.sqlite import schema as sqlite_schema
    from graphmem.store.sqlite.store import SQLiteStore

    store = SQLiteStore(tmp_path)
    store.open()
    store.conn.execute("DROP TABLE event_windows")
    store.conn.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    store.close()
    store = SQLiteStore(tmp_path)
    store.open()
    try:
        assert sqlite_schema.current_version(store.conn) == sqlite_schema.SCHEMA_VERSION >= 10
        clock = Clock()
        assert [store.count_event(NS, "k", 1, 60, clock.now) for _ in range(2)] == [True,
                                                                                   False]
    finally:
        store.close()
