"""The Memory Viewer in a real browser: Playwright drives Debian's Chromium against a real
``graphmem serve`` on loopback over seeded data (the real embedding model on both sides).

Screenshots of each view land in ``$GRAPHMEM_SCREENSHOTS`` (default: the test's temporary
folder); the best ones are committed under ``docs/img/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from graphmem import GraphMemory
from graphmem.api.keys import KeyStore
from graphmem.config import ConsolidationConfig, GraphMemConfig

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (.ci/run installs Debian's "
                       "chromium; CI has one)"),
]
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright is a test "
                                      "dependency: pip install -e .[test]")

NS, FOREIGN = "alpha", "beta"
TOPICS = {
    "backup": ["The nightly backup job failed because the storage volume was full",
               "Backups failed again overnight: the backup disk ran out of space",
               "The backup volume filled up and the nightly backup did not finish",
               "Disk full on the backup server stopped last night's backup run"],
    "refund": ["A customer was charged twice and asked for a refund of the duplicate invoice",
               "Refund issued after the billing system charged a customer twice",
               "Duplicate charge on an invoice: the customer wants a refund",
               "Billing double-charged a customer; we refunded the second payment"],
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _seed(folder: Path) -> dict[str, Any]:
    """Old topic clusters (to consolidate), an incident chain with a dispute, a session, a
    foreign namespace, and a consolidation run held for approval."""
    from graphmem.consolidation.runner import Consolidator

    now = datetime.now(UTC)
    past = now - timedelta(days=60)
    clock = {"now": past}
    ids: dict[str, Any] = {}
    cfg = GraphMemConfig(consolidation=ConsolidationConfig(age_days=30, coherence=0.5))
    with GraphMemory.open(folder, clock=lambda: clock["now"], config=cfg) as mem:
        for texts in TOPICS.values():
            for i, text in enumerate(texts):
                mem.store(text, namespace=NS, importance=0.3,
                          created_at=past + timedelta(hours=i), source="ops-agent")
        clock["now"] = now
        deploy = mem.store("The 14:00 deploy of billing-api failed: the schema migration held "
                           "a lock on the invoices table", namespace=NS, importance=0.9,
                           source="ops-agent", created_at=now - timedelta(hours=5))
        timeouts = mem.store("Checkout requests timed out while the invoices table was locked",
                             namespace=NS, importance=0.8, created_at=now - timedelta(hours=4))
        pg15 = mem.store("Billing runs on PostgreSQL 15", namespace=NS, importance=0.5)
        pg14 = mem.store("Billing runs on PostgreSQL 14", namespace=NS, importance=0.3)
        mem.relate(deploy.id, timeouts.id, "CAUSES", namespace=NS)
        mem.relate(pg14.id, pg15.id, "CONTRADICTS", namespace=NS)
        mem.store_many([{"content": t, "session_id": "chat-1", "source": who,
                         "created_at": now - timedelta(hours=3, minutes=-i)}
                        for i, (who, t) in enumerate([
                            ("priya", "Priya: can we deploy billing again on Friday?"),
                            ("agent", "Agent: yes, if the migration runs in batches after 18:00"),
                            ("priya", "Priya: ok, send me the summary afterwards")])],
                       namespace=NS)
        foreign = mem.store("Beta team secret: the launch moves to June", namespace=FOREIGN)
        clock["now"] = now + timedelta(hours=3)  # the fast tier's retention passes: demotions
        assert mem.maintain(NS).transitions
        original = Consolidator._retrieval_check
        Consolidator._retrieval_check = lambda self, plan: {  # type: ignore[method-assign]
            "queries": 10, "recall_before": 1.0, "recall_after": 0.6, "loss": 0.4,
            "held_on": 0.4, "max_loss": 0.2}
        try:
            run = mem.consolidate(namespace=NS)
        finally:
            Consolidator._retrieval_check = original  # type: ignore[method-assign]
        foreign_run = mem.consolidate(namespace=FOREIGN, dry_run=True)
        rota = mem.store("Last week the on-call rotation moved to Priya", namespace=NS,
                         created_at=datetime(2025, 3, 12, 9, tzinfo=UTC))
        ids.update(rota=rota.id)
        ids.update(deploy=deploy.id, timeouts=timeouts.id, pg14=pg14.id, foreign=foreign.id,
                   run=run.id, run_status=run.status, foreign_run=foreign_run.id)
    keys = KeyStore(folder / "keys.db")
    ids["admin"] = keys.create([NS], "admin", "browser test admin")[1]
    ids["reader"] = keys.create([NS], "reader", "browser test reader")[1]
    ids["both"] = keys.create([NS, FOREIGN], "admin", "browser test admin of two namespaces")[1]
    return ids


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("viewer") / "data"
    seeded = _seed(folder)
    assert seeded["run_status"] == "pending_approval"
    port = _free_port()
    log = open(folder.parent / "serve.log", "wb")  # noqa: SIM115 - closed below
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "graphmem"), "serve", "--data",
                             str(folder), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{base}/readyz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("graphmem serve did not become ready: "
                        + (folder.parent / "serve.log").read_text()[-2000:])
        yield {**seeded, "base": base, "log": folder.parent / "serve.log"}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("GRAPHMEM_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture()
def page(browser: Any, served: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    pg.requests = []  # every URL the page asked for
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    context.close()


def _rest(served: dict[str, Any], method: str, path: str, body: Any = None,
          key: str = "admin") -> Any:
    req = urllib.request.Request(served["base"] + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {served[key]}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def _sign_in(page: Any, served: dict[str, Any], key: str) -> None:
    page.goto(served["base"] + "/viewer")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.locator("#nav").wait_for(state="visible")


def _until(page: Any, expression: str, timeout: float = 30.0) -> None:
    """Poll ``expression`` in the page (``wait_for_function`` evaluates with ``eval``, which
    the viewer's Content-Security-Policy rightly refuses)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        page.wait_for_timeout(100)


def _only_loopback(page: Any, served: dict[str, Any]) -> None:
    foreign = [u for u in page.requests if not u.startswith((served["base"], "data:", "blob:",
                                                             "about:"))]
    assert foreign == [], f"the page reached beyond the server: {foreign}"
    leaked = [u for u in page.requests
              if any(served[k] in u for k in ("admin", "reader", "both"))]
    assert leaked == [], "an API key appeared in a URL"


def test_search_timeline_entry_and_why(page: Any, served: dict[str, Any], shots: Path) -> None:
    before = _rest(served, "GET", f"/v1/memories/{served['deploy']}?namespace={NS}")
    _sign_in(page, served, served["admin"])
    assert page.locator("#role").inner_text() == "admin"
    page.get_by_label("Query").fill("why did the billing deploy fail?")
    page.get_by_role("button", name="Search").click()
    rows = page.locator("[data-testid=index] tbody tr")
    rows.first.wait_for()
    assert rows.count() >= 3
    page.screenshot(path=str(shots / "viewer-search.png"))
    page.locator("[data-testid=index] a", has_text="14:00 deploy").first.click()
    page.locator("[data-testid=entry]").wait_for()
    assert "schema migration" in page.locator("[data-testid=entry] .content").inner_text()
    why = page.locator("[data-testid=why]")
    why.wait_for()
    assert "Rank 1" in why.inner_text() or "Rank" in why.inner_text()
    assert "semantic" in why.inner_text() and "BM25" in why.inner_text()
    assert page.locator("[data-testid=path]").inner_text().startswith(("Found directly",
                                                                        "Reached"))
    page.locator("[data-testid=timeline] tr").first.wait_for()
    assert page.locator("[data-testid=timeline] tr.hl").count() == 1
    page.screenshot(path=str(shots / "viewer-memory.png"), full_page=True)
    # the viewer only looked: nothing it did counted as an access
    after = _rest(served, "GET", f"/v1/memories/{served['deploy']}?namespace={NS}")
    assert after["access_count"] == before["access_count"]
    assert after["last_accessed_at"] == before["last_accessed_at"]
    _only_loopback(page, served)


def test_why_names_the_time_the_query_names(page: Any, served: dict[str, Any]) -> None:
    """A query naming a month: the memory of that month says why in words (issue 49), and
    its record shows the week its content mentions ("last week", resolved when written)."""
    _sign_in(page, served, served["admin"])
    page.get_by_label("Query").fill("who took over the on-call rotation in March 2025?")
    page.get_by_role("button", name="Search").click()
    page.locator("[data-testid=index] a", has_text="on-call rotation").first.click()
    page.locator("[data-testid=entry]").wait_for()
    assert "2025-03-03 to 2025-03-09" in page.get_by_test_id("entry").inner_text()
    term = page.locator("[data-testid=why] li[data-term=time]")
    term.wait_for()
    assert "inside March 2025" in term.inner_text()


def test_the_list_and_the_memory_page_show_one_score(page: Any, served: dict[str, Any]) -> None:
    """A memory's score and rank in the search list are the ones its page's "why it ranked"
    shows (issue 44: 4.31 against 5.10 when the page searched with another walk depth)."""
    _sign_in(page, served, served["admin"])
    for query, depth in (("why did the billing deploy fail?", "1"), ("invoices table lock", "0")):
        url = f"{served['base']}/viewer#/search?{urlencode({'q': query, 'depth': depth})}"
        page.goto(url)
        rows = page.locator("[data-testid=index] tbody tr")
        rows.first.wait_for()
        n = rows.count()
        assert n >= 3
        for i in range(n):
            if i:
                page.goto(url)
                rows.first.wait_for()
            listed = rows.nth(i).locator("td.num").nth(1).inner_text()
            rows.nth(i).locator("a").first.click()
            page.get_by_test_id("why-score").wait_for()
            why = page.get_by_test_id("why").inner_text()
            shown = page.get_by_test_id("why-score").inner_text()
            assert (shown, f"Rank {i + 1} of") == (listed, why[why.index("Rank"):][:len(
                f"Rank {i + 1} of")]), f"{query!r} depth {depth}, row {i + 1}"
    _only_loopback(page, served)


def test_the_neighbourhood_graph_opens_a_node(page: Any, served: dict[str, Any],
                                              shots: Path) -> None:
    _sign_in(page, served, served["admin"])
    page.goto(f"{served['base']}/viewer#/graph/{served['deploy']}")
    page.locator("[data-testid=graph-nodes] li").first.wait_for()
    _until(page, "window.graphmemViewer.cy && window.graphmemViewer.cy.nodes().length > 1")
    n = page.evaluate("window.graphmemViewer.cy.nodes().length")
    assert n >= 2
    page.screenshot(path=str(shots / "viewer-graph.png"))
    # click the other end of the CAUSES edge, on the canvas
    box = page.locator("#graph").bounding_box()
    pos = page.evaluate(f"window.graphmemViewer.cy.getElementById('{served['timeouts']}')"
                        ".renderedPosition()")
    page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])
    page.wait_for_url(f"**#/memory/{served['timeouts']}")
    page.locator("[data-testid=entry]").wait_for()
    assert "timed out" in page.locator("[data-testid=entry] .content").inner_text()
    # a disputed pair is marked
    page.goto(f"{served['base']}/viewer#/graph/{served['pg14']}")
    page.locator("[data-testid=graph-nodes] .disputed").first.wait_for()
    assert page.locator("[data-testid=graph-nodes] .disputed").count() == 2
    _only_loopback(page, served)


