"""LoCoMo retrieval benchmark (first cut): load conversations, ask every question, score recall.

Each conversation file becomes its own namespace: one memory per turn
(``"<speaker>: <text>"`` plus ``" [image: <caption>]"``), stamped with its session's date-time
(plus one second per turn, so turns keep their order), grouped by session. Recall@k is the
fraction of a question's evidence turns in the top k, averaged over questions; malformed or
unknown evidence ids are dropped (and counted), a question with none left is unscored.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from graphmem import GraphMemory
from graphmem.bench.engines import engine
from graphmem.engine.embedding import queries_of

_DATE = "%I:%M %p on %d %B, %Y"
_ID = re.compile(r"^D\d+:\d+$")
KS = (5, 10, 20)


@dataclass
class Conversation:
    """One LoCoMo conversation: turns to store, questions with their evidence ids.

    Example:
        >>> Conversation("conv-26", ("Caroline", "Melanie"), [], []).dropped
        0
    """

    name: str
    speakers: tuple[str, str]
    turns: list[dict[str, Any]]  # {dia_id, content, source, session_id, created_at}
    questions: list[dict[str, Any]]  # {question, evidence (valid ids), category}
    dropped: int = 0


def parse_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), _DATE).replace(tzinfo=UTC)


def load(path: Path) -> Conversation:
    raw = json.loads(path.read_text())
    turns = []
    n = 1
    while f"session_{n}_date_time" in raw:
        session = raw.get(f"session_{n}") or []
        when = parse_date(raw[f"session_{n}_date_time"])
        for i, turn in enumerate(session):
            content = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                content += f" [image: {turn['blip_caption']}]"
            turns.append({"dia_id": turn["dia_id"], "content": content,
                          "source": turn["speaker"], "session_id": f"session_{n}",
                          "created_at": when + timedelta(seconds=i)})
        n += 1
    known = {t["dia_id"] for t in turns}
    questions, dropped = [], 0
    for qa in raw["qa"]:
        evidence = []
        for ev in qa.get("evidence") or []:
            for part in re.split(r"[;,\s]+", str(ev)):
                if _ID.match(part) and part in known:
                    evidence.append(part)
                elif part:
                    dropped += 1
        questions.append({"question": qa["question"], "evidence": list(dict.fromkeys(evidence)),
                          "category": int(qa["category"])})
    return Conversation(path.stem, (raw["speaker_a"], raw["speaker_b"]), turns, questions,
                        dropped)


@dataclass
class Scores:
    """Recall@k, reciprocal ranks and latencies of a run of questions.

    Example:
        >>> s = Scores()
        >>> s.add(["a", "b"], ["b"], 0.01)
        >>> s.rr
        [0.5]
    """

    ks: tuple[int, ...] = KS
    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    rr: list[float] = field(default_factory=list)
    all_hit10: list[float] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)

    def add(self, ranked: list[str], evidence: list[str], seconds: float) -> None:
        ev = set(evidence)
        for k in self.ks:
            self.recall[k].append(len(ev & set(ranked[:k])) / len(ev))
        first = next((i for i, r in enumerate(ranked) if r in ev), None)
        self.rr.append(0.0 if first is None else 1.0 / (first + 1))
        self.all_hit10.append(float(ev <= set(ranked[:10])))
        self.latency.append(seconds)

    def summary(self) -> dict[str, float]:
        n = len(self.rr)
        if not n:
            return {"questions": 0}
        lat = sorted(self.latency)
        out: dict[str, float] = {"questions": n}
        for k in self.ks:
            out[f"recall@{k}"] = round(sum(self.recall[k]) / n, 4)
        out["all_evidence_hit@10"] = round(sum(self.all_hit10) / n, 4)
        out["mrr"] = round(sum(self.rr) / n, 4)
        out["p50_ms"] = round(lat[n // 2] * 1000, 2)
        out["p95_ms"] = round(lat[min(n - 1, int(n * 0.95))] * 1000, 2)
        return out


def ingest(mem: GraphMemory, conv: Conversation, namespace: str | None = None, *,
           keep_ids: bool = False) -> dict[str, str]:
    """Store a conversation (in its own namespace); returns memory id -> dia_id. With
    ``keep_ids`` each memory's id is its dia_id (stores compared break ties alike)."""
    keys = ("content", "source", "session_id", "created_at")
    stored = mem.store_many([{k: t[k] for k in keys} | ({"id": t["dia_id"]} if keep_ids else {})
                             for t in conv.turns], namespace=namespace or conv.name)
    return {m.id: t["dia_id"] for m, t in zip(stored, conv.turns, strict=True)}


