"""The benchmark commands at toy scale: output structure, and metrics on known answers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from graphmem.bench import locomo, scale, synthetic


def test_scale_bench_reports_every_measure(tmp_path: Path) -> None:
    r = scale.run_scale(300, embeddings="random", queries=10, batch=100,
                        folder=tmp_path, progress=lambda *_: None)
    assert r["n"] == 300 and r["write"]["misses"] == 0
    assert r["write"]["edges"]["FOLLOWS"] == 300 - 300 // 20
    assert r["write"]["memories_per_s_without_embedding"] > 0
    for depth in ("depth_0", "depth_1", "depth_2"):
        lat = r["retrieve"][depth]["with_query_embedding"]
        assert 0 < lat["p50_ms"] <= lat["p95_ms"] <= lat["p99_ms"]
    assert r["disk_mb"] > 0 and r["rss_mb"] > 0 and r["startup_s"] > 0
    assert r["ann_recall@10"] == 1.0  # the embedded store searches exhaustively
    hot = r["hot_cache"]  # every repeat answered by the cache, the first asks never
    distinct = len(set(synthetic.queries(10)))
    assert (hot["hits"], hot["misses"], hot["miss_after_write"]) == (
        distinct, distinct + 1, True)
    text = scale.table(r)
    assert "retrieve depth 2" in text and "disk" in text and "hot cache" in text
    json.dumps(r)  # JSON-ready


def test_scale_bench_cli_writes_json(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from graphmem.cli import main

    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["bench", "scale", "--n", "120", "--embeddings",
                                       "random", "--queries", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "retrieve depth 2" in result.output
    assert json.loads(out.read_text())["n"] == 120


def _conv(tmp_path: Path) -> Path:
    conv = {
        "speaker_a": "Ann", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat"},
                      {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice, what's its name?",
                       "blip_caption": "a photo of a cat"}],
        "session_2_date_time": "10:00 am on 9 May, 2023", "session_2": [],
        "qa": [{"question": "What pet?", "evidence": ["D1:1"], "category": 1},
               {"question": "Name?", "evidence": ["D1:2; D9:9", "D"], "category": 4},
               {"question": "None?", "evidence": [], "category": 2}],
    }
    path = tmp_path / "conv-1.json"
    path.write_text(json.dumps(conv))
    return path


def test_locomo_loader_handles_defects(tmp_path: Path) -> None:
    c = locomo.load(_conv(tmp_path))
    assert [t["dia_id"] for t in c.turns] == ["D1:1", "D1:2"]
    assert c.turns[1]["content"] == "Bo: Nice, what's its name? [image: a photo of a cat]"
    assert c.turns[1]["created_at"] > c.turns[0]["created_at"]
    assert [q["evidence"] for q in c.questions] == [["D1:1"], ["D1:2"], []]
    assert c.dropped == 2


@pytest.mark.parametrize(("perfect", "expected"), [(True, 1.0), (False, 0.0)])
def test_locomo_metrics_on_known_answers(tmp_path: Path, perfect: bool,
                                         expected: float) -> None:
    c = locomo.load(_conv(tmp_path))
    per: dict = {}
    from collections import defaultdict

    per = defaultdict(locomo.Scores)

    def retriever(question: str, conv: locomo.Conversation) -> list[str]:
        qa = next(q for q in conv.questions if q["question"] == question)
        return list(qa["evidence"]) if perfect else ["D0:0"] * 20

    locomo.evaluate(None, c, {}, per, retrieve=retriever)  # type: ignore[arg-type]
    rep = locomo.report(per)
    assert rep["overall"]["questions"] == 2  # the question without evidence is unscored
    for key in ("recall@5", "recall@10", "recall@20", "mrr", "all_evidence_hit@10"):
        assert rep["overall"][key] == expected


def test_ann_bench_reports_recall_against_exact() -> None:
    from graphmem.bench import ann

    r = ann.run_ann(300, embeddings="random", queries=10, k=5, progress=lambda *_: None)
    d = r["default"]
    assert 0.0 <= d["index_recall@5"] <= d["recall@5"] <= 1.0
    assert d["recall@5"] >= 0.9  # over-fetching 64 of 300 is near-exact
    assert d["latency"]["p50_ms"] > 0 and r["write_memories_per_s"] > 0


def test_scale_bench_on_falkordb(tmp_path: Path) -> None:
    r = scale.run_scale(160, embeddings="random", queries=5, batch=50, folder=tmp_path,
                        store="falkordb", progress=lambda *_: None)
    assert r["store"] == "falkordb" and r["write"]["edges"]["FOLLOWS"] == 160 - 160 // 20
    assert r["ann_recall@10"] >= 0.9 and r["disk_mb"] >= 0
    assert "falkordb" in scale.table(r)


def test_scale_bench_on_neo4j(neo4j_uri: str) -> None:
    """An external (already running) Neo4j: its own namespace, no disk figure."""
    r = scale.run_scale(120, embeddings="random", queries=5, batch=40, store="neo4j",
                        neo4j_uri=neo4j_uri, progress=lambda *_: None)
    assert r["store"] == "neo4j" and r["write"]["edges"]["FOLLOWS"] == 120 - 120 // 20
    assert r["ann_recall@10"] >= 0.9 and "disk_mb" not in r
    assert "an external server" in scale.table(r)


@pytest.mark.parametrize("to", ["falkordb", "neo4j"])
def test_migration_bench_copies_and_verifies(request: pytest.FixtureRequest, to: str) -> None:
    from graphmem.bench.migration import run_migration, table

    uri = request.getfixturevalue("neo4j_uri") if to == "neo4j" else None
    if uri:
        from tests.conftest import _wipe_neo4j

        _wipe_neo4j(uri)
    r = run_migration(150, to=to, neo4j_uri=uri, batch=40, progress=lambda *_: None)
    assert r["ok"] and r["memories"] == r["target_memories"] == 150
    assert r["edges"] == r["target_edges"] > 0 and r["sampled"] > 0
    assert "verified | ok" in table(r)


def test_api_load_bench_reports_both_routes() -> None:
    from graphmem.bench import api_load

    r = api_load.run_api_load(200, clients=2, seconds=1.0, max_requests=40,
                              progress=lambda *_: None, writers=3, per_writer=10,
                              searchers=2, stall_seconds=60)
    for kind in ("search", "search_distinct", "write"):
        assert r[kind]["errors"] == 0 and 0 < r[kind]["requests"] <= 40
        assert r[kind]["p50_ms"] <= r[kind]["p99_ms"]
    assert r["search_distinct"]["cache_hits"] == 0  # every query new: the pipeline answers
    assert r["search_distinct"]["server_cpu_ms_per_request"] > 0  # a server of its own
    assert r["search_distinct"]["load_cpu_ms_per_request"] > 0  # the load generator's own
    assert r["write"]["cache_hits"] == 0
    # the hour's baseline: the same store in one process without HTTP, before the server
    base = r["in_process"]
    assert base["threads"] == 2 and 0 < base["requests"] <= 40
    assert base["cpu_ms_per_request"] > 0 and base["p50_ms"] <= base["p99_ms"]
    assert r["rest_over_in_process"] == round(
        r["search_distinct"]["req_per_s"] / base["req_per_s"], 3)
    mixed = r["mixed"]
    assert mixed["writes"] == 30 and mixed["errors"] == 0 and mixed["lost"] == 0
    stall = r["consolidation_stall"]
    assert stall["run_status"] == "applied" and stall["candidates"] == 200
    assert stall["writes_during_run"] >= 1 and stall["longest_write_ms"] > 0
    text = api_load.table(r)
    assert "POST /v1/search (every query new)" in text and "0 lost" in text
    assert "longest" in text
    assert "retrieve in one process, no HTTP" in text and "REST / in process" in text


@pytest.mark.slow
def test_the_api_bench_loads_another_install_in_the_same_run() -> None:
    """``--against``: another install's server (here this one's own Python) filled with its
    own code and driven by the same load generator; the ratio of the two rates."""
    import sys
    from importlib import metadata

    from graphmem.bench import api_load

    r = api_load.run_api_load(150, clients=2, seconds=0.5, max_requests=20,
                              progress=lambda *_: None, writers=2, per_writer=2,
                              searchers=1, stall=False, baseline=False,
                              against=sys.executable, against_n=120)
    other = r["against"]
    assert other["python"] == sys.executable and other["n"] == 120
    assert other["stored"] == 120 and other["version"] == metadata.version("graphmem")
    for kind in ("search_distinct", "search"):
        assert other[kind]["errors"] == 0 and 0 < other[kind]["requests"] <= 20
    assert other["search_distinct"]["cache_hits"] == 0
    assert other["search_distinct"]["server_cpu_ms_per_request"] > 0
    assert r["over_against"] == round(
        r["search_distinct"]["req_per_s"] / other["search_distinct"]["req_per_s"], 3)
    text = api_load.table(r)
    assert f"served by {sys.executable}" in text and "the other install at 120" in text


def test_the_other_install_runs_with_its_own_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's GRAPHMEM_* settings do not reach the other install: a setting it does
    not know would stop its server."""
    import sys

    from graphmem.bench import api_against

    monkeypatch.setenv("GRAPHMEM_EMBEDDING__NOT_A_SETTING", "1")
    r = api_against.measure(sys.executable, 50, clients=1, seconds=0.3, max_requests=5,
                            progress=lambda *_: None)
    assert r["stored"] == 50 and r["search_distinct"]["errors"] == 0


