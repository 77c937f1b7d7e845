"""Same behaviour on every adapter: LoCoMo questions through graphmem's full pipeline on each
store, with the very same vectors (one cached embedder), compared with the embedded default:
R@10 per store, and per question the overlap of each store's top 10 with SQLite's and whether
the order is identical. The questions whose top 10 differ are listed (first few) so the cause
can be read off."""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from graphmem import GraphMemory
from graphmem.bench.engines import engine
from graphmem.bench.locomo import CachedEmbedder, Scores, conversations, ingest


def _rankings(store: str, convs: list[Any], emb: CachedEmbedder, neo4j_uri: str | None,
              progress: Callable[[str], None]) -> tuple[dict[str, list[str]], float]:
    """question key -> ranked dia ids (top 10) on one store, and the seconds it took."""
    out: dict[str, list[str]] = {}
    run = uuid.uuid4().hex[:8]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, \
            engine(store, Path(tmp), neo4j_uri=neo4j_uri) as eng, \
            GraphMemory.open(eng.target, embedder=emb, config=eng.config) as mem:
        for conv in convs:
            progress(f"{store}: {conv.name}")
            namespace = f"{conv.name}-{run}"
            id_map = ingest(mem, conv, namespace, keep_ids=True)
            for i, qa in enumerate(conv.questions):
                if qa["evidence"]:
                    hits = mem.search_index(qa["question"], namespace=namespace, limit=10)
                    out[f"{conv.name}#{i}"] = [id_map[h.id] for h in hits]
    return out, time.perf_counter() - t0


def run_parity(folder: Path, *, convs: Iterable[str] | None = None,
               stores: Iterable[str] = ("sqlite", "falkordb", "neo4j"),
               neo4j_uri: str | None = None, embedder: Any = None,
               progress: Callable[[str], None] = print) -> dict[str, Any]:
    from graphmem.engine.embedding import make_embedder

    conversations_ = conversations(Path(folder), convs)
    if not conversations_:
        raise FileNotFoundError(f"no LoCoMo conversation files in {folder}")
    emb = CachedEmbedder(embedder or make_embedder())
    evidence = {f"{c.name}#{i}": qa["evidence"] for c in conversations_
                for i, qa in enumerate(c.questions) if qa["evidence"]}
    ranked: dict[str, dict[str, list[str]]] = {}
    result: dict[str, Any] = {"conversations": [c.name for c in conversations_],
                              "questions": len(evidence), "stores": {}}
    stores = list(stores)
    reference = stores[0]
    for store in stores:
        ranked[store], seconds = _rankings(store, conversations_, emb, neo4j_uri, progress)
        scores = Scores(ks=(10,))
        for key, ev in evidence.items():
            scores.add(ranked[store][key], ev, 0.0)
        summary = scores.summary()
        row: dict[str, Any] = {"recall@10": summary["recall@10"], "mrr": summary["mrr"],
                               "seconds": round(seconds, 1)}
        if store != reference:
            overlap = {k: len(set(ranked[store][k]) & set(ranked[reference][k]))
                       for k in evidence}
            differ = [k for k in evidence if ranked[store][k] != ranked[reference][k]]
            row.update({
                "recall@10_delta": round(summary["recall@10"]
                                         - result["stores"][reference]["recall@10"], 4),
                "identical_top10": len(evidence) - len(differ),
                "mean_overlap@10": round(sum(overlap.values()) / len(evidence), 3),
                "min_overlap@10": min(overlap.values()),
                "differing": [{"question": k, "overlap": overlap[k],
                               reference: ranked[reference][k], store: ranked[store][k]}
                              for k in differ[:10]],
            })
        result["stores"][store] = row
    result["reference"] = reference
    return result


def table(r: dict[str, Any]) -> str:
    ref = r["reference"]
    lines = [f"{r['questions']} questions ({', '.join(r['conversations'])}), same vectors; "
             f"compared with {ref}", "",
             "| store | R@10 | delta | MRR | identical top 10 | mean / min overlap@10 | s |",
             "|---|---|---|---|---|---|---|"]
    for store, row in r["stores"].items():
        same = (f"{row['identical_top10']}/{r['questions']}" if store != ref else "-")
        ov = (f"{row['mean_overlap@10']} / {row['min_overlap@10']}" if store != ref else "-")
        delta = f"{row['recall@10_delta']:+.4f}" if store != ref else "-"
        lines.append(f"| {store} | {row['recall@10']:.4f} | {delta} | {row['mrr']:.4f} | "
                     f"{same} | {ov} | {row['seconds']} |")
    return "\n".join(lines)
