"""Creation dates inside DOCX, ODT and PDF documents (text/formats/created.py)."""

from __future__ import annotations

import datetime as dt
import io

import pytest

from coderiv.text.formats.created import creation_date, pdf_date
from tests.support.formats import docx_bytes

UTC = dt.timezone.utc


def odt_bytes(text: str, created: str | None) -> bytes:
    from odf.meta import CreationDate
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    document = OpenDocumentText()
    document.text.addElement(P(text=text))
    if created is not None:
        document.meta.addElement(CreationDate(text=created))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pdf_bytes(text: str, created: dt.datetime | None) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.cell(0, 7, text)
    if created is not None:
        pdf.set_creation_date(created)
    return bytes(pdf.output())


@pytest.mark.parametrize(("text", "expected"), [
    ("D:20240301123000+02'00'", dt.datetime(2024, 3, 1, 10, 30, tzinfo=UTC)),
    ("D:20240301123000-05'30", dt.datetime(2024, 3, 1, 18, 0, tzinfo=UTC)),
    ("D:20240301123000Z", dt.datetime(2024, 3, 1, 12, 30, tzinfo=UTC)),
    ("D:2024", dt.datetime(2024, 1, 1, tzinfo=UTC)),
    ("D:20241399", None),
    ("yesterday", None),
])
def test_pdf_date(text: str, expected: dt.datetime | None) -> None:
    assert pdf_date(text) == expected


def test_docx_odt_pdf_creation_dates() -> None:
    when = dt.datetime(2021, 5, 3, 8, 15, 0, tzinfo=UTC)
    assert creation_date(docx_bytes("a paragraph", when.replace(tzinfo=None))) == when
    assert creation_date(odt_bytes("a paragraph", "2021-05-03T08:15:00")) == when
    assert creation_date(pdf_bytes("a paragraph", when)) == when


def test_no_date_is_none() -> None:
    assert creation_date(odt_bytes("a paragraph", None)) is None
    assert creation_date(b"plain text, no date") is None
    assert creation_date(b"PK\x03\x04 a broken zip") is None
    assert creation_date(b"%PDF-1.4 broken") is None
