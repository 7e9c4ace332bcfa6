"""Reading one query document from a path, standard input or bytes already in memory (a web
upload), with the same checks as indexing: too large, binary, and undecodable bytes (replaced
and reported)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from coderiv.errors import CoderivError, InputError
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


def read_query_bytes(data: bytes, label: str, max_bytes: int = MAX_DOCUMENT_BYTES) -> QueryDocument:
    """The visible text of a document given as bytes (``label`` is its name: its extension and
    content choose the format, as for indexing), or a one-line :class:`InputError` for bytes
    that are too many, binary, or a damaged document. A document without words is the caller's
    check: it depends on the index's analysis."""
    if len(data) > max_bytes:
        raise InputError(f"{label}: {len(data)} bytes is larger than the {max_bytes}-byte limit")
    try:
        extracted = extract(data, label)
    except BinaryContentError:
        raise InputError(f"{label} is a binary file, not a text document") from None
    except ExtractionError as exc:
        raise InputError(f"{label}: {exc.reason}") from None
    return QueryDocument(label, extracted.text, extracted.lossy, extracted.format, extracted.locations, extracted.note)


def read_query(path: str) -> QueryDocument:
    """The visible text of the document at ``path`` (``-``: standard input), or a one-line
    :class:`CoderivError` for a file that is unreadable, too large or binary."""
    if path == "-":
        return read_query_bytes(sys.stdin.buffer.read(), "<stdin>")
    try:
        size = Path(path).stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise CoderivError(f"{path}: {size} bytes is larger than the {MAX_DOCUMENT_BYTES}-byte limit")
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CoderivError(f"cannot read query {path}: {exc.strerror}") from None
    return read_query_bytes(data, path)
