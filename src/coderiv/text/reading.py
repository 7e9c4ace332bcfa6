"""Reading one query document from a path or standard input, with the same checks as indexing:
too large, binary, and undecodable bytes (replaced and reported)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from coderiv.errors import CoderivError
from coderiv.text.extract import MAX_DOCUMENT_BYTES, BinaryContentError, ExtractionError, extract
from coderiv.text.formats import LocationMap


@dataclass(frozen=True)
class QueryDocument:
    """A query's label (its path, or ``<stdin>``), its visible text, whether bytes that were
    not valid UTF-8 were replaced, the format it was read as, the map from text offsets to
    pages or paragraphs, and a note when its content was not what its extension declares."""

    label: str
    text: str
    lossy: bool
    format: str = "text"
    locations: LocationMap = LocationMap()
    note: str | None = None


def read_query(path: str) -> QueryDocument:
    """The visible text of the document at ``path`` (``-``: standard input), or a one-line
    :class:`CoderivError` for a file that is unreadable, too large or binary."""
    if path == "-":
        data = sys.stdin.buffer.read()
        label = "<stdin>"
    else:
        try:
            size = Path(path).stat().st_size
            if size > MAX_DOCUMENT_BYTES:
                raise CoderivError(f"{path}: {size} bytes is larger than the {MAX_DOCUMENT_BYTES}-byte limit")
            data = Path(path).read_bytes()
        except OSError as exc:
            raise CoderivError(f"cannot read query {path}: {exc.strerror}") from None
        label = path
    try:
        extracted = extract(data, label)
    except BinaryContentError:
        raise CoderivError(f"{label} is a binary file, not a text document") from None
    except ExtractionError as exc:
        raise CoderivError(f"{label}: {exc.reason}") from None
    return QueryDocument(label, extracted.text, extracted.lossy, extracted.format, extracted.locations, extracted.note)
