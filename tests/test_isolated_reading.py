"""Reading untrusted uploads in a child process (issue 25 item 2): the same document as reading
in-process, one line when a time or memory budget is exceeded, and the web server answering
other requests while a hostile upload is being read. The hostile files are made here."""

from __future__ import annotations

import io
import os
import threading
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from coderiv.errors import InputError
from coderiv.index.index import Index
from coderiv.text.isolated import Budget, count_words, read_isolated
from coderiv.text.reading import read_query_bytes
from coderiv.web.app import create_app
from coderiv.web.context import ServeSettings
from tests.support.files import write_docs

CONTENT_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)


def docx(paragraphs: list[str]) -> bytes:
    """A minimal DOCX holding ``paragraphs``."""
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs)
    xml = (
        '<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{body}</w:body></w:document>"
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("word/document.xml", xml)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def heavy_docx() -> bytes:
    """About 1.5 MB of DOCX holding 40 MB of XML: seconds and hundreds of MB to read."""
    return docx([f"word{i} alpha beta gamma delta" for i in range(600_000)])


def test_a_child_reads_what_the_server_would() -> None:
    data = docx(["The lighthouse keeper climbed the stairs.", "Every evening he lit the lamp."])
    assert read_isolated(data, "essay.docx") == read_query_bytes(data, "essay.docx")
    assert read_isolated(data, "essay.docx").text == "The lighthouse keeper climbed the stairs.\n\nEvery evening he lit the lamp."


def test_a_bad_document_is_the_readers_one_line() -> None:
    with pytest.raises(InputError) as raised:
        read_isolated(b"\x00\x01\x02binary" * 100, "blob.txt")
    assert str(raised.value) == "blob.txt is a binary file, not a text document"


def test_the_memory_budget_is_one_line(heavy_docx: bytes) -> None:
    with pytest.raises(InputError) as raised:
        read_isolated(heavy_docx, "big.docx", Budget(memory_bytes=64 << 20))
    assert str(raised.value) == "big.docx: reading it needs more than the 64 MB memory budget; not checked"


def test_the_time_budget_kills_the_child(heavy_docx: bytes) -> None:
    with pytest.raises(InputError) as raised:
        read_isolated(heavy_docx, "big.docx", Budget(seconds=0.5))
    assert str(raised.value) == "big.docx: reading it took longer than the 0.5-second budget; not checked"
    assert _reader_children() == []


def test_the_word_budget_is_one_line() -> None:
    data = docx(["alpha beta gamma delta", "epsilon zeta eta theta", "iota kappa"])  # 10 words
    assert read_isolated(data, "ten.docx", Budget(words=10)).text.count(" ") == 7
    with pytest.raises(InputError) as raised:
        read_isolated(data, "ten.docx", Budget(words=9))
    assert str(raised.value) == "ten.docx holds more than the 9 words a document may have here; not checked"


def test_words_are_counted_as_the_analysis_counts_them() -> None:
    assert count_words("Ein Über-Beispiel, 42 mal_zwei; ça va!", 100) == 8
    assert count_words("one two three four five", 2) == 3  # stops once past the limit


def _reader_children() -> list[int]:
    """PIDs of this process's children reading a document."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"coderiv.text.isolated" in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_other_requests_are_answered_while_a_hostile_upload_is_read(tmp_path: Path, heavy_docx: bytes) -> None:
    folder = write_docs(tmp_path / "docs", {"a.txt": "the lighthouse keeper climbed the stairs every evening"})
    Index.update_from(folder, tmp_path / "index", workers=1)
    # the default memory budget lets it be read to the end (seconds of work in the child), then
    # its 3 million words are over the default word budget: refused, never ranked by the server
    settings = ServeSettings(tmp_path / "index", workers=2, read_budget=Budget(seconds=300))
    with TestClient(create_app(settings)) as web:
        answers: list[int] = []
        upload = threading.Thread(
            target=lambda: answers.append(
                web.post("/api/check", files={"file": ("big.docx", heavy_docx)}, data={"verify": "false"}).status_code
            )
        )
        upload.start()
        while not _reader_children() and upload.is_alive():  # the child has started reading
            threading.Event().wait(0.01)
        reading = _reader_children()
        assert reading, "the upload was not read in a child process"
        page = web.get("/")
        still_reading = [pid for pid in reading if pid in _reader_children()]
        upload.join()
    assert page.status_code == 200
    assert still_reading == reading  # answered while the upload was being read
    assert answers == [400]
