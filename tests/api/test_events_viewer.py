"""The Memory Viewer updates its lists live from ``GET /v1/events`` (issue 48): Playwright
drives Debian's Chromium against the app under uvicorn; a memory written through REST appears
in the open page without a reload, and nothing of another namespace does."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.test_events_rest import NS, OTHER, Served, served  # noqa: F401 - the fixture

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (.ci/run installs "
                                "Debian's chromium; CI has one)")
playwright_sync = pytest.importorskip("playwright.sync_api", reason="playwright is a test "
                                      "dependency: pip install -e .[test]")


@pytest.fixture()
def page(served: Served) -> Iterator[Any]:  # noqa: F811 - the fixture imported above
    with playwright_sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pg = browser.new_page(viewport={"width": 1280, "height": 800})
        pg.requests = []
        pg.on("request", lambda r: pg.requests.append(r.url))
        yield pg
        browser.close()


def test_a_memory_written_through_rest_appears_without_a_reload(
        page: Any, served: Served) -> None:  # noqa: F811
    both = served.mem  # the key of the page may read ops only
    page.goto(served.url + "/viewer")
    page.get_by_label("API key").fill(served.keys["reader"])
    page.get_by_role("button", name="Sign in").click()
    page.locator("[data-testid=live-list]").wait_for(state="attached")
    page.evaluate("window.notReloaded = true")
    deadline = time.monotonic() + 30
    while both.core.events.listening() == 0:  # the page's stream is open
        assert time.monotonic() < deadline, "the page opened no event stream"
        time.sleep(0.05)

    mine = served.write("The canary deploy of search-api passed on the second try")
    served.write("An HR matter the ops key may not see", ns=OTHER)
    row = page.locator(f"[data-testid=live-list] li[data-id='{mine}']")
    row.wait_for()
    assert row.get_attribute("data-type") == "stored"
    assert "canary deploy of search-api" in row.inner_text()
    assert page.evaluate("window.notReloaded === true")  # the same page, updated in place
    assert "HR matter" not in page.locator("[data-testid=live-list]").inner_text()
    assert page.evaluate("window.graphmemViewer.live.events.every(e => e.namespace === 'ops')")

    # a change to it arrives as well, and the link opens the memory
    r = httpx.patch(f"{served.url}/v1/memories/{mine}", params={"namespace": NS},
                    json={"content": "The canary deploy of search-api passed at last"},
                    headers={"Authorization": f"Bearer {served.keys['ops']}"}, timeout=30)
    assert r.status_code == 200, r.text
    page.locator(f"[data-testid=live-list] li[data-type=updated][data-id='{mine}']").wait_for()
    assert page.locator("[data-testid=live-list] li").first.get_attribute("data-type") == \
        "updated"
    keys = [k for k in served.keys.values() if any(k in u for u in page.requests)]
    assert keys == [], "an API key appeared in a URL"