def test_tier_dashboard(page: Any, served: dict[str, Any], shots: Path) -> None:
    _sign_in(page, served, served["admin"])
    page.get_by_role("link", name="Tiers").click()
    tiles = page.locator("[data-testid=tier-tiles] .tile")
    tiles.first.wait_for()
    assert tiles.count() == 4
    assert page.locator("svg.chart").count() == 3  # importance, age, transitions per day
    assert page.locator("[data-testid=transitions] tbody tr").count() >= 1
    assert "demotion" in page.locator("[data-testid=transitions]").inner_text()
    page.screenshot(path=str(shots / "viewer-tiers.png"), full_page=True)


def test_an_admin_approves_a_pending_run(page: Any, served: dict[str, Any], shots: Path) -> None:
    _sign_in(page, served, served["admin"])
    page.get_by_role("link", name="Consolidation").click()
    pending = page.locator("tr.pending-run")
    pending.first.wait_for()
    assert "waits for approval" in pending.first.inner_text()
    pending.first.locator("a").click()
    page.locator("iframe.report").wait_for()
    frame = page.frame_locator("iframe.report")
    frame.locator("body").wait_for()
    assert "Consolidation" in frame.locator("body").inner_text()
    page.screenshot(path=str(shots / "viewer-run.png"))
    page.once("dialog", lambda d: d.dismiss())  # cancelling the confirmation changes nothing
    page.get_by_test_id("approve").click()
    assert _rest(served, "GET", f"/v1/consolidation/runs/{served['run']}")["status"] == \
        "pending_approval"
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id("approve").click()
    page.get_by_test_id("rollback").wait_for()
    assert _rest(served, "GET", f"/v1/consolidation/runs/{served['run']}")["status"] == "applied"
    # the summary it wrote stands for its members: its graph shows them, archived ones faded
    page.goto(f"{served['base']}/viewer#/search?q=backup%20disk%20full")
    page.locator("[data-testid=index] a", has_text="memories about").first.click()
    page.get_by_role("link", name="Neighbourhood graph").click()
    _until(page, "window.graphmemViewer.cy && window.graphmemViewer.cy.nodes().length > 2")
    kinds = page.evaluate("window.graphmemViewer.cy.edges().map(e => e.data('type'))")
    assert "SUMMARIZES" in kinds
    assert "archived" in page.locator("[data-testid=graph-nodes]").inner_text()
    page.screenshot(path=str(shots / "viewer-graph-summary.png"))
    _only_loopback(page, served)


