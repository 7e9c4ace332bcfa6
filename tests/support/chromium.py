"""Debian's Chromium, driven by Playwright with the system browser (never ``playwright
install``): where it is, how it is launched, and ``needs_chromium``, the mark that skips a
module only when /usr/bin/chromium is absent. The ``browser`` fixture is in
tests/browser/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"
)
