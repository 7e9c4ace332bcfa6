"""The web app in a real browser: ``coderiv serve`` started as a subprocess on a free loopback
port, Debian's Chromium driven by Playwright (the system browser: never ``playwright install``).
The page is opened with the token (then carried by the cookie), a document is uploaded through
the check page, the ranked matches and the evidence report are waited for and checked, the
side-by-side view of a source is opened, and screenshots are saved (``CODERIV_SCREENSHOTS``
names a folder to keep them, as docs/img does; otherwise the test's temporary folder).
Skipped only when /usr/bin/chromium is absent."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import coderiv
from coderiv.index.index import Index
from coderiv.pairs.methods import get_method
from coderiv.ranking.search import Searcher
from coderiv.report import ReportOptions, build_report
from tests.support.chromium import needs_chromium
from tests.support.network import free_port
from tests.support.processes import stop_process

EXAMPLE = Path(coderiv.__file__).parent / "data" / "example"
QUERY = EXAMPLE / "plagiarized-essay.txt"
TOKEN = "browser-test-token"



@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example collection without the plagiarized essay (which is the query), with the chunk
    store the report needs."""
    root = tmp_path_factory.mktemp("web-browser")
    shutil.copytree(EXAMPLE, root / "docs")
    (root / "docs" / QUERY.name).unlink()
    Index.update_from(root / "docs", root / "index", workers=1)
    spec = get_method("chunks").store
    Index.update_from(root / "docs", root / "index", stores=[spec], workers=1)
    return root / "index"


@pytest.fixture(scope="module")
def server(index_dir: Path) -> Iterator[str]:
    """``coderiv serve`` in a subprocess; yields its base URL and stops only that process."""
    port = free_port()
    log_path = index_dir.parent / "serve.log"
    env = {**os.environ, "CODERIV_TOKEN": TOKEN, "PYTHONPATH": os.pathsep.join([str(Path(coderiv.__file__).parents[1]), *sys.path])}
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "coderiv.cli.main", "serve", "--index", str(index_dir), "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # readiness, not a performance limit: the server imports and opens the index
            if process.poll() is not None:
                raise AssertionError(f"coderiv serve exited: {log_path.read_text()}")
            try:
                request = urllib.request.Request(f"{base}/api/info", headers={"Authorization": f"Bearer {TOKEN}"})
                with urllib.request.urlopen(request, timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        yield base
    finally:
        stop_process(process, 10)
        log.close()

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CODERIV_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_upload_ranked_matches_and_report_in_the_browser(server: str, browser: Any, index_dir: Path, shots: Path) -> None:
    index = Index.open(index_dir)
    expected = Searcher(index).search(QUERY.read_text("utf-8"), top=10).matches
    report = build_report(index, QUERY.read_text("utf-8"), QUERY.name, ReportOptions())
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    refused = page.goto(f"{server}/")
    assert refused is not None and refused.status == 401
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{server}/?token={TOKEN}")  # sets the cookie; every later request carries it
    assert page.locator("h1").inner_text() == "Check a document"
    page.set_input_files("#file", str(QUERY))
    assert page.locator("#file-name").inner_text() == QUERY.name
    page.screenshot(path=str(shots / "web-check.png"))
    page.click("#check-button")
    page.wait_for_url(f"{server}/check/*")
    page.wait_for_selector('#status[data-state="done"]', state="attached", timeout=120_000)  # the page reloads when the report is built

    rows = page.locator("#matches tbody tr")
    shown = [[cell.strip() for cell in rows.nth(i).locator("td").all_inner_texts()[:3]] for i in range(rows.count())]
    assert shown == [[str(m.rank), f"{m.percent:.1f}%", m.doc_id] for m in expected]
    assert shown[:5] == [  # the donors' versions first (the DOCX export of one among them), pinned
        ["1", "9.3%", "medieval-trade-v2.docx"], ["2", "9.3%", "medieval-trade-v2.txt"], ["3", "9.1%", "river-ecology-v1.txt"],
        ["4", "7.9%", "river-ecology-v3.txt"], ["5", "7.5%", "river-ecology-v2.txt"],
    ]
    assert page.locator("#overall").inner_text() == f"{report.overall:.1f}%"
    shares = [rows.nth(i).locator("td.share").inner_text().strip() for i in range(5)]
    head_of = {v.doc_id: s.doc_id for s in report.sources for v in s.versions}
    assert shares == [f"a version of {head_of[m.doc_id]}" if m.doc_id in head_of else
                      f"{next(s.share for s in report.sources if s.doc_id == m.doc_id):.1f}%" for m in expected[:5]]
    heads = {s.doc_id.split("-v")[0] for s in report.sources}
    assert heads == {"river-ecology", "medieval-trade"}  # the essay's two donor families, versions grouped
    frame = page.frame_locator("#report-frame")
    frame.locator("#overall").wait_for()
    page.screenshot(path=str(shots / "web-results.png"), full_page=False)
    assert frame.locator("#overall").inner_text().startswith(f"{report.overall:.1f}%")
    first = report.sources[0]
    block = frame.locator("details.pair", has=frame.locator(":scope > summary", has_text=first.doc_id))
    if block.get_attribute("open") is None:
        block.locator(":scope > summary").click()
    block.locator(".pane").first.wait_for()
    assert block.locator(".pane").nth(0).locator("mark").count() >= 1
    assert block.locator(".pane").nth(1).locator("mark").count() >= 1
    block.scroll_into_view_if_needed()
    page.locator("#report-frame").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "web-side-by-side.png"))
    assert not errors, errors  # no script error, no CSP violation


