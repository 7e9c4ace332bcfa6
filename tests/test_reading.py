"""Reading one query document: the checks indexing makes, as one-line errors."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coderiv.errors import CoderivError
from coderiv.text import reading
from coderiv.text.reading import read_query


def test_a_text_file_is_read_as_visible_text(tmp_path: Path) -> None:
    (tmp_path / "q.html").write_text("<html><head><title>x</title></head><body><p>river <b>bank</b></p></body></html>")
    document = read_query(str(tmp_path / "q.html"))
    assert (document.label, document.text.split(), document.lossy) == (str(tmp_path / "q.html"), ["river", "bank"], False)


def test_undecodable_bytes_are_replaced_and_flagged(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_bytes(b"caf\xe9 river")
    document = read_query(str(tmp_path / "q.txt"))
    assert document.lossy and document.text == "caf\ufffd river"


def test_binary_missing_and_huge_files_are_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(CoderivError, match=r"b\.bin is a binary file, not a text document"):
        read_query(str(tmp_path / "b.bin"))
    with pytest.raises(CoderivError, match=r"cannot read query .*nope\.txt: No such file or directory"):
        read_query(str(tmp_path / "nope.txt"))
    monkeypatch.setattr(reading, "MAX_DOCUMENT_BYTES", 10)
    (tmp_path / "big.txt").write_text("x" * 11)
    with pytest.raises(CoderivError, match=r"big\.txt: 11 bytes is larger than the 10-byte limit"):
        read_query(str(tmp_path / "big.txt"))


def test_standard_input_is_labelled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"river bank")))
    document = read_query("-")
    assert (document.label, document.text) == ("<stdin>", "river bank")


def test_bytes_in_memory_get_the_same_checks() -> None:
    from coderiv.text.reading import read_query_bytes

    page = read_query_bytes(b"<html><body><p>river <b>bank</b></p><script>x()</script></body></html>", "upload.html")
    assert (page.label, page.text.split(), page.lossy) == ("upload.html", ["river", "bank"], False)
    assert read_query_bytes(b"caf\xe9 river", "u.txt").text == "caf\ufffd river"
    assert read_query_bytes(b"caf\xe9 river", "u.txt").lossy
    with pytest.raises(CoderivError, match=r"^u\.bin is a binary file, not a text document$"):
        read_query_bytes(b"\x00\x01\x02binary", "u.bin")
    with pytest.raises(CoderivError, match=r"^u\.txt: 11 bytes is larger than the 10-byte limit$"):
        read_query_bytes(b"x" * 11, "u.txt", max_bytes=10)
    assert read_query_bytes(b"x" * 10, "u.txt", max_bytes=10).text == "x" * 10


def test_a_query_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    """In a subprocess with a timeout: reading a FIFO nobody writes to would block forever."""
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    code = "from coderiv.text.reading import read_query; import sys; read_query(sys.argv[1])"
    src = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run(
        [sys.executable, "-c", code, str(fifo)], env={**os.environ, "PYTHONPATH": src}, capture_output=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.decode().strip().splitlines()[-1] == (
        f"coderiv.errors.InputError: {fifo} is not a regular file (a pipe, socket or device); "
        "pass its content on stdin with '-'"
    )
