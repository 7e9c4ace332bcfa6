"""Tests in a real browser (Debian's Chromium driven by Playwright): the ``browser`` tier."""
