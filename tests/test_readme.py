"""The README's library snippets run as pasted (issue 43: they named files that do not exist):
each ```python block of "As a library", in order, in one namespace, from a folder laid out like
the repository's root (the bundled example at src/coderiv/data/example), and what they print is
what the bundled example gives."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

import coderiv

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = Path(coderiv.__file__).parent / "data" / "example"


def library_snippets() -> list[str]:
    """The README's python blocks of its "As a library" section."""
    text = (ROOT / "README.md").read_text("utf-8")
    section = text[text.index("## As a library\n") : text.index("**Optional features**")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_library_snippets_run_as_pasted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snippets = library_snippets()
    assert len(snippets) == 4
    shutil.copytree(EXAMPLE, tmp_path / "src" / "coderiv" / "data" / "example")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    printed = []
    for snippet in snippets:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(snippet, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
        printed.append(out.getvalue().splitlines())
    build, batch, report, overlap = printed
    assert build[0] == "19 0 0 0"  # the 19 documents of the example, added
    assert build[1] == "1 100.0% plagiarized-essay.txt"  # the query itself, then the closest others
    assert build[4].startswith("85.0% [('river-ecology-v1.txt', 100.0), ('river-ecology-v2.txt', 94.2")
    assert batch == [
        "src/coderiv/data/example/river-ecology-v2.txt river-ecology-v1.txt ",  # its earlier release
        "src/coderiv/data/example/policy-memo.txt - ",  # nothing at 10% or more
    ]
    assert report == [
        "100.0% of the thesis is in medieval-trade-v2.docx",
        "100.0% of the thesis is in medieval-trade-v2.txt",
        "100.0% of its words are found in [('medieval-trade-v2.docx', 100.0), ('plagiarized-essay.txt', 0.0)]",
    ]
    assert (tmp_path / "report.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    assert overlap[0] == "shingles w=4 10.9% 10.9%" and overlap[3] == "patricia 24.0% 21.5%"
    assert overlap[-2].startswith("644 1257 806 1419 The floodplain is")
