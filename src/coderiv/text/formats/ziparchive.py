"""Reading members of the ZIP containers of DOCX, ODT and EPUB safely: a cap on the total
uncompressed size and on the compression ratio (zip bombs), reads bounded by the declared size,
and XML parsed with defusedxml (no entity expansion, no external entities)."""

from __future__ import annotations

import io
import zipfile
import zlib
from typing import Any
from xml.etree.ElementTree import Element

from coderiv.extras import require
from coderiv.text.formats.base import ExtractionError

#: Total uncompressed size a document's container may declare.
MAX_UNCOMPRESSED_BYTES = 256 * 1024 * 1024
#: Largest compression ratio accepted for a member bigger than :data:`_RATIO_FLOOR` bytes.
MAX_RATIO = 100
_RATIO_FLOOR = 1 << 20


class SafeZip:
    """A ZIP container checked against bombs when opened; members read as bytes or as XML."""

    def __init__(self, data: bytes, kind: str) -> None:
        self.kind = kind
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
            raise ExtractionError(f"corrupt {kind} (not a readable ZIP container: {exc})") from None
        total = sum(info.file_size for info in infos)
        if total > MAX_UNCOMPRESSED_BYTES:
            raise ExtractionError(f"{kind} unpacks to {total} bytes, over the {MAX_UNCOMPRESSED_BYTES}-byte cap (zip bomb?)")
        for info in infos:
            if info.file_size > _RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise ExtractionError(
                    f"{kind} member {info.filename} expands {info.file_size // max(info.compress_size, 1)}-fold, "
                    f"over the {MAX_RATIO}-fold cap (zip bomb?)"
                )
        self._infos = {info.filename: info for info in infos}

    def names(self) -> list[str]:
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def read(self, name: str) -> bytes:
        """A member's bytes, never more than it declares (a lying header cannot inflate it)."""
        info = self._infos.get(name)
        if info is None:
            raise ExtractionError(f"corrupt {self.kind} (no {name})")
        try:
            with self._zip.open(info) as handle:
                data = handle.read(info.file_size + 1)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
            raise ExtractionError(f"corrupt {self.kind} ({name}: {exc})") from None
        if len(data) > info.file_size:
            raise ExtractionError(f"corrupt {self.kind} ({name} is larger than it declares)")
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
