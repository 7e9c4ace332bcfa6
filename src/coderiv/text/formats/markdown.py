"""Markdown: rendered to HTML by markdown-it-py (CommonMark, tables), then the visible text, so
link URLs, emphasis marks and code fences are not words of the document; raw HTML blocks in the
Markdown are rendered like any HTML (their tags disappear)."""

from __future__ import annotations

from typing import Any

from coderiv.extras import require
from coderiv.text.formats.base import Extracted
from coderiv.text.formats.html import html_to_text
from coderiv.text.formats.plain import decode


def read_markdown(data: bytes) -> Extracted:
    """The visible text of a Markdown document."""
    markdown_it: Any = require("markdown_it", "all", "reading Markdown")  # a core dependency
    decoded = decode(data)
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(decoded.text)
    return Extracted(html_to_text(rendered), "markdown", decoded.lossy)
