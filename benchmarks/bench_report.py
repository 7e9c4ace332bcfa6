"""A 300-page query's evidence report against the 100K-document synthetic collection.

The query is ~90,000 words (300 pages of 300 words): about half of the paragraphs of 20
documents of the collection, shuffled among paragraphs of other synthetic text (another seed,
so no collection document holds them). Prints the time to open the index (adding the chunk
store once if needed is timed apart), to build the report, to render HTML and JSON, the HTML
size, and the time Chromium takes to load the page (headless, /usr/bin/chromium).

    python benchmarks/bench_scale.py --docs 100000           # makes /tmp/coderiv-synthetic-100000.tar
    python benchmarks/bench_report.py [--index /tmp/coderiv-report-100k] [--reuse]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path

from coderiv.evaluation.synthetic import SyntheticCollection
from coderiv.index.index import Index
from coderiv.ranking.containment import chunk_store_spec
from coderiv.report import ReportOptions, build_report, render_html, render_json
from common import machine, timed

TAR = Path("/tmp/coderiv-synthetic-100000.tar")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def make_query(sources: int = 20, words: int = 90_000) -> tuple[str, list[str]]:
    """The query text and the ids of the documents it copies from."""
    texts = json.loads(TAR.with_suffix(".queries.json").read_text("utf-8"))
    rng = random.Random(300)
    chosen = sorted(texts)[:sources]
    paragraphs = []
    for doc_id in chosen:
        own = texts[doc_id].split("\n\n")
        paragraphs += rng.sample(own, len(own) // 2)
    count = sum(len(p.split()) for p in paragraphs)
    for doc in SyntheticCollection(400, seed=77).documents():
        for paragraph in doc.data.decode().split("\n\n"):
            if count >= words:
                break
            paragraphs.append(paragraph)
            count += len(paragraph.split())
    rng.shuffle(paragraphs)
    return "\n\n".join(paragraphs), chosen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", default="/tmp/coderiv-report-100k")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not TAR.exists():
        raise SystemExit(f"{TAR} is missing: run benchmarks/bench_scale.py --docs 100000 first")
    print(f"machine: {machine()}")
    if not args.reuse:
        shutil.rmtree(args.index, ignore_errors=True)
        seconds, _ = timed(lambda: Index.update_from(TAR, args.index, stores=[chunk_store_spec()], workers=args.workers))
        print(f"index with terms and chunks: {seconds:.1f} s")
    query, chosen = make_query()
    print(f"query: {len(query.split()):,} words, {len(query) / 1e6:.2f} MB, from {len(chosen)} documents")
    seconds, index = timed(lambda: Index.open(args.index))
    print(f"open index ({index.n_docs:,} documents): {seconds:.2f} s")
    seconds, report = timed(lambda: build_report(index, query, "300 pages", ReportOptions(top=25)))
    found = {s.doc_id for s in report.sources} | {v.doc_id for s in report.sources for v in s.versions}
    print(f"build_report: {seconds:.1f} s; {len(report.sources)} sources, {len(set(chosen) & found)} of the "
          f"{len(chosen)} copied documents among them; overall {report.overall:.1f}%, {report.candidates} candidates")
    seconds, html = timed(lambda: render_html(report))
    print(f"render_html: {seconds:.2f} s, {len(html.encode()) / 1e6:.1f} MB")
    seconds, data = timed(lambda: render_json(report))
    print(f"render_json: {seconds:.2f} s, {len(data.encode()) / 1e6:.1f} MB")
    page_path = Path(args.index).with_suffix(".html")
    page_path.write_text(html, "utf-8")
    print(chromium_load(page_path))


def chromium_load(path: Path) -> str:
    """Seconds from navigation to the load event, and to the first comparison's panes."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="load", timeout=120_000)
        loaded = time.perf_counter() - start
        page.locator("details.pair .pane").first.wait_for()
        start = time.perf_counter()
        page.locator("details.pair > summary").nth(1).click()
        page.locator("details.pair").nth(1).locator(".pane").first.wait_for()
        opened = time.perf_counter() - start
        browser.close()
    return f"chromium: page loaded in {loaded:.2f} s; opening another comparison {opened:.2f} s"


if __name__ == "__main__":
    main()
