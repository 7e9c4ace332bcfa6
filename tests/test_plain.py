"""Plain text decoding: by byte-order mark (UTF-8/16/32), lossy bytes reported, binary refused."""

from __future__ import annotations

import codecs

import pytest

from coderiv.text.formats import BinaryContentError, extract
from coderiv.text.formats.plain import decode, encoding_of, looks_binary

TEXT = "Ein Zitat — «quoted» 日本語 text\nsecond line"


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-32-le", codecs.BOM_UTF32_LE),
        ("utf-32-be", codecs.BOM_UTF32_BE),
        ("utf-8", codecs.BOM_UTF8),
    ],
)
def test_text_with_a_byte_order_mark_is_decoded_by_it(encoding: str, bom: bytes) -> None:
    data = bom + TEXT.encode(encoding)
    assert encoding_of(data) == (encoding, len(bom))
    assert not looks_binary(data)
    extracted = extract(data, "doc.txt")
    assert (extracted.text, extracted.format, extracted.lossy) == (TEXT, "text", False)


def test_odd_or_undecodable_remainder_is_lossy() -> None:
    odd = decode(codecs.BOM_UTF16_LE + "abc".encode("utf-16-le") + b"x")
    assert (odd.text, odd.lossy) == ("abc\ufffd", True)
    lone_surrogate = decode(codecs.BOM_UTF16_BE + b"\xd8\x00\x00a")
    assert lone_surrogate.lossy and lone_surrogate.text.endswith("a")
    beyond_unicode = decode(codecs.BOM_UTF32_LE + "ab".encode("utf-32-le") + b"\x00\x00\x11\x00")
    assert (beyond_unicode.text, beyond_unicode.lossy) == ("ab\ufffd", True)


def test_binary_after_a_mark_is_still_binary() -> None:
    assert looks_binary(codecs.BOM_UTF16_LE + b"\x00\x00" * 50)  # U+0000 characters
    assert looks_binary(codecs.BOM_UTF16_LE + "\x01\x02\x03\x04".encode("utf-16-le") * 20)
    with pytest.raises(BinaryContentError):
        extract(codecs.BOM_UTF32_BE + b"\x00\x00\x00\x00" * 10, "x.txt")
    assert looks_binary(b"abc\x00def") and not looks_binary(b"")