def evaluate(mem: GraphMemory, conv: Conversation, id_map: dict[str, str],
             per_category: dict[int, Scores], retrieve: Callable[..., Any] | None = None,
             ) -> None:
    for qa in conv.questions:
        if not qa["evidence"]:
            continue
        t0 = time.perf_counter()
        if retrieve is None:
            results = mem.search_index(qa["question"], namespace=conv.name, limit=20,
                                       min_similarity=-1)
            ranked = [id_map[r.id] for r in results]
        else:
            ranked = retrieve(qa["question"], conv)
        per_category[qa["category"]].add(ranked, qa["evidence"], time.perf_counter() - t0)


def report(per_category: dict[int, Scores], ks: tuple[int, ...] = KS) -> dict[str, Any]:
    overall = Scores(ks=ks)
    for cat in (1, 2, 3, 4):
        s = per_category.get(cat)
        if s:
            for k in ks:
                overall.recall[k] = overall.recall[k] + s.recall[k]
            overall.rr += s.rr
            overall.all_hit10 += s.all_hit10
            overall.latency += s.latency
    return {"overall": overall.summary(),
            "categories": {str(c): per_category[c].summary() for c in sorted(per_category)}}


def conversations(folder: Path, names: Iterable[str] | None = None) -> list[Conversation]:
    files = sorted(folder.glob("*.json"))
    if names:
        wanted = set(names)
        files = [f for f in files if f.stem in wanted or f.stem.split("-")[-1] in wanted]
    return [load(f) for f in files]


class CachedEmbedder:
    """Embeds each text once: graphmem and the baselines share the very same vectors.

    Example:
        >>> from graphmem.bench.scale import RandomEmbedder
        >>> e = CachedEmbedder(RandomEmbedder())
        >>> _ = e.embed(["a", "a", "b"]); sorted(e.cache)
        ['a', 'b']
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.cache: dict[str, Any] = {}
        #: the queries' vectors: the inner embedder's query model (ADR 0046)
        self.query_cache: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self.cache, self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self.query_cache, queries_of(self.inner))

    def _cached(self, texts: Sequence[str], cache: dict[str, Any],
                embed: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            for t, v in zip(missing, embed(missing), strict=True):
                cache[t] = v
        return np.stack([cache[t] for t in texts]) if texts else np.zeros((0, self.dim))


SYSTEMS = ("graphmem", "dense", "bm25", "hybrid")


def _with_importance(config: Any, computed: bool) -> Any:
    if not computed:
        return config
    from graphmem.config import ImportanceConfig

    return config.model_copy(update={"importance": ImportanceConfig(computed=True)})


def _with_ann(config: Any, ann: bool) -> Any:
    """faiss indexes answer the vector seeds of every namespace (ADR 0068), built inside the
    writes: LoCoMo's namespaces (400-700 memories) are far below ``tuning.ann_min``."""
    if not ann:
        return config
    tuning = config.tuning.model_copy(update={"ann_min": 1, "ann_build_in_background": False})
    return config.model_copy(update={"tuning": tuning})


