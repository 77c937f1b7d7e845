"""What consolidation archives stays findable in the view users get (issue 44, ADR 0059): the
default call on every surface - Python, REST search and search-index, MCP recall and
recall_index, CLI search - finds an archived member; on a LoCoMo conversation the default
call keeps its recall across a consolidation 45 days after import; the report shows both
views, every candidate's fate, and ages since stored."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from tests.conftest import Clock, FakeEmbedder
from tests.integration.test_lifecycle import LOCOMO, _conv30

NS = "ops"
ALERTS = [f"The replica lag alert fired at {h} am during the nightly backfill of the orders "
          "table" for h in range(1, 8)]


def _archived_member(mem: GraphMemory) -> tuple[str, str]:
    run = mem.consolidate(NS)
    assert run.status == "applied", run.report["retrieval_check"]
    archived = [i for c in run.data["clusters"] for i in c["archive"]]
    assert archived, run.report
    m = mem.get(archived[0], namespace=NS)
    return m.id, m.content


@pytest.mark.model
def test_every_surface_finds_an_archived_member(tmp_path: Path, real_embedder: Any) -> None:
    from fastapi.testclient import TestClient
    from mcp import Client

    from graphmem.api.app import create_app
    from graphmem.api.mcp import build_server
    from graphmem.api.settings import Settings

    clock = Clock()
    data = tmp_path / "d"
    with GraphMemory.open(data, clock=clock, embedder=real_embedder) as mem:
        mem.store_many(ALERTS, namespace=NS)
        clock.advance(days=40)
        member, content = _archived_member(mem)
        query = content.replace("The ", "when did the ").replace(" fired", " fire")
        # Python: retrieve and search_index
        assert member in [r.memory.id for r in mem.retrieve(query, namespace=NS,
                                                            record_access=False)]
        assert member in [e.id for e in mem.search_index(query, namespace=NS)]
        assert member not in [r.memory.id for r in mem.retrieve(
            query, namespace=NS, include_archived=False, record_access=False)]
        # REST (what the viewer calls too)
        app = create_app(Settings(data=str(data), keys_file=tmp_path / "k.db",
                                  dev_no_auth=True, scheduler=False), memory=mem)
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            found = client.post("/v1/search", json={"namespace": NS, "query": query,
                                                    "record_access": False}).json()
            hit = next(r for r in found if r["memory"]["id"] == member)
            assert "SUMMARIZES" in hit["path"]["text"] and hit["terms"]["archived"] == 1.0
            index = client.post("/v1/search/index", json={"namespace": NS, "query": query})
            assert member in [e["id"] for e in index.json()]

        # MCP
        async def mcp() -> tuple[list[Any], list[Any]]:
            async with Client(build_server(mem, [NS])) as c:
                recall = await c.call_tool("recall", {"query": query, "namespace": NS,
                                                      "limit": 10, "record_access": False})
                index = await c.call_tool("recall_index", {"query": query, "namespace": NS})
                return (recall.structured_content["result"],
                        index.structured_content["result"])

        recalled, previews = asyncio.run(mcp())
        assert member in [r["memory"]["id"] for r in recalled]
        assert member in [e["id"] for e in previews]
    # CLI search (a process of its own, read-only)
    gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert gm
    out = subprocess.run([gm, "search", "--data", str(data), "-n", NS, query, "--json"],
                         capture_output=True, text=True, timeout=300, check=True)
    assert member in [r["memory"]["id"] for r in json.loads(out.stdout)]
    hidden = subprocess.run([gm, "search", "--data", str(data), "-n", NS, query, "--json",
                             "--active-only"], capture_output=True, text=True, timeout=300,
                            check=True)
    assert member not in [r["memory"]["id"] for r in json.loads(hidden.stdout)]


def _recall(mem: GraphMemory, questions: list[tuple[str, set[str]]]) -> float:
    got = 0.0
    for q, evidence in questions:
        ids = {r.memory.id for r in mem.retrieve(q, namespace="c", record_access=False)}
        got += len(ids & evidence) / len(evidence)
    return got / len(questions)


@pytest.mark.model
@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the project")
def test_a_conversation_keeps_its_recall_across_consolidation(tmp_path: Path,
                                                               real_embedder: Any) -> None:
    """conv-30 as users store it; 45 days; maintenance and the default consolidation; the
    questions asked with the default call before and after (today 0.792 -> 0.792; before
    ADR 0059 0.792 -> 0.531 with 37% of the turns archived)."""
    raw = json.loads((LOCOMO / "conv-30.json").read_text())
    items = _conv30()
    dia = [t["dia_id"] for n in range(1, 40) for t in raw.get(f"session_{n}") or []]
    now = [datetime(2026, 11, 1, tzinfo=UTC)]
    with GraphMemory.open(tmp_path, clock=lambda: now[0], embedder=real_embedder) as mem:
        stored = mem.store_many(items, namespace="c")
        by_dia = dict(zip(dia, (m.id for m in stored), strict=True))
        questions = [(q["question"], {by_dia[e] for e in q["evidence"] if e in by_dia})
                     for q in raw["qa"] if q.get("category") in (1, 2, 3, 4)]
        questions = [(q, ev) for q, ev in questions if ev]
        before = _recall(mem, questions)
        now[0] += timedelta(days=45)
        mem.maintain(namespace="c")
        run = mem.consolidate("c")
        assert run.status == "applied", run.report["retrieval_check"]
        archived = run.report["archived"]
        assert archived >= 0.1 * len(items)  # it still consolidates
        after = _recall(mem, questions)
        assert after >= 0.93 * before, (before, after)
        check = run.report["retrieval_check"]
        assert check["default"]["loss"] <= 0.1 and check["queries"] >= 60


def test_the_report_shows_both_views_every_candidate_and_ages_since_stored(
        tmp_path: Path) -> None:
    clock = Clock()
    with GraphMemory.open(tmp_path, clock=clock, embedder=FakeEmbedder()) as mem:
        old = clock.now - timedelta(days=3 * 365)  # an import of three-year-old history
        texts = [f"nightly backup job failed disk full volume {i}" for i in range(6)]
        texts += ["lunch order pizza", "weather was sunny", "golf hotel india"]
        stored = mem.store_many([{"content": t, "created_at": old + timedelta(hours=i)}
                                 for i, t in enumerate(texts)], namespace=NS)
        clock.advance(days=45)
        run = mem.consolidate(NS, dry_run=True)
        report = run.report
        ages = report["ages_days"]
        assert ages and all(44 <= a <= 46 for a in ages)  # since stored, not since 2023
        fates: dict[str, int] = {}
        for c in report["cluster_details"]:
            for m in c["members"]:
                fates[m["id"]] = fates.get(m["id"], 0) + 1
                assert m["action"] in ("kept", "archived") and m["why"]
        for u in run.data["unclustered"]:
            fates[u["id"]] = fates.get(u["id"], 0) + 1
            assert "in no cluster" in u["why"]
        assert fates == {m.id: 1 for m in stored}  # every candidate, exactly once
        md = mem.report(run.id, "md")
        html = mem.report(run.id, "html")
        for text in (md, html):
            assert "default view" in text and "comprehensive view" in text
            assert "in no cluster" in text


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the project")
def test_the_lifecycle_bench_asks_with_the_default_call(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """``graphmem bench lifecycle`` reports ``default_r10``: every question asked with the
    default call (no strategy, no include_archived) after the simulated months."""
    from graphmem.bench import lifecycle
    from graphmem.bench.locomo import conversations

    conv = conversations(LOCOMO, ["30"])[0]
    first = {t["session_id"] for t in conv.turns[:60]}
    conv.turns = [t for t in conv.turns if t["session_id"] in first]
    ids = {t["dia_id"] for t in conv.turns}
    conv.questions = [q for q in conv.questions if set(q["evidence"]) <= ids][:12]
    asked: list[dict[str, Any]] = []
    real = GraphMemory.retrieve

    def spy(self: GraphMemory, query: str, **kw: Any) -> Any:
        if query in {q["question"] for q in conv.questions}:
            asked.append(kw)
        return real(self, query, **kw)

    monkeypatch.setattr(GraphMemory, "retrieve", spy)
    res = lifecycle.run_conversation(conv, FakeEmbedder())
    row = res.to_dict()
    assert 0.0 < row["default_r10"] <= 1.0 and "strict_r10" in row
    plain = [kw for kw in asked if "strategy" not in kw and "include_archived" not in kw]
    assert len(plain) == 2 * len(conv.questions)  # the static store's, and the default call
    table = lifecycle.table({"overall": {**row, "questions": res.questions,
                                         "default_vs_static": 1.0, "strict_vs_static": 1.0,
                                         "lineage_vs_static": 1.0, "evidence_archived": 0,
                                         "fast_first": row["fast_first"]},
                             "conversations": {"conv-30": row}})
    assert "default R@10" in table
