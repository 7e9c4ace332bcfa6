"""Hypothesis fuzzing of what a collection can hold: file names (non-UTF-8 bytes, control
characters, newlines), file bytes, and tar members of every type (duplicates, links, ``..``,
absolute names). ``coderiv index`` and ``coderiv query`` never end in a traceback (exit 0, or
1 with one line), write nothing outside the index, and every indexed id reads back the bytes
``tar -x`` or the folder gives."""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index
from coderiv.cli.main import main
from coderiv.errors import CoderivError
from coderiv.text.collection import ReadOptions, escape_name, iter_archive, iter_folder, read_member, unescape_name
from tests.support.formats import check_extract
from tests.support.strategies import document

ALL = ReadOptions(hidden=True)

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: file name bytes: anything but ``/`` and NUL, including invalid UTF-8, escapes and newlines
name_bytes = st.binary(min_size=1, max_size=12).map(lambda b: b.replace(b"/", b"_").replace(b"\x00", b"_")).filter(
    lambda b: b not in (b".", b"..")
)
utf16 = b"\xff\xfe" + "utf sixteen words".encode("utf-16-le")
content = st.one_of(document.map(str.encode), st.binary(max_size=300), st.just(utf16))


def listing(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(root) for f in files} | {
        os.path.relpath(os.path.join(d, s), root) + "/" for d, subs, _ in os.walk(root) for s in subs
    }


def run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:  # one line saying why, as friendly_errors prints it
        assert result.output.rstrip().splitlines()[-1].startswith("Error: ")
    return result.exit_code, result.output


@FUZZ
@given(files=st.dictionaries(name_bytes, content, min_size=1, max_size=6))
@pytest.mark.slow
def test_folder_of_hostile_names_and_bytes(files: dict[bytes, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "c"
        root.mkdir()
        for name, data in files.items():
            with open(os.path.join(os.fsencode(root), name), "wb") as out:
                out.write(data)
        before = listing(Path(tmp))
        code, _ = run(["index", str(root), "--index", str(Path(tmp) / "ix"), "-q", "--workers", "1", "--hidden"])
        assert {p for p in listing(Path(tmp)) if not p.startswith("ix")} == before  # nothing written outside
        by_id = {doc.doc_id: doc for doc in iter_folder(root, ALL)}
        assert set(by_id) == {escape_name(os.fsdecode(n)) for n in files}
        if code == 0:
            index = Index.open(Path(tmp) / "ix")
            for doc_id in index.doc_ids:  # ids round-trip to the file's bytes
                assert read_member(root, doc_id) == files[os.fsencode(unescape_name(doc_id))]
            query = os.path.join(os.fsencode(root), next(iter(files)))
            run(["query", os.fsdecode(query), "--index", str(Path(tmp) / "ix")])
            run(["query", str(root), "--index", str(Path(tmp) / "ix"), "--format", "tsv"])


member_name = st.one_of(
    st.sampled_from(["a.txt", "./a.txt", "d/b.txt", "../up.txt", "/abs.txt", "d", ".hid/x.txt", "d/../a.txt", "caf\udce9.txt", "n\nl.txt"]),
    st.text(alphabet="ab./\x1b\n\udce9", min_size=1, max_size=8),
)
member = st.tuples(
    member_name,
    st.sampled_from(
        [tarfile.REGTYPE, tarfile.REGTYPE, tarfile.LNKTYPE, tarfile.SYMTYPE, tarfile.DIRTYPE, tarfile.FIFOTYPE, tarfile.CHRTYPE]
    ),
    st.one_of(member_name, st.sampled_from(["/etc/passwd", "../../etc/passwd", "a.txt", "d"])),
    content,
)


@FUZZ
@given(members=st.lists(member, min_size=1, max_size=8))
def test_archive_of_hostile_members(members: list[tuple[str, int, str, bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.tar"
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape") as tar:
            for name, kind, link, data in members:
                info = tarfile.TarInfo(name)
                info.type = kind
                info.linkname = link if kind in (tarfile.LNKTYPE, tarfile.SYMTYPE) else ""
                info.size = len(data) if kind == tarfile.REGTYPE else 0
                tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
        docs = list(iter_archive(path, ALL))
        ids = [d.doc_id for d in docs]
        assert len(ids) == len(set(ids))  # a name stored twice is given once
        for doc in docs:
            if not doc.problem:
                assert read_member(path, doc.doc_id) == doc.data
        for doc in docs:  # a regular member that is its name's last copy gives exactly its bytes
            last = [m for m in members if _name(m[0]) == unescape_name(doc.doc_id)]
            if last and last[-1][1] == tarfile.REGTYPE and not doc.problem:
                assert doc.data == last[-1][3]
        before = listing(Path(tmp))
        code, _ = run(["index", str(path), "--index", str(Path(tmp) / "ix"), "-q", "--workers", "1"])
        assert {p for p in listing(Path(tmp)) if not p.startswith("ix")} == before
        if code == 0:
            run(["query", str(path), "--index", str(Path(tmp) / "ix")])


def _name(name: str) -> str:
    while name.startswith("./"):
        name = name[2:]
    return name


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(
        ["x.txt", "x", "x.html", "x.htm", "x.xml", "x.md", "x.markdown", "x.rst", "x.rtf", "x.pdf", "x.docx", "x.odt", "x.epub"]
    ),
    data=st.one_of(st.binary(max_size=400), content),
)
def test_every_reader_takes_arbitrary_bytes(name: str, data: bytes) -> None:
    check_extract(data, name)  # a text with ordered locations, or one error line


def test_coderiv_error_is_the_only_failure_of_a_library_build(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    os.mkfifo(tmp_path / "c" / "fifo")
    try:
        Index.update_from(tmp_path / "c", tmp_path / "ix", workers=1)
    except CoderivError as exc:
        assert "no indexable documents" in str(exc)
    else:
        raise AssertionError("a collection of one FIFO has nothing to index")