def test_document_page_in_the_browser(server: str, browser: Any, shots: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{server}/collection?token={TOKEN}")
    page.fill("#q", "river")
    page.press("#q", "Enter")
    page.wait_for_url("**/collection?q=river")
    assert page.locator("#ids li").all_inner_texts() == ["river-ecology-v1.txt", "river-ecology-v2.txt", "river-ecology-v3.txt"]
    page.click("text=river-ecology-v2.txt")
    assert page.locator("h1").inner_text() == "river-ecology-v2.txt"
    assert "no pair table for method 'chunks'" in page.locator(".note").inner_text()


def test_drag_and_drop_and_paste_in_the_browser(server: str, browser: Any, index_dir: Path) -> None:
    text = (EXAMPLE / "river-ecology-v2.txt").read_text("utf-8")
    expected = Searcher(Index.open(index_dir)).search(text, top=3).matches
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(f"{server}/?token={TOKEN}")
    page.evaluate(
        """text => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([text], "dropped.txt", {type: "text/plain"}));
            const zone = document.getElementById("drop-zone");
            zone.dispatchEvent(new DragEvent("dragover", {dataTransfer: transfer, bubbles: true, cancelable: true}));
            zone.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
        }""",
        text,
    )
    assert page.locator("#file-name").inner_text() == "dropped.txt"
    page.fill("#top", "3")
    page.click("#check-button")
    page.wait_for_selector('#status[data-state="done"]', state="attached", timeout=120_000)
    assert page.locator("h1 .doc").inner_text() == "dropped.txt"
    rows = page.locator("#matches tbody tr")
    assert [[c.strip() for c in rows.nth(i).locator("td").all_inner_texts()[:3]] for i in range(rows.count())] == [
        [str(m.rank), f"{m.percent:.1f}%", m.doc_id] for m in expected]
    assert expected[0].doc_id == "river-ecology-v2.txt" and f"{expected[0].percent:.1f}" == "100.0"

    page.goto(f"{server}/")
    page.fill("#text", "<b>" + text[:2000] + "</b>")  # pasted text, markup and all, shown as text
    page.click("#check-button")
    page.wait_for_selector('#status[data-state="done"]', state="attached", timeout=120_000)
    assert page.locator("h1 .doc").inner_text() == "pasted text"
    assert page.locator("#matches tbody tr").first.locator("td").all_inner_texts()[2] == "river-ecology-v2.txt"
