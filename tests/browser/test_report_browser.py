"""The HTML report in a real browser: Debian's Chromium, driven by Playwright (never
``playwright install``: the system browser is used). Highlights exist for every source,
clicking a passage scrolls the other pane to it, document text never runs as script, and a
screenshot is taken. Skipped only when /usr/bin/chromium is absent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coderiv.report import ReportOptions, build_report, render_html
from tests.support.chromium import needs_chromium
from tests.support.report_corpus import build, para

A1, LONG = para("a", 1), para("long", 0)
FILLER = "\n".join(f"line{i} filler{i}" for i in range(60))  # tall, but too short to be folded
QUERY = f"{A1}\n\n" + "\n".join(f"own{i} words{i}" for i in range(60)) + f"\n\n{LONG}"
EVIL = '<script>window.pwned = 1</script> <img src=x onerror="window.pwned = 2"> </textarea> ' + para("x", 0)

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser")
    index = build(root, {"long.txt": FILLER + "\n\n" + LONG, "evil<b>.txt": EVIL})
    path = root / "report.html"
    path.write_text(render_html(build_report(index, QUERY, "query.txt", ReportOptions(group_versions=False))), "utf-8")
    return path


def pair(page: Any, doc_id: str) -> Any:
    """The side-by-side block of ``doc_id``, opened."""
    block = page.locator("details.pair", has=page.locator("summary", has_text=doc_id))
    if block.get_attribute("open") is None:
        block.locator("summary").click()
    block.locator(".pane").first.wait_for()  # the panes are put in on opening (lazy rendering)
    return block


def test_highlights_and_linked_scrolling(browser: Any, report_file: Path, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(report_file.as_uri())
    assert page.locator("#overall").inner_text().startswith("25.0%")  # 40 of 160 words
    assert page.locator("#query mark.s1").count() == 1 and page.locator("#query mark.s2").count() == 1
    for doc_id in ("a.txt", "c.txt", "long.txt"):
        block = pair(page, doc_id)
        assert block.locator(".pane").nth(0).locator("mark").count() >= 1
        assert block.locator(".pane").nth(1).locator("mark").count() >= 1
    block = pair(page, "long.txt")
    left, right = block.locator(".pane").nth(0), block.locator(".pane").nth(1)
    assert right.evaluate("p => p.scrollTop") == 0
    left.locator("mark").first.click()
    assert right.evaluate("p => p.scrollTop") > 0
    assert visible_in_pane(right, right.locator("mark").first)
    left.evaluate("p => { p.scrollTop = 0; }")
    right.locator("mark").first.click()
    assert left.evaluate("p => p.scrollTop") > 0
    assert visible_in_pane(left, left.locator("mark").first)
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    page.close()


def visible_in_pane(pane: Any, mark: Any) -> bool:
    p, m = pane.bounding_box(), mark.bounding_box()
    return bool(p["y"] <= m["y"] and m["y"] + min(m["height"], 20) <= p["y"] + p["height"])


def test_clicking_a_highlight_in_the_query_opens_its_comparison(browser: Any, report_file: Path) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 800})  # a phone
    page.goto(report_file.as_uri())
    rank = page.locator("#query mark.s2").get_attribute("data-src")
    page.locator("#query mark.s2").click()
    assert page.locator(f"#src-{rank}").get_attribute("open") is not None
    assert page.locator(f"#src-{rank} .pane mark").count() >= 2
    page.close()


def test_document_text_is_shown_not_run(browser: Any, tmp_path: Path) -> None:
    index = build(tmp_path, {"evil<b>.txt": EVIL})
    path = tmp_path / "evil.html"
    path.write_text(render_html(build_report(index, EVIL + "\n\n" + A1, "<i>q</i>.txt")), "utf-8")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    pair(page, "evil<b>.txt")
    assert page.evaluate("() => window.pwned") is None
    assert page.locator("img").count() == 0 and page.locator("textarea").count() == 0
    assert "<script>window.pwned = 1</script>" in page.locator("#query").inner_text()
    assert "evil<b>.txt" in page.locator("table.sources").inner_text()
    assert errors == []
    page.close()


BIG = para("big", 0, 120)
#: BIG with every 15th word (from the 7th) replaced: 8 differing words, one passage
EDITED = " ".join(f"zz{i}" if i % 15 == 7 else w for i, w in enumerate(BIG.split(" ")))
SHOTS = Path("/tmp/coderiv-report-shots")


@pytest.fixture(scope="module")
def edited_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("edited")
    index = build(root, {"big.txt": FILLER + "\n\n" + BIG})
    query = "\n".join(f"own{i} words{i}" for i in range(60)) + f"\n\n{EDITED}\n\nThe end of it all."
    path = root / "edited.html"
    path.write_text(render_html(build_report(index, query, str(root / "thesis.txt"), ReportOptions(group_versions=False))), "utf-8")
    return path


def test_an_edited_passage_is_one_passage_with_its_differing_words_marked(browser: Any, edited_file: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(edited_file.as_uri())
    assert page.locator("#query mark.s1.chg").count() == 8
    assert [m.inner_text() for m in page.locator("#query mark.s1.chg").all()] == [f"zz{i}" for i in range(7, 120, 15)]
    block = pair(page, "big.txt")
    left, right = block.locator(".pane").nth(0), block.locator(".pane").nth(1)
    assert left.locator("mark[id]").count() == 1 and right.locator("mark[id]").count() == 1  # one passage
    assert left.locator("mark.chg").count() == 8 and right.locator("mark.chg").count() == 8
    assert "passage 1: 120 words, 93% of its words identical" in (left.locator("mark[id]").get_attribute("title") or "")
    assert str(edited_file.parent) not in page.content()  # file names only, never the examiner's folders
    SHOTS.mkdir(exist_ok=True)
    left.locator("mark.chg").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "edited.png"), full_page=False)
    page.close()


def test_a_click_in_the_overview_scrolls_both_panes(browser: Any, edited_file: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(edited_file.as_uri())
    page.locator("#query mark.s1").first.click()
    block = page.locator("#src-1")
    left, right = block.locator(".pane").nth(0), block.locator(".pane").nth(1)
    assert left.evaluate("p => p.scrollTop") > 0 and right.evaluate("p => p.scrollTop") > 0
    assert visible_in_pane(left, left.locator("mark[id]").first)
    assert visible_in_pane(right, right.locator("mark[id]").first)
    page.close()
