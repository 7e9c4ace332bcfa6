"""Reading a collection: what a folder or tar archive gives as documents, and what it reports
instead of reading (FIFOs, devices, symlinks leaving the collection, tar links, duplicates)."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv import Index
from coderiv.cli.main import main
from coderiv.errors import CoderivError, InputError
from coderiv.text.collection import ReadOptions, _first_look, iter_archive, iter_folder, read_member, stored_size
from coderiv.text.extract import BinaryContentError, extract
from coderiv.text.formats.plain import SNIFF_BYTES
from coderiv.text.formats.registry import declared


def outcome(docs: object) -> dict[str, object]:
    """id → its text (read) or ('skipped', reason)."""
    out: dict[str, object] = {}
    for doc in docs:  # type: ignore[attr-defined]
        out[doc.doc_id] = ("skipped", doc.problem) if doc.problem else doc.data.decode()
    return out


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "c"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha beta")
    (root / "sub" / "d.txt").write_text("delta")
    (root / ".hid").mkdir()
    (root / ".hid" / "s.txt").write_text("secret")
    (tmp_path / "outside.txt").write_text("outside words")
    os.symlink(tmp_path / "outside.txt", root / "out")
    os.symlink("a.txt", root / "inside.txt")
    os.symlink("nowhere", root / "dangling")
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    os.symlink("..", root / "sub" / "up")
    os.symlink("/dev/null", root / "null")
    os.mkfifo(root / "fifo")
    return root


def test_folder_reports_every_entry_it_does_not_read(folder: Path) -> None:
    assert outcome(iter_folder(folder)) == {
        "a.txt": "alpha beta",
        "dangling": ("skipped", "dangling symlink: its target nowhere does not exist"),
        "fifo": ("skipped", "a FIFO (named pipe): not read"),
        "inside.txt": "alpha beta",
        "loop1": ("skipped", "symlink loop: not followed"),
        "loop2": ("skipped", "symlink loop: not followed"),
        "null": ("skipped", "symlink to /dev/null, outside the collection: not followed (--follow-symlinks follows it)"),
        "out": (
            "skipped",
            f"symlink to {folder.parent / 'outside.txt'}, outside the collection: not followed (--follow-symlinks follows it)",
        ),
        "sub/d.txt": "delta",
        "sub/up": ("skipped", "symlink loop: points to a folder that holds it"),
    }


def test_follow_symlinks_and_hidden_options(folder: Path) -> None:
    got = outcome(iter_folder(folder, ReadOptions(hidden=True, follow_symlinks=True)))
    assert got["out"] == "outside words"
    assert got["null"] == ("skipped", "symlink to a device: not read")
    assert got[".hid/s.txt"] == "secret"
    assert got["fifo"] == ("skipped", "a FIFO (named pipe): not read")
    # only the files read count towards progress: a.txt, inside.txt (its target), d.txt
    assert stored_size(folder) == 10 + 10 + 5


def test_read_member_refuses_ids_leaving_the_folder_and_fifos(folder: Path) -> None:
    assert read_member(folder, "inside.txt") == b"alpha beta"
    for bad in ("../outside.txt", "/etc/passwd", "sub/../../outside.txt"):
        with pytest.raises(InputError, match="is not a document of"):
            read_member(folder, bad)
    with pytest.raises(InputError, match="not a regular file"):
        read_member(folder, "fifo")  # refused, never blocks


def test_binary_file_is_judged_on_its_first_block(tmp_path: Path) -> None:
    (tmp_path / "zeros.txt").write_bytes(bytes(4 * SNIFF_BYTES))
    (tmp_path / "fake.pdf").write_bytes(bytes(4 * SNIFF_BYTES))  # a PDF reader says why, so read whole
    docs = {d.doc_id: d for d in iter_folder(tmp_path)}
    assert (docs["zeros.txt"].data, docs["zeros.txt"].problem, docs["zeros.txt"].stored) == (b"", "binary", 4 * SNIFF_BYTES)
    assert len(docs["fake.pdf"].data) == 4 * SNIFF_BYTES and not docs["fake.pdf"].problem


def add(archive: tarfile.TarFile, name: str, data: bytes = b"", **fields: object) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    archive.addfile(info, io.BytesIO(data) if data else None)


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    path = tmp_path / "c.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        add(tar, "dir", type=tarfile.DIRTYPE)
        add(tar, "dir/a.txt", b"first copy")
        add(tar, "hard.txt", type=tarfile.LNKTYPE, linkname="dir/a.txt")  # made from the first copy
        add(tar, "./dir/a.txt", b"last copy")
        add(tar, "sym.txt", type=tarfile.SYMTYPE, linkname="dir/a.txt")
        add(tar, "dir/rel.txt", type=tarfile.SYMTYPE, linkname="../hard.txt")
        add(tar, "abs.txt", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        add(tar, "up.txt", type=tarfile.SYMTYPE, linkname="../../etc/passwd")
        add(tar, "dangling.txt", type=tarfile.SYMTYPE, linkname="missing.txt")
        add(tar, "loop1", type=tarfile.SYMTYPE, linkname="loop2")
        add(tar, "loop2", type=tarfile.SYMTYPE, linkname="loop1")
        add(tar, "todir", type=tarfile.SYMTYPE, linkname="dir")
        add(tar, "badhard.txt", type=tarfile.LNKTYPE, linkname="later.txt")
        add(tar, "later.txt", b"later")
        add(tar, "fifo", type=tarfile.FIFOTYPE)
        add(tar, "dev", type=tarfile.CHRTYPE)
        add(tar, ".git/config", b"hidden")
        add(tar, "bin.dat", bytes(3 * SNIFF_BYTES))
    return path


def test_archive_links_duplicates_and_special_members(archive: Path) -> None:
    docs = list(iter_archive(archive))
    assert outcome(docs) == {
        "hard.txt": "first copy",
        "dir/a.txt": "last copy",
        "sym.txt": "last copy",
        "dir/rel.txt": "first copy",
        "abs.txt": ("skipped", "symlink to /etc/passwd, outside the archive: not followed"),
        "up.txt": ("skipped", "symlink to ../../etc/passwd, outside the archive: not followed"),
        "dangling.txt": ("skipped", "dangling symlink: missing.txt is not in the archive"),
        "loop1": ("skipped", "symlink loop: not followed"),
        "loop2": ("skipped", "symlink loop: not followed"),
        "todir": ("skipped", "symlink to the folder dir: not followed"),
        "badhard.txt": ("skipped", "hard link to later.txt, which is not an earlier member of the archive"),
        "later.txt": "later",
        "fifo": ("skipped", "a FIFO member: not read"),
        "dev": ("skipped", "a device member: not read"),
        "bin.dat": ("skipped", "binary"),
    }
    notes = {d.doc_id: d.note for d in docs if d.note}
    assert notes == {"dir/a.txt": "2 members of the archive have this name: the last one is read, as tar -x keeps it"}
    assert [d.doc_id for d in docs][:2] == ["hard.txt", "dir/a.txt"]  # archive order of the kept copies
    assert outcome(iter_archive(archive, ReadOptions(hidden=True)))[".git/config"] == "hidden"
    assert read_member(archive, "dir/a.txt") == b"last copy"
    assert read_member(archive, ".git/config") == b"hidden"


def test_index_reports_skips_and_notes_and_keeps_hidden(folder: Path, archive: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    ix = tmp_path / "ix"
    result = runner.invoke(main, ["index", str(folder), "--index", str(ix), "-q"])
    assert result.exit_code == 0, result.output
    assert "skipped fifo: a FIFO (named pipe): not read" in result.output
    assert "skipped loop1: symlink loop: not followed" in result.output
    assert Index.open(ix).doc_ids == ["a.txt", "inside.txt", "sub/d.txt"]
    result = runner.invoke(main, ["index", str(folder), "--index", str(ix), "-q", "--hidden", "--follow-symlinks"])
    assert result.exit_code == 0, result.output
    assert Index.open(ix).doc_ids == [".hid/s.txt", "a.txt", "inside.txt", "out", "sub/d.txt"]
    result = runner.invoke(main, ["index", str(folder), "--index", str(ix), "-q", "--no-follow-symlinks"])
    index = Index.open(ix)
    assert index.doc_ids == [".hid/s.txt", "a.txt", "inside.txt", "sub/d.txt"]  # --hidden kept
    assert index.manifest["reading"] == {"hidden": True, "follow_symlinks": False, "markup": "render"}
    tar_ix = tmp_path / "tix"
    result = runner.invoke(main, ["index", str(archive), "--index", str(tar_ix), "-q"])
    assert result.exit_code == 0, result.output
    assert "note: dir/a.txt: 2 members of the archive have this name: the last one is read, as tar -x keeps it" in result.output
    assert "skipped abs.txt: symlink to /etc/passwd, outside the archive: not followed" in result.output
    assert Index.open(tar_ix).doc_ids == ["dir/a.txt", "dir/rel.txt", "hard.txt", "later.txt", "sym.txt"]


def test_query_and_index_print_non_utf8_names_escaped(tmp_path: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    with open(os.path.join(os.fsencode(root), b"caf\xe9.txt"), "wb") as out:
        out.write(b"words of a cafe menu")
    runner = CliRunner()
    result = runner.invoke(main, ["index", str(root), "--index", str(tmp_path / "ix"), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["query", os.fsdecode(os.path.join(os.fsencode(root), b"caf\xe9.txt")), "--index", str(tmp_path / "ix")])
    assert result.exit_code == 0, result.exception  # was a UnicodeEncodeError traceback
    assert f"{root}/caf\\xe9.txt: " in result.output


def test_sockets_and_links_to_fifos_are_reported(tmp_path: Path) -> None:
    import socket

    root = tmp_path / "c"
    root.mkdir()
    (root / "a.txt").write_text("alpha")
    os.mkfifo(root / "pipe")
    os.symlink("pipe", root / "to-pipe")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(root / "sock"))
        assert outcome(iter_folder(root)) == {
            "a.txt": "alpha",
            "pipe": ("skipped", "a FIFO (named pipe): not read"),
            "sock": ("skipped", "a socket: not read"),
            "to-pipe": ("skipped", "symlink to a FIFO (named pipe): not read"),
        }


def _fields(docs: object) -> list[tuple[object, ...]]:
    return [(d.doc_id, d.data, d.problem, d.note, d.oversize, d.modified, d.escaped, d.plain) for d in docs]  # type: ignore[attr-defined]


def test_uncompressed_archive_read_directly_gives_what_tarfile_gives(archive: Path, tmp_path: Path) -> None:
    """An uncompressed archive's members are read straight from the file (not through
    ``extractfile``): the same documents, fields and problems as the compressed archive."""
    import gzip

    plain = tmp_path / "c.tar"
    plain.write_bytes(gzip.decompress(archive.read_bytes()))
    for options in (ReadOptions(), ReadOptions(hidden=True)):
        assert _fields(iter_archive(plain, options)) == _fields(iter_archive(archive, options))
    docs = list(iter_archive(plain))
    assert {d.doc_id for d in docs if d.plain} == {"hard.txt", "dir/a.txt", "sym.txt", "dir/rel.txt", "later.txt"}


def test_uncompressed_archive_progress_counts_the_bytes_read(tmp_path: Path) -> None:
    """``stored`` (progress) is the archive bytes read since the previous document: a.txt's
    header and data end at 612; b.bin's header (1024) and first block (8192 bytes from 1536,
    all it reads of a binary file) end at 9728; c.txt's data (9000 bytes at 22528) at 31528;
    a hard link re-reads a.txt and reads nothing new."""
    path = tmp_path / "x.tar"
    with tarfile.open(path, "w") as tar:
        add(tar, "a.txt", b"x" * 100)
        add(tar, "b.bin", bytes(20000))
        add(tar, "c.txt", b"y" * 9000)
        add(tar, "h.txt", type=tarfile.LNKTYPE, linkname="a.txt")
    assert [(d.doc_id, d.stored, d.problem) for d in iter_archive(path)] == [
        ("a.txt", 612, ""), ("b.bin", 9116, "binary"), ("c.txt", 21800, ""), ("h.txt", 0, ""),
    ]


def test_truncated_uncompressed_archive_is_the_same_error(tmp_path: Path) -> None:
    path = tmp_path / "t.tar"
    with tarfile.open(path, "w") as tar:
        add(tar, "a.txt", b"words " * 3000)
        add(tar, "b.txt", b"more words " * 3000)
    data = path.read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: len(data) - 10240 - 20000])  # b.txt's header is whole, its data is not
    with pytest.raises(InputError, match=r"cannot read archive .*cut.tar: unexpected end of data"):
        list(iter_archive(cut))
    (tmp_path / "cut.tar.gz").write_bytes(__import__("gzip").compress(cut.read_bytes()))
    with pytest.raises(InputError, match=r"cannot read archive .*cut.tar.gz: unexpected end of data"):
        list(iter_archive(tmp_path / "cut.tar.gz"))


_MAGIC = st.sampled_from([b"", b"%PDF-1.4\n", b"  \n%PDF-", b"PK\x03\x04", b"{\\rtf1 ", b"\xef\xbb\xbf{\\rtf", b"<!DOCTYPE html><p>",
                          b"\n <html>", b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf", b"\x00", b"\x01\x02\x03"])
_BODY = st.one_of(st.text(max_size=300).map(str.encode), st.binary(max_size=300),
                  st.text(alphabet="ab \n\x01\x07", max_size=SNIFF_BYTES + 300).map(str.encode))


def _extraction(read: Callable[[], object]) -> object:
    try:
        return read()
    except CoderivError as exc:
        return type(exc), str(exc)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(["a.txt", "a", "a.md", "a.rst", "a.html", "a.rtf", "a.pdf", "a.docx", "a.TXT", "d.x/a"]),
       magic=_MAGIC, body=_BODY)
def test_first_look_decides_as_extraction_does(name: str, magic: bytes, body: bytes) -> None:
    """What the reader's look at the first block tells the workers holds for the whole
    document: ``plain`` means extraction is the declared format's reader, ``binary`` that
    extraction refuses it as binary."""
    data = magic + body
    look = _first_look(name, data[:SNIFF_BYTES])
    expected = _extraction(lambda: extract(data, name))
    if look == "plain":
        assert _extraction(lambda: declared(name).read(data)) == expected
    elif look == "binary":
        assert expected == (BinaryContentError, "binary")


def _header_outcome(cls: type[tarfile.TarInfo], buf: bytes) -> object:
    try:
        info = cls.frombuf(buf, "utf-8", "surrogateescape")
    except tarfile.HeaderError as exc:
        return type(exc), str(exc)
    return {**info.get_info(), "type": info.type, "sparse": getattr(info, "_sparse_structs", None)}


def _with_checksum(buf: bytes) -> bytes:
    return buf[:148] + b"%06o\0 " % (256 + sum(buf[:148]) + sum(buf[156:])) + buf[156:]


@settings(max_examples=400, deadline=None)
@given(
    name=st.sampled_from(["a.txt", "dir/", "d/" * 60 + "long.txt", "é.txt", "x" * 99]),
    kind=st.sampled_from([tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE,
                          tarfile.FIFOTYPE, tarfile.GNUTYPE_SPARSE, b"x"]),
    fmt=st.sampled_from([tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT]),
    size=st.sampled_from([0, 7, 8**11 - 1]),
    edits=st.lists(st.tuples(st.integers(0, 511), st.integers(0, 255)), max_size=3),
    fix=st.booleans(),
)
def test_tar_headers_read_as_tarfile_reads_them(
    name: str, kind: bytes, fmt: int, size: int, edits: list[tuple[int, int]], fix: bool
) -> None:
    """The faster header reader gives tarfile's fields, or tarfile's error, for usual headers
    and for headers with bytes changed anywhere (checksum fixed again or not)."""
    from coderiv.text.tar_headers import TarHeader

    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname, info.mtime = kind, size, "target", 1_700_000_000
    try:
        buf = bytearray(info.tobuf(fmt, "utf-8", "surrogateescape")[:512])
    except ValueError:  # a name too long for the format
        return
    for at, value in edits:
        buf[at] = value
    data = _with_checksum(bytes(buf)) if fix else bytes(buf)
    assert _header_outcome(TarHeader, data) == _header_outcome(tarfile.TarInfo, data)
    assert _header_outcome(TarHeader, bytes(512)) == _header_outcome(tarfile.TarInfo, bytes(512))


@settings(max_examples=300, deadline=None)
@given(
    start=st.sampled_from(["", "  \n", "\ufeff"]),
    html=st.sampled_from(["<!doctype html>", "<HTML>", "<p>", "html", ""]),
    rest=st.text(max_size=40),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32", "utf-16-be", "latin-1"]),
)
def test_sniffing_html_without_a_lt_byte_skips_nothing(start: str, html: str, rest: str, encoding: str) -> None:
    """sniff looks for an HTML start only in heads holding a "<" byte: the same answer as
    decoding every head, in every encoding a byte-order mark selects."""
    from coderiv.text.formats.html import starts_like_html
    from coderiv.text.formats.plain import decode, looks_binary
    from coderiv.text.formats.registry import sniff

    data = (start + html + rest).encode(encoding, errors="replace")
    head = data[:1024]
    full_check = not looks_binary(head) and starts_like_html(decode(head).text)
    assert (sniff(data) == "html") == full_check  # no PDF, ZIP or RTF magic comes first here


def _member_fields(members: list[tarfile.TarInfo]) -> list[tuple[object, ...]]:
    return [(m.get_info(), m.type, m.offset, m.offset_data, m.chksum, m.pax_headers, m.sparse) for m in members]


def test_usual_headers_read_as_tarfile_reads_them(archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Headers read in one pass (:func:`~coderiv.text.tar_headers.usual_headers`) are ``getmembers``' members, the file
    left where ``getmembers`` leaves it; archives with long names, pax headers, damage or an
    odd end are left to ``tarfile`` (None), and every archive reads the same documents either way."""
    import gzip

    from coderiv.text import collection, tar_headers

    cases: dict[str, bytes] = {"links": gzip.decompress(archive.read_bytes())}
    for fmt, name in ((tarfile.GNU_FORMAT, "gnu"), (tarfile.PAX_FORMAT, "pax"), (tarfile.USTAR_FORMAT, "ustar")):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
            add(tar, "a.txt", b"alpha " * 200, mtime=1_700_000_000)
            add(tar, "sub/" * 30 + "long.txt", b"beta")  # a long name: ustar's prefix field, GNU's or pax's own header
            add(tar, "é.txt", b"gamma", uname="ü", gname="root")
        cases[name] = buffer.getvalue()
    data = cases["ustar"]
    cases["no end blocks"] = data[: 512 + 1536 + 512 + 512 + 512 + 512]  # the three members, no zero blocks after
    cases["garbage after the end"] = data + b"garbage" * 100
    cases["truncated data"] = data[:900]
    cases["bad checksum"] = data[:2058] + b"X" + data[2059:]  # in the second header
    cases["empty"] = bytes(10240)
    expected_usual = {"links": True, "gnu": False, "pax": False, "ustar": True, "no end blocks": True,
                      "garbage after the end": True, "truncated data": False, "bad checksum": False, "empty": False}
    for case, content in cases.items():
        path = tmp_path / f"{case}.tar"
        path.write_bytes(content)
        with open(path, "rb") as raw, tarfile.open(fileobj=raw, tarinfo=tar_headers.TarHeader) as tar:
            usual = tar_headers.usual_headers(raw, tar.encoding, tar.errors)
            position = raw.tell()
        assert (usual is not None) == expected_usual[case], case
        if usual is not None:
            with open(path, "rb") as raw, tarfile.open(fileobj=raw) as tar:
                assert _member_fields(usual) == _member_fields(tar.getmembers()), case
                assert position == raw.tell(), case

        def read(path: Path = path) -> object:
            try:
                return _fields(iter_archive(path, ReadOptions(hidden=True)))
            except InputError as exc:
                return str(exc)

        fast = read()
        with monkeypatch.context() as patch:
            patch.setattr(collection, "usual_headers", lambda *args: None)
            assert read() == fast, case


