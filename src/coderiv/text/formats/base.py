"""What every format reader returns: the visible text, and a map from offsets in that text back
to a place a person can find in the original (a page of a PDF, a paragraph of a DOCX)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from coderiv.errors import InputError


class ExtractionError(InputError):
    """A document whose format was recognised but that cannot be read: encrypted, corrupt,
    without a text layer, over a safety cap. ``reason`` is the short cause shown per file."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class LocationMap:
    """Sorted start offsets into the extracted text, each with the label of the place that starts
    there (``"page 3"``, ``"paragraph 12"``). Empty for formats without such places."""

    starts: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()

    def at(self, offset: int) -> str | None:
        """The label of the place holding ``offset`` (``None`` when the map is empty)."""
        i = bisect.bisect_right(self.starts, offset) - 1
        return self.labels[i] if i >= 0 else None

    def span(self, start: int, end: int) -> str | None:
        """The places holding text ``[start, end)``: ``"page 3"``, ``"page 3-5"``, or
        ``"paragraph 9 to footnote 1"`` when the kinds differ (``None`` when the map is empty)."""
        first, last = self.at(start), self.at(max(start, end - 1))
        if first is None or last is None or first == last:
            return first
        kind, _, number = first.rpartition(" ")
        last_kind, _, last_number = last.rpartition(" ")
        return f"{kind} {number}-{last_number}" if kind == last_kind else f"{first} to {last}"

    def __len__(self) -> int:
        return len(self.starts)


@dataclass(frozen=True)
class Extracted:
    """A document's visible text. ``format`` is the reader used; ``lossy`` is true when bytes
    that were not valid UTF-8 were replaced; ``note`` says when the content did not match the
    file's extension and was read as what it really is."""

    text: str
    format: str
    lossy: bool = False
    locations: LocationMap = field(default_factory=LocationMap)
    note: str | None = None


class TextBuilder:
    """Joins blocks of text (pages, paragraphs) into one text, recording where each starts."""

    def __init__(self, separator: str = "\n\n") -> None:
        self.separator = separator
        self._parts: list[str] = []
        self._length = 0
        self._starts: list[int] = []
        self._labels: list[str] = []

    def add(self, text: str, label: str) -> None:
        """Append one block; empty blocks are left out (their label too)."""
        if not text.strip():
            return
        if self._parts:
            self._parts.append(self.separator)
            self._length += len(self.separator)
        self._starts.append(self._length)
        self._labels.append(label)
        self._parts.append(text)
        self._length += len(text)

    def text(self) -> str:
        return "".join(self._parts)

    def locations(self) -> LocationMap:
        return LocationMap(tuple(self._starts), tuple(self._labels))
