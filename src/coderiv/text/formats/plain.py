"""Plain text: UTF-8 decoding with a reported fallback, and the test for bytes that are not text."""

from __future__ import annotations

from dataclasses import dataclass

from coderiv.text.formats.base import Extracted

_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13))


@dataclass(frozen=True)
class Decoded:
    """Text decoded from bytes; ``lossy`` is true when undecodable bytes were replaced."""

    text: str
    lossy: bool


def decode(data: bytes) -> Decoded:
    """Decode as UTF-8 (BOM allowed); undecodable bytes become U+FFFD and are reported."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return Decoded(data.decode("utf-8"), False)
    except UnicodeDecodeError:
        return Decoded(data.decode("utf-8", errors="replace"), True)


def looks_binary(data: bytes) -> bool:
    """True for data that is not text: NUL bytes or mostly control characters near the start."""
    head = data[:8192]
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