@settings(max_examples=400, deadline=None)
@given(
    edits=st.lists(st.tuples(st.sampled_from([*range(100, 156), *range(329, 345)]), st.sampled_from(b" 0789\x00\xff-")),
                   min_size=1, max_size=4),
    high=st.lists(st.tuples(st.integers(0, 511), st.integers(128, 255)), max_size=300),
    fix=st.booleans(),
)
def test_tar_header_numbers_and_checksums_read_as_tarfile_reads_them(
    edits: list[tuple[int, int]], high: list[tuple[int, int]], fix: bool
) -> None:
    """Number fields spelled every way (spaces, NULs, 8s and 9s, signs) and headers full of bytes
    above 127 (whose sum the ASCII shortcut must not read) give tarfile's fields or error."""
    from coderiv.text.tar_headers import TarHeader

    info = tarfile.TarInfo("a.txt")
    info.size, info.mtime = 1234, 1_700_000_000
    buf = bytearray(info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "surrogateescape")[:512])
    for at, value in [*edits, *high]:
        buf[at] = value
    data = _with_checksum(bytes(buf)) if fix else bytes(buf)
    assert _header_outcome(TarHeader, data) == _header_outcome(tarfile.TarInfo, data)


def test_documents_longer_than_the_first_look_are_read_whole(tmp_path: Path) -> None:
    """A text longer than its first look (:data:`SNIFF_BYTES`), or exactly as long, is read in
    one piece after the look: the same bytes from an uncompressed archive, a compressed one
    (through ``extractfile``) and a folder."""
    import gzip

    texts = {"long.txt": b"words and more words\n" * 1000, "exact.txt": b"x" * SNIFF_BYTES, "one.txt": b"y" * (SNIFF_BYTES + 1)}
    path = tmp_path / "t.tar"
    with tarfile.open(path, "w") as tar:
        for name, data in texts.items():
            add(tar, name, data)
    (tmp_path / "t.tar.gz").write_bytes(gzip.compress(path.read_bytes()))
    (tmp_path / "f").mkdir()
    for name, data in texts.items():
        (tmp_path / "f" / name).write_bytes(data)
    direct = _fields(iter_archive(path))
    assert direct == _fields(iter_archive(tmp_path / "t.tar.gz"))
    assert {doc_id: data for doc_id, data, *_ in direct} == texts
    assert {d.doc_id: d.data for d in iter_folder(tmp_path / "f")} == texts


def test_reading_an_archive_freezes_the_collector_and_restores_it(archive: Path) -> None:
    """While an archive is read, the objects alive (its members) are out of the collector's full
    passes; after the last document, or when the reader is dropped early, nothing stays
    frozen; a freeze made by someone else is left as it was."""
    import gc

    assert gc.get_freeze_count() == 0
    docs = iter_archive(archive)
    next(docs)
    assert gc.get_freeze_count() > 0
    list(docs)
    assert gc.get_freeze_count() == 0
    docs = iter_archive(archive)
    next(docs)
    docs.close()
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert len(list(iter_archive(archive))) == 15
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
