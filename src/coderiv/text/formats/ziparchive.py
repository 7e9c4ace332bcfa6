"""Reading members of ZIP containers (DOCX, ODT, EPUB, and the format sniffer's look at an
ODF/EPUB ``mimetype``) safely. Every member read is capped before it starts, three ways, so a
zip bomb costs a bounded amount of memory and time whatever its headers say:

- the size the member declares (and the container's declared total) against a cap;
- its compression ratio (declared size over compressed size) against :data:`MAX_RATIO`;
- the bytes actually inflated, a chunk at a time, stopped as soon as they pass the declared
  size: a header that lies about the size cannot inflate more, and the lie is reported.

The central directory itself is capped too (:data:`MAX_DIRECTORY_BYTES`: each entry becomes a
Python object). XML is parsed with defusedxml (no entity expansion, no external entities)."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from typing import Any
from xml.etree.ElementTree import Element

from coderiv.extras import require
from coderiv.text.formats.base import ExtractionError

#: Total uncompressed size a document's container may declare, and the most any member may inflate to.
MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
#: Largest compression ratio accepted for a member bigger than :data:`RATIO_FLOOR` bytes.
MAX_RATIO = 100
#: Members up to this size are not held to the ratio (a page of spaces compresses 1000-fold).
RATIO_FLOOR = 1 << 20
#: Largest central directory read (about 20,000 entries of ordinary names; a DOCX has dozens).
MAX_DIRECTORY_BYTES = 4 * 1024 * 1024
#: Bytes inflated per step of a capped read.
CHUNK_BYTES = 1 << 16

ZIP_ERRORS = (
    zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, OSError, EOFError, ValueError, KeyError,
    NotImplementedError, RuntimeError, struct.error,
)
_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n} bytes"


def too_big(kind: str, name: str, limit: str) -> ExtractionError:
    """The one-line refusal of a member that would inflate too far."""
    return ExtractionError(f"{kind} member {name} expands beyond {limit}; skipped (zip bomb?)")


def directory_size(data: bytes) -> int | None:
    """The size the end-of-central-directory record gives the central directory (the ZIP64
    record's when the classic one says so), or ``None`` when no record is found."""
    at = data.rfind(_EOCD, max(0, len(data) - 65_557))
    if at < 0 or len(data) < at + 22:
        return None
    size: int = struct.unpack_from("<I", data, at + 12)[0]
    locator = at - 20
    if size == 0xFFFFFFFF and locator >= 0 and data[locator:locator + 4] == _ZIP64_LOCATOR:
        record = struct.unpack_from("<Q", data, locator + 8)[0]
        if data[record:record + 4] == _ZIP64_EOCD and len(data) >= record + 56:
            size = struct.unpack_from("<Q", data, record + 40)[0]
    return size


def open_zip(data: bytes, kind: str) -> zipfile.ZipFile:
    """A ZIP container opened from bytes, its central directory capped before it is parsed;
    :class:`ExtractionError` for one that is no readable ZIP or whose directory is too big."""
    size = directory_size(data)
    if size is not None and size > MAX_DIRECTORY_BYTES:
        raise ExtractionError(
            f"{kind} central directory is {_megabytes(size)}, over the {_megabytes(MAX_DIRECTORY_BYTES)} cap (zip bomb?); skipped"
        )
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except ZIP_ERRORS as exc:
        raise ExtractionError(f"corrupt {kind} (not a readable ZIP container: {exc})") from None


def check_member(info: zipfile.ZipInfo, kind: str, cap: int = MAX_UNCOMPRESSED_BYTES) -> None:
    """Refuse a member whose declared size is over ``cap`` or whose ratio is over :data:`MAX_RATIO`."""
    if info.file_size > cap:
        raise too_big(kind, info.filename, _megabytes(cap))
    if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise too_big(kind, info.filename, f"ratio {MAX_RATIO} ({info.file_size // max(info.compress_size, 1)}-fold)")


def _compressed(data: bytes, info: zipfile.ZipInfo) -> memoryview:
    """The member's compressed bytes, found through its local header (bounds checked)."""
    start = info.header_offset
    if data[start:start + 4] != b"PK\x03\x04" or len(data) < start + 30:
        raise ValueError("bad local header")
    name_length, extra_length = struct.unpack_from("<HH", data, start + 26)
    begin = start + 30 + name_length + extra_length
    if begin + info.compress_size > len(data):
        raise ValueError("truncated member")
    return memoryview(data)[begin:begin + info.compress_size]


def _inflate(raw: memoryview, info: zipfile.ZipInfo, kind: str, limit: int) -> bytes:
    """Deflated bytes inflated :data:`CHUNK_BYTES` at a time, refused as soon as they give more
    than ``limit`` (the declared size, at most ``cap``) whatever the stream holds."""
    inflater = zlib.decompressobj(-15)
    chunks: list[bytes] = []
    total = 0
    pending: bytes | memoryview = raw
    while not inflater.eof:
        chunk = inflater.decompress(pending, CHUNK_BYTES)
        pending = inflater.unconsumed_tail
        total += len(chunk)
        if total > limit:  # limit <= the declared size (check_member): the header lies
            raise ExtractionError(
                f"corrupt {kind} (member {info.filename} inflates beyond the {info.file_size} bytes it declares); skipped"
            )
        chunks.append(chunk)
        if not chunk and not pending:
            raise ValueError("truncated deflate stream")
    return b"".join(chunks)


def read_member(data: bytes, info: zipfile.ZipInfo, kind: str, cap: int = MAX_UNCOMPRESSED_BYTES) -> bytes:
    """A member of the ZIP in ``data``, capped before and while it is read: its declared size and
    ratio are checked first (:func:`check_member`); then a deflated member is inflated in chunks
    and refused as soon as it gives more bytes than it declares (so never more than ``cap``, nor
    than :data:`MAX_RATIO` times its compressed size past :data:`RATIO_FLOOR`), and its size and
    CRC are checked. Other methods go through :mod:`zipfile`, which stops at the declared size."""
    check_member(info, kind, cap)
    limit = min(cap, info.file_size)
    try:
        if info.flag_bits & 0x1:
            raise ExtractionError(f"encrypted {kind} (member {info.filename} needs a password)")
        if info.compress_type == zipfile.ZIP_DEFLATED:
            content = _inflate(_compressed(data, info), info, kind, limit)
        elif info.compress_type == zipfile.ZIP_STORED:
            content = bytes(_compressed(data, info))
        else:
            with zipfile.ZipFile(io.BytesIO(data)) as archive, archive.open(info) as handle:
                content = handle.read(limit + 1)
    except ZIP_ERRORS as exc:
        raise ExtractionError(f"corrupt {kind} ({info.filename}: {exc})") from None
    if len(content) > limit:
        raise ExtractionError(f"corrupt {kind} (member {info.filename} is larger than it declares); skipped")
    if len(content) != info.file_size or zlib.crc32(content) != info.CRC:
        raise ExtractionError(f"corrupt {kind} (member {info.filename} does not match its size or CRC)")
    return content


class SafeZip:
    """A ZIP container checked against bombs when opened; members read as bytes or as XML,
    each through :func:`read_member`."""

    def __init__(self, data: bytes, kind: str) -> None:
        self.kind = kind
        self._data = data
        try:
            with open_zip(data, kind) as archive:
                infos = archive.infolist()
        except ZIP_ERRORS as exc:
            raise ExtractionError(f"corrupt {kind} (not a readable ZIP container: {exc})") from None
        total = sum(info.file_size for info in infos)
        if total > MAX_UNCOMPRESSED_BYTES:
            raise ExtractionError(
                f"{kind} unpacks to {total} bytes, over the {_megabytes(MAX_UNCOMPRESSED_BYTES)} cap (zip bomb?); skipped"
            )
        for info in infos:
            check_member(info, kind)
        self._infos = {info.filename: info for info in infos}
        #: bytes still allowed to be inflated from this container, whatever the headers say
        self._budget = MAX_UNCOMPRESSED_BYTES

    def names(self) -> list[str]:
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def read(self, name: str) -> bytes:
        """A member's bytes, never more than it declares nor than the container's budget left."""
        info = self._infos.get(name)
        if info is None:
            raise ExtractionError(f"corrupt {self.kind} (no {name})")
        data = read_member(self._data, info, self.kind, self._budget)
        self._budget -= len(data)
        return data

    def xml(self, name: str) -> Element:
        """A member parsed as XML, refusing entity declarations (billion laughs) and external entities."""
        return parse_xml(self.read(name), f"{self.kind} {name}")


def parse_xml(data: bytes, what: str) -> Element:
    """XML parsed with defusedxml; a one-line :class:`ExtractionError` for unsafe or broken XML."""
    safe: Any = require("defusedxml.ElementTree", "formats", f"reading {what.split()[0]}")
    defused: Any = require("defusedxml", "formats", f"reading {what.split()[0]}")
    try:
        root: Element = safe.fromstring(data)
    except defused.DefusedXmlException as exc:
        raise ExtractionError(f"unsafe XML in {what} ({type(exc).__name__}): refused") from None
    except Exception as exc:  # ParseError and expat errors: broken XML
        raise ExtractionError(f"corrupt {what} ({exc})") from None
    return root


def local(tag: str) -> str:
    """An element's name without its namespace."""
    return tag.rsplit("}", 1)[-1]