def test_switching_namespace_on_a_run_page_lists_the_new_namespaces_runs(
        page: Any, served: dict[str, Any]) -> None:
    _sign_in(page, served, served["both"])
    assert page.locator("#ns option").all_inner_texts() == [NS, FOREIGN]
    page.select_option("#ns", NS)
    page.goto(f"{served['base']}/viewer#/runs/{served['run']}")
    page.locator("iframe.report").wait_for()
    assert served["run"] in page.locator("#view h2").inner_text()
    page.select_option("#ns", FOREIGN)
    page.wait_for_url("**/viewer#/runs", timeout=10_000)
    runs = page.get_by_test_id("runs")
    runs.wait_for(timeout=10_000)
    assert served["foreign_run"] in runs.inner_text()
    assert served["run"] not in page.locator("#view").inner_text()
    assert page.locator("iframe.report").count() == 0
    # and back: the first namespace's runs, not the run page left behind
    page.select_option("#ns", NS)
    playwright_sync.expect(runs).to_contain_text(served["run"])
    assert served["foreign_run"] not in runs.inner_text()
    # a memory's page leaves for the same search in the new namespace
    page.goto(f"{served['base']}/viewer#/memory/{served['deploy']}?q=deploy&depth=1")
    page.get_by_test_id("why").wait_for()
    page.select_option("#ns", FOREIGN)
    page.wait_for_url("**/viewer#/search?q=deploy&depth=1", timeout=10_000)
    page.locator("[data-testid=index], #results p").first.wait_for()
    assert page.get_by_test_id("entry").count() == 0
    assert "schema migration" not in page.locator("#view").inner_text()
    _only_loopback(page, served)


