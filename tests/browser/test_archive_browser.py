"""The archive in a real browser (Debian's Chromium through Playwright): an examiner signs in
with ``?token=``, submits a thesis through the page, reads its report in the sandboxed frame,
records a decision, archives it; a later copy is submitted and archived, and the older thesis's
page shows it as new. ``coderiv serve --archive`` runs as a subprocess with real worker
processes; screenshots are saved (``CODERIV_SCREENSHOTS`` names a folder to keep them)."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")

from tests.support.archive import P, Q, R, add_users, build_collection, server_ready, start_server  # noqa: E402
from tests.support.chromium import needs_chromium  # noqa: E402
from tests.support.network import free_port  # noqa: E402
from tests.support.processes import stop_process

pytestmark = [pytest.mark.browser, needs_chromium]
THESIS = P + " " + Q + " and my own conclusion: " + R


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("archive-browser")
    index = build_collection(root)
    url = f"sqlite:///{root / 'archive.sqlite'}"
    tokens = add_users(url)
    port = free_port()
    process: subprocess.Popen[bytes] = start_server(index, url, port, root / "serve.log", args=("--check-workers", "1"))
    base = f"http://127.0.0.1:{port}"
    try:
        assert server_ready(base, tokens["eve"]), (root / "serve.log").read_text()
        yield base, tokens
    finally:
        stop_process(process)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CODERIV_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _submit(page: Any, base: str, path: Path, archive: bool) -> str:
    page.goto(f"{base}/submissions")
    page.set_input_files("#submit-file", str(path))
    if archive:
        page.check("input[name=archive]")
    page.click("#submit-button")
    page.wait_for_url(f"{base}/submissions/*")
    # the page refreshes itself while the check runs (a function would be refused by the page's CSP)
    page.wait_for_selector('#state[data-state="done"]', state="attached", timeout=120_000)
    return str(page.url.rsplit("/", 1)[1])


def test_submit_report_decide_archive_and_a_later_copy_shows_on_the_older_page(
    server: tuple[str, dict[str, str]], browser: Any, tmp_path: Path, shots: Path,
) -> None:
    base, tokens = server
    # a reader in Prague: the page shows its times in their zone (the server writes UTC)
    page = browser.new_page(viewport={"width": 1280, "height": 900}, timezone_id="Europe/Prague", locale="en-GB")
    assert page.goto(f"{base}/submissions").status == 401
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{base}/submissions?token={tokens['eve']}")  # sets the cookie
    assert "Signed in as eve (examiner)" in page.locator("p.lead").inner_text()
    thesis = tmp_path / "thesis.txt"
    thesis.write_text(THESIS, "utf-8")
    first = _submit(page, base, thesis, archive=False)
    words = len(THESIS.split())  # P (15 words) and Q (16) copied, the rest (own words) not
    assert page.locator("#overall").inner_text() == f"{100 * 31 / words:.1f}%"
    frame = page.frame_locator("#report-frame")
    frame.locator("#overall").wait_for()
    assert frame.locator("#overall").inner_text().startswith(f"{100 * 31 / words:.1f}%")
    page.screenshot(path=str(shots / "archive-submission.png"), full_page=False)
    # the actions in three labelled groups, side by side; every time in the reader's zone
    groups = page.locator("#actions fieldset.group")
    assert groups.locator("legend").all_inner_texts() == ["Decision", "Collection and checks", "Record"]
    assert [groups.nth(i).locator("button").all_inner_texts() for i in range(3)] == [
        ["Record the decision"], ["Add to the collection", "Check again"], ["Delete"]]
    boxes = [groups.nth(i).bounding_box() for i in range(3)]
    for a, b in itertools.combinations(boxes, 2):  # apart from each other, none inside another
        assert (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]), boxes
    created = page.locator("p.lead time")
    utc = dt.datetime.fromisoformat(created.get_attribute("datetime").rstrip("Z")).replace(tzinfo=dt.timezone.utc)
    local = utc.astimezone(ZoneInfo("Europe/Prague"))
    assert created.inner_text() == f"{local.day} {local:%b %Y, %H:%M} CET", created.inner_text()

    page.select_option("#decision-state", "misconduct")
    page.fill("#decision-note", "two copied paragraphs")
    page.click("#decision-button")
    page.wait_for_url(f"{base}/submissions/{first}")
    assert page.locator("#decision").inner_text() == "misconduct"
    assert "eve — misconduct: two copied paragraphs" in page.locator("#decisions").inner_text()
    page.click("#archive-button")
    page.wait_for_selector("#archived", timeout=120_000)
    older = f"archive/{first}.txt"
    assert page.locator("#archived").inner_text() == older

    page.goto(f"{base}/archive/document?id={older}")  # the first look: its matches at archiving
    assert set(page.locator("#doc-matches tbody tr td:nth-child(3)").all_inner_texts()) == {"src1.txt", "src2.txt"}

    copy = tmp_path / "copy.txt"
    copy.write_text(THESIS, "utf-8")
    later = _submit(page, base, copy, archive=True)
    assert page.locator("#overall").inner_text() == "100.0%"  # the archived thesis is now a source
    named = page.frame_locator("#report-frame").locator("a.label").first
    named.wait_for()
    assert named.inner_text().startswith("student paper: thesis.txt (eve), archived ")  # in the report, by name
    page.wait_for_selector("#archived", timeout=120_000)  # (the page stops refreshing itself)
    page.frame_locator("#report-frame").locator("a.label").first.wait_for()
    page.locator("#report-frame").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "archive-named-source.png"))
    page.goto(f"{base}/submissions")
    page.screenshot(path=str(shots / "archive-list.png"), full_page=False)
    listed = page.locator("#submissions tbody tr").all_inner_texts()
    assert len(listed) == 2 and "misconduct" in listed[1] and "copy.txt" in listed[0]

    page.goto(f"{base}/archive/document?id={older}")
    assert page.locator("#new-count").inner_text() == "1 new since you last looked."
    new_rows = page.locator("#doc-matches tr.new td:nth-child(3)").all_inner_texts()
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    assert new_rows == [f"student paper: copy.txt (eve), archived {today}, decision: open · its submission"]
    assert page.locator("#doc-matches tr.new td:nth-child(3) a").nth(1).get_attribute("href") == f"/submissions/{later}"
    assert page.locator("#student-paper").inner_text().startswith("It is the student paper: thesis.txt (eve), archived ")
    assert "100.0%" in page.locator("#doc-matches tr.new").inner_text()
    page.screenshot(path=str(shots / "archive-document.png"), full_page=False)
    assert not errors, errors  # no script error, no CSP violation
