"""An LTI 1.3 launch in a real browser (Debian's Chromium through Playwright): the student
starts at the test platform (``lti1p3platform``, tests/support/lti_platform.py), whose page
posts the signed launch to the archive; the browser lands on the assignment's upload page as
that student, submits, and the submission's page shows it checked, by the student, and its
similarity returned to the platform as the score. Screenshots are saved
(``CODERIV_SCREENSHOTS`` names a folder to keep them)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jwt", reason="the lti extra (coderiv[lti]) is not installed")
pytest.importorskip("lti1p3platform", reason="the test platform (lti1p3platform) is not installed")
from click.testing import CliRunner  # noqa: E402

from coderiv.cli.main import main  # noqa: E402
from tests.support.archive import P, Q, build_collection, wait_until  # noqa: E402
from tests.support.chromium import needs_chromium  # noqa: E402
from tests.support.lti_platform import Platform, register_command, start_platform, start_tool  # noqa: E402

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Platform]]:
    root = tmp_path_factory.mktemp("archive-lti-browser")
    url = f"sqlite:///{root / 'archive.sqlite'}"
    tool, server, thread = start_tool(build_collection(root), url)
    platform = start_platform(tool)
    assert CliRunner().invoke(main, register_command(platform, url)).exit_code == 0
    yield tool, platform
    platform.stop()
    server.should_exit = True
    thread.join(30)


def test_a_launch_reaches_the_upload_page_as_the_student_and_the_score_goes_back(
    sites: tuple[str, Platform], browser: Any, tmp_path: Path,
) -> None:
    tool, platform = sites
    shots = Path(os.environ.get("CODERIV_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(platform.start_url("alice-17"))  # the platform's link in the course
    page.wait_for_url(f"{tool}/lti/submit?*")
    assert page.locator("#lti-name").inner_text() == "Alice Novakova"
    page.screenshot(path=str(shots / "archive-lti-submit.png"))
    thesis = tmp_path / "novakova-thesis.txt"
    thesis.write_text(P + " " + Q, "utf-8")
    page.set_input_files("#lti-file", str(thesis))
    page.fill("#lti-title", "Lighthouses and bread")
    page.click("#lti-submit")
    page.wait_for_url(f"{tool}/submissions/*")
    page.wait_for_selector('#state[data-state="done"]', state="attached", timeout=120_000)
    assert page.locator("#author").inner_text() == "Alice Novakova" and page.locator("#overall").inner_text() == "100.0%"
    assert wait_until(lambda: platform.scores, 60)
    assert (platform.scores[0]["userId"], platform.scores[0]["scoreGiven"]) == ("alice-17", 100.0)
    page.reload()
    assert page.locator("#lti-score").inner_text().startswith("Learning platform: similarity returned as the score on")
    page.screenshot(path=str(shots / "archive-lti-submission.png"))
    assert not errors, errors