def test_an_admin_starts_a_dry_run_and_a_run(page: Any, served: dict[str, Any],
                                             shots: Path) -> None:
    """Started in the other namespace (one memory): the held run of the first one stays for
    the approval test."""
    _sign_in(page, served, served["both"])
    page.select_option("#ns", FOREIGN)
    page.get_by_role("link", name="Consolidation").click()
    page.get_by_test_id("runs").wait_for()
    before = {r["id"] for r in _rest(served, "GET", "/v1/consolidation/runs", key="both")}
    page.get_by_test_id("start-dry-run").click()
    page.wait_for_url(re.compile(r"#/runs/[^/]+$"))
    dry = page.url.rsplit("/", 1)[1]
    assert dry not in before
    page.locator("iframe.report").wait_for()
    assert "dry run" in page.locator("#view h2").inner_text()
    record = _rest(served, "GET", f"/v1/consolidation/runs/{dry}", key="both")
    assert record["status"] == "dry_run"
    page.get_by_role("link", name="All runs").click()
    page.get_by_test_id("runs").wait_for()
    assert dry in page.get_by_test_id("runs").inner_text()
    page.screenshot(path=str(shots / "viewer-runs-start.png"))
    page.once("dialog", lambda d: d.dismiss())  # cancelling the confirmation starts nothing
    page.get_by_test_id("start-run").click()
    assert len(_rest(served, "GET", "/v1/consolidation/runs", key="both")) == len(before) + 1
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id("start-run").click()
    page.wait_for_url(re.compile(rf"#/runs/(?!{re.escape(dry)}$)[^/]+$"))
    real = page.url.rsplit("/", 1)[1]
    page.locator("iframe.report").wait_for()
    record = _rest(served, "GET", f"/v1/consolidation/runs/{real}", key="both")
    assert record["status"] in ("applied", "pending_approval")
    assert real in page.locator("#view h2").inner_text()
    runs = _rest(served, "GET", "/v1/consolidation/runs", key="both")
    assert {r["id"]: r["namespace"] for r in runs if r["id"] not in before} == {
        dry: FOREIGN, real: FOREIGN}
    _only_loopback(page, served)


