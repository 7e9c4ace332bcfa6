"""Document formats in tests: a Word document built in memory (python-docx), and the check
that extracting bytes either works or fails with one clear line (never a traceback)."""

from __future__ import annotations

import datetime as dt
import io

from coderiv.errors import MissingExtraError
from coderiv.text.formats import ExtractionError, extract


def docx_bytes(text: str, created: dt.datetime | None) -> bytes:
    """A one-paragraph .docx holding ``text``, with ``created`` as its core creation date."""
    import docx

    document = docx.Document()
    document.add_paragraph(text)
    if created is not None:
        document.core_properties.created = created
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def check_extract(data: bytes, name: str) -> None:
    """Extracting ``data`` as ``name`` gives text with ordered locations, or fails with a
    one-line error (ExtractionError or MissingExtraError), never anything else."""
    try:
        extracted = extract(data, name)
    except (ExtractionError, MissingExtraError) as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(extracted.text, str)
        assert list(extracted.locations.starts) == sorted(extracted.locations.starts)
