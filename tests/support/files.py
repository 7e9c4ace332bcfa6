"""Tiny collections written into a folder (usually a test's ``tmp_path``)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from coderiv.index.index import Index


def write_docs(folder: Path, docs: dict[str, str]) -> Path:
    """Write {relative path: text} below ``folder``; returns the folder."""
    for name, text in docs.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return folder


@contextmanager
def built_index(texts: list[str]) -> Iterator[Index]:
    """An index of ``texts`` (``d00.txt``, ``d01.txt``, …) in a folder of its own, removed
    afterwards: for hypothesis tests, which cannot use a function-scoped ``tmp_path``."""
    root = Path(tempfile.mkdtemp(prefix="coderiv-built-"))
    try:
        write_docs(root / "c", {f"d{i:02d}.txt": t for i, t in enumerate(texts)})
        Index.update_from(root / "c", root / "i", workers=1)
        yield Index.open(root / "i")
    finally:
        shutil.rmtree(root, ignore_errors=True)
