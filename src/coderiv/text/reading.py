"""Reading one query document from a path or standard input, with the same checks as indexing:
too large, binary, and undecodable bytes (replaced and reported)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from coderiv.errors import CoderivError
from coderiv.text.extract import MAX_DOCUMENT_BYTES, looks_binary, visible_text


@dataclass(frozen=True)
class QueryDocument:
    """A query's label (its path, or ``<stdin>``), its visible text, and whether bytes that were
    not valid UTF-8 were replaced."""

    label: str
    text: str
    lossy: bool


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
    if looks_binary(data):
        raise CoderivError(f"{label} is a binary file, not a text document")
    decoded = visible_text(data, label)
    return QueryDocument(label, decoded.text, decoded.lossy)
