"""The texts an index keeps by content hash (issue 43 item 5): a document the build rendered is
never rendered again by a rebuild, an update that adds a store, or a report's re-reading; the
cache holds the live generation's documents only; a damaged cache is a miss, never an error."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from coderiv.index.index import Index
from coderiv.text.analysis import AnalysisSettings
from coderiv.text.extract import EXTRACTION_VERSION
from coderiv.text.extracted_cache import (
    CACHE_FILE,
    ExtractedCache,
    cache_key,
    content_sha256,
    kept_extract,
    reset_if_damaged,
    worth_keeping,
)
from coderiv.text.formats import Extracted, Markup, rst
from tests.support.files import write_docs

DOCS = {
    "guide.rst": "Guide\n=====\n\nRead :ref:`the intro <intro>` first.\n\n.. note:: Otters *swim* well.\n",
    "api.rst": "API\n===\n\n* one item\n* two ``items``\n",
    "notes.txt": "plain words are never kept\n",
}


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every reStructuredText page docutils renders in this process (none served from the
    reader's own in-memory list of recent pages)."""
    seen: list[bytes] = []
    real = rst._render

    def counted(data: bytes) -> Extracted:
        seen.append(data)
        return real(data)

    monkeypatch.setattr(rst, "_render", counted)
    monkeypatch.setattr(rst, "RECENT", 0)
    return seen


def test_what_is_kept_and_under_which_key(tmp_path: Path) -> None:
    assert worth_keeping("a/guide.rst", Markup.RENDER) and worth_keeping("t.pdf", Markup.RENDER)
    assert not worth_keeping("a/guide.rst", Markup.TEXT) and not worth_keeping("notes.txt", Markup.RENDER)
    sha = content_sha256(b"x")
    assert cache_key(sha, 2, "render") == sha + b":2:render" and len(sha) == 32
    cache = ExtractedCache(tmp_path, create=True)
    cache.put(cache_key(sha, 2, "render"), Extracted("the text", "rst", True, note="read as rst"))
    assert cache.get(cache_key(sha, 2, "render")) == Extracted("the text", "rst", True, note="read as rst")
    assert cache.get(cache_key(sha, 3, "render")) is None and cache.get(cache_key(sha, 2, "text")) is None
    assert len(cache) == 1 and cache.prune({content_sha256(b"other")}) == 1 and len(cache) == 0


def test_a_rebuild_and_a_report_read_render_nothing_again(tmp_path: Path, renders: list[bytes]) -> None:
    source = write_docs(tmp_path / "docs", DOCS)
    Index.update_from(write_docs(tmp_path / "plain", {"notes.txt": DOCS["notes.txt"]}), tmp_path / "plain-idx", workers=1)
    assert not (tmp_path / "plain-idx" / CACHE_FILE).exists()  # plain text keeps nothing, not even the file
    Index.update_from(source, tmp_path / "idx", workers=1)
    assert len(renders) == 2  # the two reST pages, once each; plain text is only decoded
    assert len(ExtractedCache(tmp_path / "idx")) == 2
    fresh = {name: rst.read_rst(DOCS[name].encode()).text for name in ("guide.rst", "api.rst")}
    renders.clear()
    # a change of analysis re-reads the whole collection: from the kept texts
    Index.update_from(source, tmp_path / "idx", AnalysisSettings(stop=False), workers=1)
    index = Index.open(tmp_path / "idx")
    assert renders == [] and index.settings.stop is False
    texts = index.source_texts().get(["guide.rst", "api.rst", "notes.txt"])  # what a report re-reads
    assert renders == [] and texts == {**fresh, "notes.txt": DOCS["notes.txt"]}
    # a page that changed is rendered (its new bytes are another key), and the old text is dropped
    (source / "api.rst").write_text("API\n===\n\nNew words.\n", "utf-8")
    Index.update_from(source, tmp_path / "idx", AnalysisSettings(stop=False), workers=1)
    assert renders == [b"API\n===\n\nNew words.\n"]
    kept = ExtractedCache(tmp_path / "idx")
    assert len(kept) == 2
    old_key = cache_key(content_sha256(DOCS["api.rst"].encode()), EXTRACTION_VERSION, "render")
    assert kept.get(old_key) is None  # a removed or replaced document's text does not outlive it


def test_two_worker_processes_share_the_cache(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "docs", {f"p{k}.rst": f"Page {k}\n======\n\nWords of page {k}.\n" for k in range(8)})
    Index.update_from(source, tmp_path / "idx", workers=2)
    kept = ExtractedCache(tmp_path / "idx")
    assert len(kept) == 8
    page = b"Page 3\n======\n\nWords of page 3.\n"
    kept_page = kept.get(cache_key(content_sha256(page), EXTRACTION_VERSION, "render"))
    assert kept_page is not None and kept_page.text.split() == ["Page", "3", "Words", "of", "page", "3."]
    assert kept_page.text == rst.read_rst(page).text and kept_page.format == "rst"


def test_a_damaged_cache_is_a_miss_and_made_anew(tmp_path: Path, renders: list[bytes]) -> None:
    source = write_docs(tmp_path / "docs", DOCS)
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / CACHE_FILE).write_bytes(b"not a database at all" * 100)
    assert not ExtractedCache(tmp_path / "idx").usable
    assert kept_extract(DOCS["api.rst"].encode(), "api.rst", Markup.RENDER, ExtractedCache(tmp_path / "idx"),
                        EXTRACTION_VERSION).format == "rst"
    Index.update_from(source, tmp_path / "idx", workers=1)  # no error: the file is replaced
    assert len(ExtractedCache(tmp_path / "idx")) == 2
    assert not reset_if_damaged(tmp_path / "idx")  # a sound cache stays


def test_a_forked_child_opens_its_own_connection(tmp_path: Path) -> None:
    cache = ExtractedCache(tmp_path, create=True)
    key = cache_key(content_sha256(b"a"), EXTRACTION_VERSION, "render")
    cache.put(key, Extracted("from the parent", "rst"))
    pid = os.fork()
    if pid == 0:  # the child: reads and writes through a connection of its own
        ok = cache.get(key) == Extracted("from the parent", "rst")
        cache.put(cache_key(content_sha256(b"b"), EXTRACTION_VERSION, "render"), Extracted("from the child", "rst"))
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert cache.get(cache_key(content_sha256(b"b"), EXTRACTION_VERSION, "render")) == Extracted("from the child", "rst")
    assert sqlite3.connect(tmp_path / CACHE_FILE).execute("PRAGMA quick_check").fetchone()[0] == "ok"
