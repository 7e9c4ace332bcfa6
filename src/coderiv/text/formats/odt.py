"""ODT (OpenDocument text): headings, paragraphs, list items and table cells of ``content.xml``
in document order, then the notes. Read through :class:`SafeZip` (capped, defusedxml).
Locations: ``paragraph N`` (headings and table cells count as paragraphs), ``footnote N``."""

from __future__ import annotations

from xml.etree.ElementTree import Element

from coderiv.text.formats.base import Extracted, TextBuilder
from coderiv.text.formats.ziparchive import SafeZip, local

_TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def _inline_text(node: Element, notes: list[Element]) -> str:
    """The text of a paragraph: spans, links, ``text:s`` runs of spaces, tabs and line breaks;
    notes are set aside (they are read after the body)."""
    parts: list[str] = [node.text or ""]
    for child in node:
        name = local(child.tag)
        if name == "note":
            notes.append(child)
        elif name == "s":
            parts.append(" " * int(child.get(f"{{{_TEXT_NS}}}c", "1") or 1))
        elif name == "tab":
            parts.append("\t")
        elif name == "line-break":
            parts.append("\n")
        elif name not in ("annotation", "bookmark", "bookmark-start", "bookmark-end", "soft-page-break"):
            parts.append(_inline_text(child, notes))
        parts.append(child.tail or "")
    return "".join(parts)


def _blocks(node: Element, notes: list[Element], out: list[str]) -> None:
    for child in node:
        if local(child.tag) in ("p", "h"):
            out.append(_inline_text(child, notes))
        else:
            _blocks(child, notes, out)


def read_odt(data: bytes) -> Extracted:
    """The visible text of an ODT document, with paragraph locations."""
    package = SafeZip(data, "ODT")
    content = package.xml("content.xml")
    body = next((child for child in content.iter() if local(child.tag) == "text" and child is not content), content)
    notes: list[Element] = []
    paragraphs: list[str] = []
    _blocks(body, notes, paragraphs)
    builder = TextBuilder()
    for number, text in enumerate(paragraphs, 1):
        builder.add(text, f"paragraph {number}")
    for number, note in enumerate(notes, 1):
        texts: list[str] = []
        for part in note:
            if local(part.tag) == "note-body":
                _blocks(part, [], texts)
        builder.add("\n".join(texts), f"footnote {number}")
    return Extracted(builder.text(), "odt", locations=builder.locations())
