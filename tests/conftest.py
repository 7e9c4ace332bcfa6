"""Shared fixtures: tiny collections written into tmp_path, and a CliRunner."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner


def write_docs(folder: Path, docs: dict[str, str]) -> Path:
    """Write {relative path: text} below ``folder``; returns the folder."""
    for name, text in docs.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return folder


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
