"""How lightweight markup (reStructuredText, Markdown) is read: rendered, or as its source text.

``render`` (the default) parses the markup and keeps the visible text a reader of the rendered
page sees: no ``**`` around bold words, no title underlines, no directive names, no link
targets. ``text`` reads the same files as plain text, markup and all: docutils takes ~25 ms of
CPU for a documentation page where decoding takes ~0.005 ms, so a documentation collection read
as text indexes many times faster, at the cost of the markup's characters and words counting
as the document's (docs/formats.md, "Reading markup"; docs/performance.md has the figures).

The choice is a property of an index (its manifest's ``reading`` section): a query, a report or
a re-read document of that index is read the same way, so that the two sides of a comparison
are alike. Binary containers (PDF, DOCX…), RTF and HTML are read the one way whatever it is.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from coderiv.errors import InputError


class Markup(enum.Enum):
    """How reStructuredText and Markdown documents are read (see the module's docstring)."""

    RENDER = "render"
    TEXT = "text"

    @classmethod
    def parse(cls, name: str) -> Markup:
        """The choice called ``name`` (``render`` or ``text``), or a one-line error."""
        try:
            return cls(name)
        except ValueError:
            raise InputError(f"unknown markup reading {name!r}: use 'render' or 'text'") from None

    @classmethod
    def recorded(cls, reading: Mapping[str, Any] | None) -> Markup:
        """The choice an index's manifest records in its ``reading`` section (an index written
        before the choice existed rendered markup)."""
        name = reading.get("markup", cls.RENDER.value) if isinstance(reading, Mapping) else cls.RENDER.value
        return cls.parse(str(name))

    def describe(self) -> str:
        """One phrase for ``coderiv info`` and error lines."""
        if self is Markup.RENDER:
            return "render (reStructuredText and Markdown rendered: their visible text)"
        return "text (reStructuredText and Markdown read as plain text, markup included)"

    def agree(self, given: Markup | None) -> Markup:
        """This (an index's) choice, checked against the one a user gave for a query (None: not
        given): a different one is refused, as the two sides of a comparison would be read
        differently."""
        if given is None or given is self:
            return self
        raise InputError(
            f"--markup {given.value} differs from the index's reading of markup ({self.value}); "
            f"leave --markup out to read as the index does, or rebuild the index with --markup {given.value}"
        )


#: The default: markup rendered, as coderiv has always read it.
DEFAULT_MARKUP = Markup.RENDER