def run_locomo(folder: Path, *, convs: Iterable[str] | None = None,
               ks: tuple[int, ...] = KS, embedder: Any = None, config: Any = None,
               store: str = "sqlite", neo4j_uri: str | None = None,
               computed_importance: bool = False, ann: bool = False,
               progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Every question of every conversation through graphmem's full pipeline and the three
    baselines, on the same embeddings; metrics per system, overall (categories 1-4) and per
    category. ``computed_importance``: importance.computed on, one maintenance run after
    each conversation is stored (it persists the blend). ``ann``: product codes serve the
    vector seeds of every namespace. Returns the JSON-ready results."""
    import tempfile

    from graphmem.bench import baselines
    from graphmem.engine.embedding import make_embedder

    ks = tuple(sorted(ks))
    if 10 not in ks:
        raise ValueError("k must include 10 (all-evidence hit@10 is reported)")
    conversations_ = conversations(Path(folder), convs)
    if not conversations_:
        raise FileNotFoundError(f"no LoCoMo conversation files in {folder}")
    emb = CachedEmbedder(embedder or make_embedder())
    per: dict[str, dict[int, Scores]] = {
        s: defaultdict(lambda: Scores(ks=ks)) for s in SYSTEMS}
    top = max(ks)
    t_start = time.perf_counter()
    run = uuid.uuid4().hex[:8]  # namespaces of their own on a shared (external) server
    with tempfile.TemporaryDirectory() as tmp, \
            engine(store, Path(tmp), neo4j_uri=neo4j_uri) as eng, \
            GraphMemory.open(eng.target, embedder=emb, config=_with_ann(_with_importance(
                config or eng.config, computed_importance), ann)) as mem:
        for conv in conversations_:
            progress(f"{conv.name}: {len(conv.turns)} turns, {len(conv.questions)} questions")
            namespace = conv.name if eng.disk is not None else f"{conv.name}-{run}"
            id_map = ingest(mem, conv, namespace)
            if computed_importance:
                mem.maintain(namespace)
            dia = [t["dia_id"] for t in conv.turns]
            matrix = emb.embed([t["content"] for t in conv.turns])
            bm25 = baselines.OkapiBM25([baselines.tokens(t["content"]) for t in conv.turns])
            # one vector per question, graphmem's and the baselines' alike
            emb.embed_queries([qa["question"] for qa in conv.questions])
            for qa in conv.questions:
                if not qa["evidence"]:
                    continue
                q, cat, ev = qa["question"], qa["category"], qa["evidence"]
                t0 = time.perf_counter()
                hits = mem.search_index(q, namespace=namespace, limit=top)
                per["graphmem"][cat].add([id_map[h.id] for h in hits], ev,
                                         time.perf_counter() - t0)
                t0 = time.perf_counter()
                dense_scores = matrix @ emb.embed_queries([q])[0]
                dense = baselines.rank(dense_scores, dia, len(dia))
                t_dense = time.perf_counter() - t0
                t0 = time.perf_counter()
                keyword = baselines.rank(bm25.scores(baselines.tokens(q)), dia, len(dia))
                t_bm25 = time.perf_counter() - t0
                per["dense"][cat].add(dense[:top], ev, t_dense)
                per["bm25"][cat].add(keyword[:top], ev, t_bm25)
                t0 = time.perf_counter()
                fused = baselines.hybrid(dense, keyword, top)
                per["hybrid"][cat].add(fused, ev, t_dense + t_bm25 +
                                       time.perf_counter() - t0)
    n_questions = sum(len(c.questions) for c in conversations_)
    scored = sum(1 for c in conversations_ for qa in c.questions if qa["evidence"])
    return {
        "conversations": [c.name for c in conversations_],
        "store": store,
        "ann_forced": ann,
        "ks": list(ks),
        "questions": n_questions,
        "unscored_questions": n_questions - scored,
        "dropped_evidence": sum(c.dropped for c in conversations_),
        "seconds": round(time.perf_counter() - t_start, 1),
        "systems": {s: report(per[s], ks) for s in SYSTEMS},
        "embedding_dim": int(np.asarray(emb.embed(["x"])).shape[1]),
    }


def table(r: dict[str, Any]) -> str:
    ks = r["ks"]
    head = ("| system | " + " | ".join(f"R@{k}" for k in ks)
            + " | all-evidence hit@10 | MRR | p50 ms | p95 ms |")
    lines = [f"Categories 1-4 ({r['systems']['graphmem']['overall']['questions']} questions, "
             f"graphmem on {r.get('store', 'sqlite')}; "
             f"{r['dropped_evidence']} evidence ids dropped, {r['unscored_questions']} "
             "questions unscored)", "", head, "|" + "---|" * (len(ks) + 5)]
    for name, res in r["systems"].items():
        o = res["overall"]
        lines.append(f"| {name} | " + " | ".join(f"{o[f'recall@{k}']:.3f}" for k in ks)
                     + f" | {o['all_evidence_hit@10']:.3f} | {o['mrr']:.3f} | {o['p50_ms']} | "
                     f"{o['p95_ms']} |")
    cats = sorted({c for res in r["systems"].values() for c in res["categories"]})
    lines += ["", "Per category, R@10 / MRR (5 = adversarial, not in the overall)", "",
              "| system | " + " | ".join(f"cat {c}" for c in cats) + " |",
              "|" + "---|" * (len(cats) + 1)]
    for name, res in r["systems"].items():
        cells = []
        for c in cats:
            s = res["categories"].get(c)
            cells.append(f"{s['recall@10']:.3f} / {s['mrr']:.3f}" if s and s.get("questions")
                         else "-")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