def test_a_reader_sees_no_write_buttons_and_a_foreign_memory_is_not_found(
        page: Any, served: dict[str, Any]) -> None:
    _sign_in(page, served, served["reader"])
    assert page.locator("#role").inner_text() == "reader"
    page.goto(f"{served['base']}/viewer#/runs/{served['run']}")
    page.locator("iframe.report").wait_for()
    assert page.get_by_test_id("approve").count() == 0
    assert page.get_by_test_id("rollback").count() == 0
    page.get_by_role("link", name="All runs").click()
    page.get_by_test_id("runs").wait_for()  # the list is there, the buttons that start are not
    assert page.get_by_test_id("start-dry-run").count() == 0
    assert page.get_by_test_id("start-run").count() == 0
    page.goto(f"{served['base']}/viewer#/memory/{served['deploy']}")
    page.locator("[data-testid=entry]").wait_for()
    assert page.get_by_test_id("pin").count() == 0
    # a memory of another namespace looks exactly like one that does not exist
    page.goto(f"{served['base']}/viewer#/memory/{served['foreign']}")
    page.get_by_test_id("not-found").wait_for()
    foreign = page.get_by_test_id("not-found").inner_text()
    page.goto(f"{served['base']}/viewer#/memory/{uuid.uuid4()}")
    page.get_by_test_id("not-found").wait_for()
    assert page.get_by_test_id("not-found").inner_text() == foreign
    assert "launch" not in page.content()
    # the namespace list offers only the key's own namespaces
    assert page.locator("#ns option").all_inner_texts() == [NS]


def test_a_wrong_key_is_refused_and_the_key_stays_out_of_urls_and_logs(
        page: Any, served: dict[str, Any]) -> None:
    page.goto(served["base"] + "/viewer")
    page.get_by_label("API key").fill("gm_not-a-real-key")
    page.get_by_role("button", name="Sign in").click()
    playwright_sync.expect(page.locator("#signin-error")).to_contain_text("unknown or revoked")
    assert page.locator("#nav").is_hidden()
    _sign_in(page, served, served["admin"])
    page.get_by_role("link", name="Tiers").click()
    page.locator("[data-testid=tier-tiles]").wait_for()
    _only_loopback(page, served)
    log = served["log"].read_text(errors="replace")
    assert all(served[k] not in log for k in ("admin", "reader", "both"))


def test_keyboard_and_phone_width(browser: Any, served: dict[str, Any], shots: Path) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(served["base"] + "/viewer")
        page.get_by_label("API key").wait_for()
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to content"
        page.get_by_label("API key").focus()
        page.keyboard.type(served["admin"])
        page.keyboard.press("Enter")
        page.locator("#nav").wait_for(state="visible")
        page.get_by_label("Query").fill("backup disk full")
        page.keyboard.press("Enter")
        page.locator("[data-testid=index] tbody tr").first.wait_for()
        page.screenshot(path=str(shots / "viewer-phone.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 391, f"the page is {width}px wide on a 390px screen"
        # keyboard: a result link takes focus and opens with Enter
        page.locator("[data-testid=index] a").first.focus()
        page.keyboard.press("Enter")
        page.locator("[data-testid=entry]").wait_for()
    finally:
        context.close()


def test_api_docs_render_offline(page: Any, served: dict[str, Any], shots: Path) -> None:
    page.goto(served["base"] + "/docs")
    page.locator(".swagger-ui .info .title").wait_for()
    assert "graphmem" in page.locator(".swagger-ui .info .title").inner_text()
    page.locator(".opblock").first.wait_for()
    assert page.locator(".swagger-ui .btn.authorize").count() == 1  # a key for "Try it out"
    page.screenshot(path=str(shots / "docs-swagger.png"))
    page.goto(served["base"] + "/redoc")
    page.wait_for_timeout(5000)
    page.screenshot(path=str(shots / "docs-redoc.png"))
    page.get_by_text("/v1/search/index").first.wait_for(timeout=30_000)
    _only_loopback(page, served)
    # and the viewer links to them
    _sign_in(page, served, served["admin"])
    assert page.get_by_role("link", name="API docs").get_attribute("href") == "/docs"
