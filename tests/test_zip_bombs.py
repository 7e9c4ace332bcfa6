"""Zip bombs built by the test, never committed (issue 25 item 1): a ~1 MB ZIP whose ``mimetype``
member inflates to 1 GiB, the same stream under a header that lies about its size, and a DOCX
whose body lies the same way. Each is refused with one line, and the memory Python allocates
while it is read stays bounded (tracemalloc's peak; a memory bound, not a clock)."""

from __future__ import annotations

import struct
import tracemalloc
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from coderiv.errors import InputError
from coderiv.text.formats import ExtractionError, extract, sniff
from coderiv.text.formats.ziparchive import MAX_UNCOMPRESSED_BYTES, SafeZip
from coderiv.text.reading import read_query_bytes

GIB = 1 << 30
#: Python memory a refused bomb may cost: a few times the 1 MB file, nowhere near the 1 GiB it holds.
BOUND = 16 << 20


def zeros_deflated(size: int, chunk: int = 1 << 20) -> bytes:
    """A raw deflate stream of ``size`` zero bytes, built from one compressed chunk repeated:
    a full flush after each chunk byte-aligns the stream and resets the window, so every chunk
    compresses to the same bytes (1 GiB in about a second)."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = squeeze.compress(bytes(chunk)) + squeeze.flush(zlib.Z_FULL_FLUSH)
    return block * (size // chunk) + zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)


def zeros_crc(size: int, chunk: int = 1 << 20) -> int:
    crc, block = 0, bytes(chunk)
    for _ in range(size // chunk):
        crc = zlib.crc32(block, crc)
    return crc


def make_zip(members: list[tuple[str, bytes, int, int, int]]) -> bytes:
    """A ZIP written by hand from ``(name, compressed bytes, method, declared size, crc)``: the
    declared size goes into both headers, true or not."""
    body, directory = bytearray(), bytearray()
    for name, payload, method, size, crc in members:
        encoded = name.encode()
        fields = (20, 0, method, 0, 0x21, crc, len(payload), size, len(encoded), 0)
        directory += struct.pack("<4s2H", b"PK\x01\x02", 20, 20) + struct.pack("<HHHHIIIHH", *fields[1:])
        directory += struct.pack("<HHHII", 0, 0, 0, 0, len(body)) + encoded
        body += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", *fields) + encoded + payload
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0)
    return bytes(body + directory + end)


@pytest.fixture(scope="module")
def gib_of_zeros() -> tuple[bytes, int]:
    return zeros_deflated(GIB), zeros_crc(GIB)


def peak_while(action: Callable[[], Any]) -> tuple[Exception | None, int]:
    """What ``action`` raised (or None), and the peak of Python's allocations while it ran."""
    tracemalloc.start()
    try:
        action()
        raised = None
    except Exception as exc:  # the refusal under test
        raised = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return raised, peak


def test_bomb_stream_is_what_it_claims(gib_of_zeros: tuple[bytes, int]) -> None:
    deflated, crc = gib_of_zeros
    assert len(deflated) < 1_100_000  # about 1 MB on disk ...
    inflater, total, check = zlib.decompressobj(-15), 0, 0
    pending = deflated
    while not inflater.eof:
        chunk = inflater.decompress(pending, 1 << 24)
        pending = inflater.unconsumed_tail
        total, check = total + len(chunk), zlib.crc32(chunk, check)
    assert (total, check) == (GIB, crc)  # ... that inflates to 1 GiB of zeros


@pytest.mark.parametrize("name", ["bomb.odt", "bomb.epub", "notes.txt", "upload"])
def test_mimetype_bomb_refused_in_one_line_with_bounded_memory(gib_of_zeros: tuple[bytes, int], name: str) -> None:
    deflated, crc = gib_of_zeros
    bomb = make_zip([("mimetype", deflated, 8, GIB, crc)])
    raised, peak = peak_while(lambda: extract(bomb, name))
    assert isinstance(raised, ExtractionError)
    assert raised.reason == "ZIP member mimetype expands beyond 4096 bytes; skipped (zip bomb?)"
    assert peak < BOUND
    assert sniff(bomb) == "zip"  # the collection's first look sends it to extraction, which refuses it


def test_mimetype_bomb_as_a_query_is_one_line(gib_of_zeros: tuple[bytes, int]) -> None:
    deflated, crc = gib_of_zeros
    bomb = make_zip([("mimetype", deflated, 8, GIB, crc)])
    with pytest.raises(InputError) as caught:
        read_query_bytes(bomb, "thesis.odt")
    assert str(caught.value) == "thesis.odt: ZIP member mimetype expands beyond 4096 bytes; skipped (zip bomb?)"


def test_lying_declared_size_is_caught_by_the_bytes_inflated(gib_of_zeros: tuple[bytes, int]) -> None:
    deflated, _ = gib_of_zeros
    liar = make_zip([("mimetype", deflated, 8, 20, zlib.crc32(bytes(20)))])
    raised, peak = peak_while(lambda: extract(liar, "liar.odt"))
    assert isinstance(raised, ExtractionError)
    assert raised.reason == "corrupt ZIP (member mimetype inflates beyond the 20 bytes it declares); skipped"
    assert peak < BOUND


def test_docx_body_lying_about_its_size_is_caught(gib_of_zeros: tuple[bytes, int]) -> None:
    deflated, _ = gib_of_zeros
    small = b"<w:document/>"
    liar = make_zip([("word/document.xml", deflated, 8, len(small), zlib.crc32(small))])
    raised, peak = peak_while(lambda: extract(liar, "thesis.docx"))
    assert isinstance(raised, ExtractionError)
    assert raised.reason == "corrupt DOCX (member word/document.xml inflates beyond the 13 bytes it declares); skipped"
    assert peak < BOUND


def test_honest_gib_member_refused_before_it_is_read(gib_of_zeros: tuple[bytes, int]) -> None:
    deflated, crc = gib_of_zeros
    odt = b"application/vnd.oasis.opendocument.text"
    bomb = make_zip([("content.xml", deflated, 8, GIB, crc), ("mimetype", odt, 0, len(odt), zlib.crc32(odt))])
    raised, peak = peak_while(lambda: SafeZip(bomb, "ODT"))
    assert isinstance(raised, ExtractionError)
    assert raised.reason == f"ODT unpacks to {GIB + 39} bytes, over the {MAX_UNCOMPRESSED_BYTES >> 20} MB cap (zip bomb?); skipped"
    assert peak < BOUND


def test_huge_central_directory_refused_before_it_is_parsed() -> None:
    many = make_zip([(f"{i:060d}", b"", 0, 0, 0) for i in range(60_000)])  # 106 bytes an entry
    raised, peak = peak_while(lambda: extract(many, "many.docx"))
    assert isinstance(raised, ExtractionError)
    assert raised.reason == "ZIP central directory is 6.06537 MB, over the 4 MB cap (zip bomb?); skipped"
    assert peak < 2 * len(many)  # no ZipInfo per entry (about 400 bytes each: 24 MB)
