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
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graphmem import GraphMemory

_DATE = "%I:%M %p on %d %B, %Y"
_ID = re.compile(r"^D\d+:\d+$")
KS = (5, 10, 20)


@dataclass
class Conversation:
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
    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    rr: list[float] = field(default_factory=list)
    all_hit10: list[float] = field(default_factory=list)
    latency: list[float] = field(default_factory=list)

    def add(self, ranked: list[str], evidence: list[str], seconds: float) -> None:
        ev = set(evidence)
        for k in KS:
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
        for k in KS:
            out[f"recall@{k}"] = round(sum(self.recall[k]) / n, 4)
        out["all_evidence_hit@10"] = round(sum(self.all_hit10) / n, 4)
        out["mrr"] = round(sum(self.rr) / n, 4)
        out["p50_ms"] = round(lat[n // 2] * 1000, 2)
        out["p95_ms"] = round(lat[min(n - 1, int(n * 0.95))] * 1000, 2)
        return out


def ingest(mem: GraphMemory, conv: Conversation) -> dict[str, str]:
    """Store a conversation; returns memory id -> dia_id."""
    stored = mem.store_many([{k: t[k] for k in ("content", "source", "session_id", "created_at")}
                             for t in conv.turns], namespace=conv.name)
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


def report(per_category: dict[int, Scores]) -> dict[str, Any]:
    overall = Scores()
    for cat in (1, 2, 3, 4):
        s = per_category.get(cat)
        if s:
            for k in KS:
                overall.recall[k] += s.recall[k]
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
