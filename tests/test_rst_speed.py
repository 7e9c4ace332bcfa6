"""reStructuredText reading made cheaper without changing its output (issue 28 item 3): settings
built once, the garbage collector held off while a page is parsed, the same bytes not parsed
twice; and the text is byte for byte what the per-document docutils run gave (the dev
collection's reST files, when ../shared is there). Speed itself is measured by
benchmarks/bench_rst.py, not asserted."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from coderiv.text.formats import rst

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "corpus.tar.gz"
SAMPLES = [
    "Title\n=====\n\nRead :ref:`the guide <guide>` and :func:`spawn` now.\n\n.. versionadded:: 2.0\n   Otters arrived.\n",
    "Sub\n---\n\n* one\n* two with ``code``\n\n  nested para\n\n::\n\n    literal block\n\n.. note:: Careful *now*.\n",
    "=====  =====\nA      B\n=====  =====\n1      2\n=====  =====\n\n| line one\n| line two\n\nTerm\n   Definition.\n",
    "Doc\n===\n\nSection\n-------\n\nText [#]_ and |sub|.\n\n.. [#] A footnote.\n.. |sub| replace:: substituted\n",
]

#: The reading before this change: fresh settings per document, docutils' own transition
#: tables (run in a child process, where coderiv's caches are never installed).
_BEFORE = """
import io, json, sys
import docutils.core
from docutils.writers import html5_polyglot
from coderiv.text.formats import rst
from coderiv.text.formats.html import html_to_text
from coderiv.text.formats.plain import decode
out = []
for path in json.load(sys.stdin):
    text = decode(open(path, "rb").read()).text
    rst._register_unknown(text)
    parts = docutils.core.publish_parts(
        text, writer=html5_polyglot.Writer(), settings_overrides={**rst._SETTINGS, "warning_stream": io.StringIO()})
    out.append(html_to_text(parts["html_body"]))
json.dump(out, sys.stdout)
"""


def _before(paths: list[Path]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _BEFORE], input=json.dumps([str(p) for p in paths]), capture_output=True, text=True, check=True
    )
    texts: list[str] = json.loads(done.stdout)
    return texts


def _fresh() -> None:
    rst._forget_recent()


def test_same_text_as_before_on_samples(tmp_path: Path) -> None:
    paths = []
    for n, sample in enumerate(SAMPLES):
        paths.append(tmp_path / f"s{n}.rst")
        paths[-1].write_text(sample)
    _fresh()
    assert [rst.read_rst(p.read_bytes()).text for p in paths] == _before(paths)


@pytest.mark.skipif(not CORPUS.exists(), reason="needs ../shared/corpora/corpus.tar.gz")
def test_same_text_as_before_on_300_files_of_the_dev_collection(tmp_path: Path) -> None:
    with tarfile.open(CORPUS) as tar:
        members = sorted((m for m in tar.getmembers() if m.isfile() and m.name.endswith(".rst")), key=lambda m: m.name)[::11][:300]
        paths = []
        for n, member in enumerate(members):
            paths.append(tmp_path / f"{n:03d}.rst")
            paths[-1].write_bytes(tar.extractfile(member).read())  # type: ignore[union-attr]
    assert len(paths) == 300
    _fresh()
    assert [rst.read_rst(p.read_bytes()).text for p in paths] == _before(paths)


def test_settings_are_built_once_and_the_collector_held_off_while_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    import docutils.core
    import docutils.frontend

    _fresh()
    rst.read_rst(SAMPLES[0].encode())  # warm: the settings are made once
    built: list[str] = []
    for name in ("OptionParser", "get_default_settings"):
        if hasattr(docutils.frontend, name):
            original = getattr(docutils.frontend, name)

            def counted(*args: Any, _original: Any = original, _name: str = name, **kwargs: Any) -> Any:
                built.append(_name)
                return _original(*args, **kwargs)

            monkeypatch.setattr(docutils.frontend, name, counted)
    collecting: list[bool] = []
    publish = docutils.core.publish_parts

    def watched(*args: Any, **kwargs: Any) -> Any:
        collecting.append(gc.isenabled())
        return publish(*args, **kwargs)

    monkeypatch.setattr(docutils.core, "publish_parts", watched)
    for sample in SAMPLES:
        rst.read_rst((sample + "\nOne more paragraph.\n").encode())
    assert built == []  # before: settings built for every document
    assert collecting == [False] * len(SAMPLES) and gc.isenabled()  # off while parsing, on after
    with pytest.raises(Exception, match="unreadable reStructuredText"):
        monkeypatch.setattr(docutils.core, "publish_parts", lambda *a, **k: 1 / 0)
        rst.read_rst(b"Broken on purpose.\n")
    assert gc.isenabled()  # back on after a failure too


def test_the_same_bytes_are_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh()
    parsed: list[int] = []
    render = rst._render
    monkeypatch.setattr(rst, "_render", lambda data: parsed.append(len(data)) or render(data))
    first = rst.read_rst(SAMPLES[1].encode())
    again = rst.read_rst(SAMPLES[1].encode())
    assert again is first and parsed == [len(SAMPLES[1].encode())]
    for n in range(rst.RECENT + 1):
        rst.read_rst(f"Para {n}.\n".encode())
    assert len(rst._recent) == rst.RECENT  # bounded: the oldest went
    rst.read_rst(SAMPLES[1].encode())
    assert len(parsed) == 1 + rst.RECENT + 2
    monkeypatch.setattr(rst, "RECENT_CHARS", 8000)  # a page may hold 1,000 characters of it
    kept = rst.read_rst(b"Word " * 190 + b"\n")
    assert len(kept.text) <= 1000 and kept in rst._recent.values()  # older pages made room
    assert rst._recent_chars == sum(len(e.text) for e in rst._recent.values()) <= 8000
    dropped = rst.read_rst(b"Long " * 210 + b"\n")
    assert len(dropped.text) > 1000 and dropped not in rst._recent.values()
