"""What agents remember over REST (issue 12): listing with cursors, history, supersede and
as_of, delete_all (admin), consensus / dissent, streams, summaries, tool capture and its
metrics - over real HTTP against the embedded store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from tests.api.test_rest import Server

NS = "team"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("agents")) as srv:
        yield srv


def _h(server: Server, role: str = "writer", namespaces: list[str] | None = None
       ) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.keys.create(namespaces or [NS], role)[1]}"}


def test_typed_memories_list_pages_and_history(server: Server) -> None:
    h = _h(server)
    made = []
    for i, kind in enumerate(["decision", "observation", "decision", "pattern"]):
        r = httpx.post(f"{server.url}/v1/memories", headers=h, json={
            "namespace": NS, "content": f"note {i} about the release train", "type": kind,
            "created_at": f"2026-01-0{i + 1}T00:00:00+00:00", "source": "planner"})
        assert r.status_code == 201, r.text
        made.append(r.json())
    assert (made[0]["type"], made[0]["importance"]) == ("decision", 0.7)
    seen, cursor = [], None
    while True:
        params: dict[str, str | int] = {"namespace": NS, "type": "decision", "limit": 1,
                                        "sort": "created_at", "order": "asc"}
        if cursor:
            params["cursor"] = cursor
        page = httpx.get(f"{server.url}/v1/memories", headers=h, params=params).json()
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [made[0]["id"], made[2]["id"]]
    both = httpx.get(f"{server.url}/v1/memories", headers=h,
                     params=[("namespace", NS), ("type", "decision"), ("type", "pattern")])
    assert len(both.json()["items"]) == 3
    assert httpx.get(f"{server.url}/v1/memories", headers=h, params={
        "namespace": NS, "cursor": "garbage"}).status_code == 422
    assert httpx.get(f"{server.url}/v1/memories", headers=h, params={
        "namespace": NS, "type": "Not A Type"}).status_code == 422
    mid = made[1]["id"]
    assert httpx.patch(f"{server.url}/v1/memories/{mid}", headers=h, params={"namespace": NS},
                       json={"content": "note 1, corrected"}).status_code == 200
    hist = httpx.get(f"{server.url}/v1/memories/{mid}/history", headers=h,
                     params={"namespace": NS}).json()
    assert [(e["event"], e["content"]) for e in hist] == [
        ("created", "note 1 about the release train"), ("update", "note 1, corrected")]
    other = _h(server, namespaces=["elsewhere"])
    assert httpx.get(f"{server.url}/v1/memories/{mid}/history", headers=other,
                     params={"namespace": NS}).status_code == 403


def test_supersede_as_of_and_time_filters(server: Server) -> None:
    h = _h(server)
    now = server.clock()
    old = httpx.post(f"{server.url}/v1/memories", headers=h, json={
        "namespace": NS, "content": "the standup is at nine",
        "created_at": (now - timedelta(days=20)).isoformat()}).json()
    new = httpx.post(f"{server.url}/v1/memories", headers=h, json={
        "namespace": NS, "content": "the standup is at ten",
        "created_at": (now - timedelta(days=1)).isoformat()}).json()
    r = httpx.post(f"{server.url}/v1/memories/{old['id']}/supersede", headers=h,
                   params={"namespace": NS}, json={"by": new["id"]})
    assert r.status_code == 200 and r.json()["superseded_by"] == new["id"]
    again = httpx.post(f"{server.url}/v1/memories/{old['id']}/supersede", headers=h,
                       params={"namespace": NS}, json={"by": new["id"]})
    assert again.status_code == 409
    then = httpx.post(f"{server.url}/v1/search", headers=h, json={
        "namespace": NS, "query": "when is the standup", "record_access": False,
        "as_of": (now - timedelta(days=10)).isoformat()}).json()
    assert [x["memory"]["id"] for x in then] == [old["id"]]
    recent = httpx.post(f"{server.url}/v1/search", headers=h, json={
        "namespace": NS, "query": "when is the standup", "record_access": False,
        "filters": {"since": (now - timedelta(days=5)).isoformat()}}).json()
    assert [x["memory"]["id"] for x in recent] == [new["id"]]


def test_consensus_dissent_stream_summary_and_capture(server: Server) -> None:
    h = _h(server)
    c = httpx.post(f"{server.url}/v1/consensus", headers=h, json={
        "namespace": NS, "topic": "the ledger database", "conclusion": "use postgres",
        "participants": ["a", "b"], "confidence": 0.9})
    assert c.status_code == 201 and c.json()["type"] == "consensus"
    d = httpx.post(f"{server.url}/v1/dissent", headers=h, json={
        "namespace": NS, "topic": "the ledger database", "agent": "c",
        "position": "use a document store", "against": c.json()["id"]})
    assert d.status_code == 201
    similar = httpx.post(f"{server.url}/v1/consensus/similar", headers=h, json={
        "namespace": NS, "topic": "the ledger database"}).json()
    assert similar[0]["consensus"]["id"] == c.json()["id"]
    assert [x["id"] for x in similar[0]["dissent"]] == [d.json()["id"]]
    assert [x["id"] for x in httpx.post(f"{server.url}/v1/dissent/similar", headers=h, json={
        "namespace": NS, "topic": "the ledger database"}).json()] == [d.json()["id"]]
    for i in range(2):
        cap = httpx.post(f"{server.url}/v1/tools/capture", headers=h, json={
            "namespace": NS, "agent": "coder", "tool": "Bash", "input": f"make test {i}",
            "output": "ok", "ok": True}).json()
        assert cap["captured"] and cap["memory"]["tier"] == "fast"
    page = httpx.get(f"{server.url}/v1/streams/coder", headers=h,
                     params={"namespace": NS}).json()
    assert [m["type"] for m in page["items"]] == ["tool_usage", "tool_usage"]
    summary = httpx.post(f"{server.url}/v1/summaries", headers=h, json={
        "namespace": NS, "agent": "coder"}).json()
    assert sorted(summary["ids"]) == sorted(m["id"] for m in page["items"])
    assert httpx.post(f"{server.url}/v1/summaries", headers=h, json={
        "namespace": NS}).status_code == 422
    reader = _h(server, "reader")
    assert httpx.post(f"{server.url}/v1/tools/capture", headers=reader, json={
        "namespace": NS, "agent": "x", "tool": "Bash", "input": "", "output": "",
        "ok": True}).status_code == 403
    ops = {"Authorization": f"Bearer {server.keys.create(['*'], 'reader')[1]}"}
    metrics = httpx.get(f"{server.url}/metrics", headers=ops).text
    assert f'graphmem_capture_events_total{{namespace="{NS}",outcome="captured"}} 2.0' in metrics
    assert "graphmem_cache_requests_total" in metrics


def test_delete_all_is_for_admins_and_needs_confirmation(server: Server,
                                                         tmp_path: Path) -> None:
    ns = "scratch"
    w, admin = _h(server, namespaces=[ns]), _h(server, "admin", [ns])
    httpx.post(f"{server.url}/v1/memories", headers=w, json={"namespace": ns,
                                                             "content": "temporary"})
    url = f"{server.url}/v1/memories"
    assert httpx.delete(url, headers=w, params={"namespace": ns,
                                                "confirm": ns}).status_code == 403
    assert httpx.delete(url, headers=admin, params={"namespace": ns,
                                                    "confirm": "other"}).status_code == 422
    assert httpx.get(url, headers=w, params={"namespace": ns}).json()["items"]
    r = httpx.delete(url, headers=admin, params={"namespace": ns, "confirm": ns})
    assert r.status_code == 200 and r.json() == {"deleted": 1}
    assert httpx.get(url, headers=w, params={"namespace": ns}).json()["items"] == []


def test_agents_that_use_a_shared_memory_promote_it(server: Server) -> None:
    h = _h(server)
    m = httpx.post(f"{server.url}/v1/memories", headers=h, json={
        "namespace": NS, "content": "the shared runbook for failovers", "tier": "slow"}).json()
    r = httpx.post(f"{server.url}/v1/entries", headers=h, json={
        "namespace": NS, "ids": [m["id"]], "agent": "coder"})
    assert r.status_code == 200 and set(r.json()[0]["used_by"]) == {"coder"}
    for agent in ("reviewer", "planner"):
        r = httpx.post(f"{server.url}/v1/memories/{m['id']}/feedback", headers=h,
                       params={"namespace": NS}, json={"useful": True, "agent": agent})
        assert r.status_code == 200, r.text
    assert r.json()["tier"] == "medium" and r.json()["used_by"] == {}
    steps = httpx.get(f"{server.url}/v1/memories/{m['id']}/history", headers=h,
                      params={"namespace": NS}).json()
    assert any(s["reason"].startswith("used by 3 agents") for s in steps)
    bad = httpx.post(f"{server.url}/v1/entries", headers=h, json={
        "namespace": NS, "ids": [m["id"]], "agent": 7})
    assert bad.status_code == 422
