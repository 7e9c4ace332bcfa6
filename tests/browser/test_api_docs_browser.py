"""The API documentation page (issue 28 item 8) in a real browser with no way out: ``coderiv
serve`` on a free loopback port, Debian's Chromium through Playwright, every request to
another host refused by the test. The page must draw the API's operations from files of the
server alone (FastAPI's default /docs fetched Swagger UI from a CDN and stayed blank offline)."""

from __future__ import annotations

import os
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
from tests.support.chromium import needs_chromium
from tests.support.files import write_docs
from tests.support.network import free_port
from tests.support.processes import stop_process

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("api-docs")
    Index.update_from(write_docs(root / "docs", {"a.txt": "alpha beta gamma delta"}), root / "index", workers=1)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(coderiv.__file__).parents[1]), *sys.path])}
    env.pop("CODERIV_TOKEN", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "coderiv", "serve", "--index", str(root / "index"), "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # readiness, not a performance limit
            assert process.poll() is None, "coderiv serve exited"
            try:
                with urllib.request.urlopen(f"{base}/api/info", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        yield base
    finally:
        stop_process(process, 10)  # only the process this fixture started


def test_the_api_docs_draw_offline(server: str, browser: Any, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def only_this_server(route: Any) -> None:
        if route.request.url.startswith(server):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{server}/docs")
    page.wait_for_selector(".opblock", timeout=60_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/check" in [p.replace("\u200b", "").strip() for p in paths]
    assert page.locator(".info .title").inner_text().startswith("coderiv")
    page.screenshot(path=str(Path(os.environ.get("CODERIV_SCREENSHOTS") or tmp_path) / "api-docs.png"))
    assert outside == []
    assert errors == []