def test_the_api_bench_refuses_a_missing_python_before_filling(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from graphmem.cli import main

    result = CliRunner().invoke(main, ["bench", "api", "--n", "100", "--against",
                                       str(tmp_path / "nothing" / "python")])
    assert result.exit_code != 0
    assert "not an executable Python" in result.output
    assert "filling" not in result.output  # refused before the store was made


def test_the_in_process_baseline_reports_a_run_that_answered_nothing(tmp_path: Path) -> None:
    """No request in its budget: zero answered and no latencies, not a crash of the bench."""
    from graphmem import GraphMemory
    from graphmem.api.keys import KeyStore
    from graphmem.bench import in_process
    from graphmem.bench.api_load import server_env
    from graphmem.testing import RandomEmbedder

    with GraphMemory.open(tmp_path / "data", embedder=RandomEmbedder()) as mem:
        mem.store("the deploy failed", namespace="bench")
    KeyStore(tmp_path / "keys.db")
    r = in_process.measure(tmp_path / "data", server_env(tmp_path / "keys.db", False),
                           threads=2, seconds=1.0, max_requests=0)
    assert r["threads"] == 2 and r["requests"] == 0 and r["req_per_s"] == 0
    assert r["cpu_ms_per_request"] is None and r["p95_ms"] is None


def test_the_api_load_counts_refusals_and_keeps_its_connections(tmp_path: Path) -> None:
    """The load generator against a server that refuses every search and drops every fifth
    connection unanswered: each refusal and each drop is an error, a client whose connection
    dropped goes on with a new one, and a client keeps its connection otherwise."""
    import http.server
    import threading

    from graphmem.bench.api_load import _drive

    seen: list[tuple[str, int]] = []

    class Refusing(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive

        def _reply(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # /v1/stats: no cache hits
            self._reply(200, b'{"cache": {"hits": 0}}')

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append((self.path, self.client_address[1]))
            if len(seen) % 5 == 0:
                self.close_connection = True  # no reply: the client sees it dropped
                return
            self._reply(401, b'{"detail": "no"}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        r = _drive(f"http://127.0.0.1:{server.server_port}", "k", "search_distinct",
                   clients=3, seconds=30.0, max_requests=30)
    finally:
        server.shutdown()
    assert len(seen) == r["errors"] == 30 and r["requests"] == 24  # 6 dropped unanswered
    assert {path for path, _ in seen} == {"/v1/search"}
    assert len({port for _, port in seen}) == 3 + 5  # kept; a new one after each drop but the 30th
    assert r["cache_hits"] == 0 and r["load_cpu_ms_per_request"] > 0


_BUSY_STATS_SERVER = """
import http.server, sys, time
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def _reply(self, body):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):  # /v1/stats: a second of CPU, as a large namespace's stats take
        end = time.process_time() + 1.0
        while time.process_time() < end:
            pass
        self._reply(b'{"cache": {"hits": 0}}')
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self._reply(b'{"results": []}')
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_port, flush=True)
server.serve_forever()
"""


def test_the_server_cpu_per_request_leaves_out_the_stats_reads() -> None:
    """The load's CPU on the server is measured while its clients run: the two stats reads
    around them (the hot cache's hits) are not requests of the load."""
    import subprocess
    import sys

    from graphmem.bench.api_load import _drive

    server = subprocess.Popen([sys.executable, "-c", _BUSY_STATS_SERVER],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        r = _drive(f"http://127.0.0.1:{port}", "k", "search_distinct", clients=2,
                   seconds=30.0, max_requests=100, server_pid=server.pid)
    finally:
        server.kill()
        server.wait()
    assert r["requests"] == 100 and r["errors"] == 0
    # the two stats reads alone are 2 s of the server's CPU: 20 ms a request, were they in
    # (the kernel counts CPU in 10 ms ticks: a request's own ~0.5 ms may show as 0)
    assert 0 <= r["server_cpu_ms_per_request"] < 10


@pytest.mark.parametrize(("quantized", "float_queries", "float_batches"),
                         [(False, False, False), (True, False, False), (False, True, False),
                          (False, False, True)])
def test_the_api_bench_server_runs_the_chosen_model(
        quantized: bool, float_queries: bool, float_batches: bool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from api.settings import Settings
    from graphmem.bench.api_load import server_env

    for name in [n for n in os.environ if n.startswith("GRAPHMEM_")]:
        monkeypatch.delenv(name)
    for name, value in server_env(tmp_path / "keys.db", quantized, float_queries,
                                  float_batches).items():
        if name.startswith("GRAPHMEM_"):
            monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.embedding.quantize is quantized
    assert settings.tuning.quantize_queries is not float_queries
    assert settings.tuning.bf16_batches is not float_batches
    assert settings.embedding.verify_store is False and settings.scheduler is False


def test_plots_from_results(tmp_path: Path) -> None:
    from graphmem.bench.plots import make_plots

    overall = {"recall@5": 0.5, "recall@10": 0.6, "recall@20": 0.7}
    (tmp_path / "locomo.json").write_text(json.dumps({
        "ks": [5, 10, 20], "systems": {"graphmem": {"overall": overall},
                                       "dense": {"overall": overall}}}))
    r = scale.run_scale(120, embeddings="random", queries=5, batch=60,
                        folder=tmp_path / "s", progress=lambda *_: None)
    (tmp_path / "scale-10k.json").write_text(json.dumps(r))
    written = make_plots(tmp_path, tmp_path / "img")
    assert [p.name for p in written] == ["locomo-recall-at-k.png", "latency-vs-size.png",
                                         "memory-vs-size.png"]
    assert all(p.stat().st_size > 5000 for p in written)


def test_locomo_command_end_to_end_on_a_tiny_folder(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from graphmem.cli import main
    from tests.conftest import FakeEmbedder

    _conv(tmp_path)
    r = locomo.run_locomo(tmp_path, ks=(1, 10), embedder=FakeEmbedder(),
                          progress=lambda *_: None)
    assert set(r["systems"]) == {"graphmem", "dense", "bm25", "hybrid"}
    for res in r["systems"].values():
        assert set(res["overall"]) >= {"recall@1", "recall@10", "mrr",
                                       "all_evidence_hit@10", "p50_ms", "p95_ms"}
        assert set(res["categories"]) == {"1", "4"}
    for name in ("dense", "bm25", "hybrid"):  # they rank every turn: both are in the top 10
        assert r["systems"][name]["overall"]["recall@10"] == 1.0
    # graphmem returns nothing below min_similarity without a keyword match ("pet" / "cat")
    assert 0.0 < r["systems"]["graphmem"]["overall"]["recall@10"] <= 1.0
    assert r["dropped_evidence"] == 2 and r["unscored_questions"] == 1
    assert "| graphmem |" in locomo.table(r)
    # faiss indexes serving the vector seeds (--ann) answer as the exact scan on this data
    built: list[str] = []
    from graphmem.store.ann.builder import Builder

    install = Builder.build

    def spy(self: Builder, ns: str, *args: object) -> None:
        built.append(ns)
        install(self, ns, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Builder, "build", spy)
    with_ann = locomo.run_locomo(tmp_path, ks=(1, 10), embedder=FakeEmbedder(), ann=True,
                                 progress=lambda *_: None)
    assert set(built) == {"conv-1"} and with_ann["ann_forced"] is True
    assert with_ann["systems"]["graphmem"]["overall"]["recall@10"] == \
        r["systems"]["graphmem"]["overall"]["recall@10"]
    bad = CliRunner().invoke(main, ["bench", "locomo", "--data", str(tmp_path), "--k", "x"])
    assert bad.exit_code == 1 and "--k needs" in bad.output
    none = CliRunner().invoke(main, ["bench", "locomo", "--data", str(tmp_path),
                                     "--convs", "99"])
    assert none.exit_code == 1 and "no LoCoMo conversation files" in none.output


@pytest.mark.parametrize("status", [1, 0])
def test_an_install_that_cannot_fill_its_store_is_a_one_line_error(tmp_path: Path,
                                                                    status: int) -> None:
    """A Python without graphmem (here one that exits at once, failing or saying nothing)
    fails the bench with a ConfigError naming it, and no server is started."""
    from graphmem.bench import api_against
    from graphmem.errors import ConfigError

    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\necho 'No module named graphmem' >&2\nexit {status}\n")
    python.chmod(0o755)
    with pytest.raises(ConfigError, match="filling its store failed: No module named graphmem"):
        api_against.measure(str(python), 10, clients=1, seconds=0.1, max_requests=1,
                            progress=lambda *_: None)
