"""Creation dates written inside documents, for version lineage: DOCX (``dcterms:created`` of
``docProps/core.xml``), ODT (``meta:creation-date`` of ``meta.xml``), PDF (``CreationDate`` of the
info dictionary, through PDFium). Any other format, a missing or malformed date, an unreadable
file or a missing ``coderiv[formats]`` extra gives ``None``: a date is optional evidence, never a
reason to fail. Times without a UTC offset are taken as UTC."""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from coderiv.extras import require
from coderiv.text.formats.registry import sniff
from coderiv.text.formats.ziparchive import SafeZip, local

_PDF_DATE = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+-])(\d{2})?'?(\d{2})?'?)?")


def _iso(text: str) -> _dt.datetime | None:
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        when = _dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=_dt.timezone.utc)


def pdf_date(text: str) -> _dt.datetime | None:
    """A PDF date string (``D:YYYYMMDDHHmmSSOHH'mm'``, trailing parts optional) as a datetime."""
    match = _PDF_DATE.match(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, sign, off_h, off_m = match.groups()
    offset = _dt.timedelta(hours=int(off_h or 0), minutes=int(off_m or 0))
    zone = _dt.timezone(-offset if sign == "-" else offset)
    try:
        return _dt.datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
                            int(second or 0), tzinfo=zone)
    except ValueError:
        return None


def _package_date(data: bytes, kind: str, part: str, element: str) -> _dt.datetime | None:
    package = SafeZip(data, kind)
    if not package.has(part):
        return None
    for node in package.xml(part).iter():
        if local(node.tag) == element and node.text:
            return _iso(node.text)
    return None


def _pdf_creation(data: bytes) -> _dt.datetime | None:
    pdfium: Any = require("pypdfium2", "formats", "reading PDF")
    document = pdfium.PdfDocument(data)
    try:
        text = document.get_metadata_dict().get("CreationDate", "")
    finally:
        document.close()
    return pdf_date(text) if text else None


def creation_date(data: bytes) -> _dt.datetime | None:
    """The creation date recorded inside a DOCX, ODT or PDF document, or None."""
    try:
        kind = sniff(data)
        if kind == "docx":
            return _package_date(data, "docx", "docProps/core.xml", "created")
        if kind == "odt":
            return _package_date(data, "odt", "meta.xml", "creation-date")
        if kind == "pdf":
            return _pdf_creation(data)
    except Exception:  # a damaged file, an absent extra (CoderivError): no date, as documented
        return None
    return None
