"""Tiny collections written into a folder (usually a test's ``tmp_path``)."""

from __future__ import annotations

from pathlib import Path


def write_docs(folder: Path, docs: dict[str, str]) -> Path:
    """Write {relative path: text} below ``folder``; returns the folder."""
    for name, text in docs.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return folder
