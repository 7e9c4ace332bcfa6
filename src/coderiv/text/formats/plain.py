"""Plain text: decoding by byte-order mark (UTF-8, UTF-16 and UTF-32, little or big endian;
UTF-8 without one) with a reported fallback, and the test for bytes that are not text."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

from coderiv.text.formats.base import Extracted

_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13))
_CONTROL_CHARS = {b: None for b in _CONTROL_BYTES}

#: How many leading bytes decide whether a document is text (:func:`looks_binary`).
SNIFF_BYTES = 8192

# UTF-32 LE first: its mark begins with UTF-16 LE's (FF FE 00 00 vs FF FE)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class Decoded:
    """Text decoded from bytes; ``lossy`` is true when undecodable bytes were replaced."""

    text: str
    lossy: bool


def encoding_of(data: bytes) -> tuple[str, int]:
    """The encoding a byte-order mark at the start of ``data`` declares and the mark's length;
    UTF-8 and 0 without one."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return "utf-8", 0


def decode(data: bytes) -> Decoded:
    """Decode by the byte-order mark (UTF-8 without one). Undecodable bytes, an odd trailing
    byte of UTF-16 or an incomplete unit of UTF-32 become U+FFFD and are reported (``lossy``)."""
    encoding, skip = encoding_of(data)
    body = data[skip:]
    try:
        return Decoded(body.decode(encoding), False)
    except UnicodeDecodeError:
        return Decoded(body.decode(encoding, errors="replace"), True)


def looks_binary(data: bytes) -> bool:
    """True for data that is not text: NUL or mostly control characters in the first
    :data:`SNIFF_BYTES` bytes. UTF-16 and UTF-32 with a byte-order mark are judged on their
    decoded characters (their bytes are full of NULs)."""
    head = data[:SNIFF_BYTES]
    encoding, skip = encoding_of(head)
    if encoding != "utf-8":
        unit = 4 if encoding.startswith("utf-32") else 2
        body = head[skip:]
        text = body[: len(body) - len(body) % unit].decode(encoding, errors="replace")
        if "\x00" in text:
            return True
        return bool(text) and (len(text) - len(text.translate(_CONTROL_CHARS))) / len(text) > 0.10
    if b"\x00" in head:
        return True
    if not head:
        return False
    control = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return control / len(head) > 0.10


def read_plain(data: bytes) -> Extracted:
    """The text as it is."""
    decoded = decode(data)
    return Extracted(decoded.text, "text", decoded.lossy)


def read_source(data: bytes, fmt: str) -> Extracted:
    """A markup document's source text as it is, under its format's name (``--markup text``)."""
    decoded = decode(data)
    return Extracted(decoded.text, fmt, decoded.lossy)
