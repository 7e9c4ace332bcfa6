"""DOCX (Word 2007+): the body's paragraphs and tables in document order, then footnotes and
endnotes. Read straight from the package's XML through :class:`SafeZip` (capped, defusedxml),
so a hostile file can neither expand entities nor unpack a bomb. Deleted tracked changes and
field codes are not text a reader sees and are left out. Locations: ``paragraph N`` (table
cells count as paragraphs), ``footnote N``, ``endnote N``."""

from __future__ import annotations

from xml.etree.ElementTree import Element

from coderiv.text.formats.base import Extracted, TextBuilder
from coderiv.text.formats.ziparchive import SafeZip, local


def _paragraph_text(paragraph: Element) -> str:
    parts: list[str] = []
    for node in paragraph.iter():
        name = local(node.tag)
        if name == "t" and node.text:
            parts.append(node.text)
        elif name == "tab":
            parts.append("\t")
        elif name in ("br", "cr"):
            parts.append("\n")
        elif name == "noBreakHyphen":
            parts.append("-")
    return "".join(parts)


def _paragraphs(root: Element) -> list[Element]:
    """Every ``w:p`` in document order, including those inside tables and content controls,
    but not those nested in another paragraph (text boxes are read with their anchor)."""
    found: list[Element] = []

    def walk(node: Element) -> None:
        for child in node:
            if local(child.tag) == "p":
                found.append(child)
            else:
                walk(child)

    walk(root)
    return found


def _notes(package: SafeZip, part: str, kind: str, builder: TextBuilder) -> None:
    if not package.has(part):
        return
    number = 0
    for note in package.xml(part):
        if local(note.tag) not in ("footnote", "endnote"):
            continue
        if any(key.endswith("}type") for key in note.attrib):  # separators and continuation notices
            continue
        number += 1
        builder.add("\n".join(_paragraph_text(p) for p in _paragraphs(note)), f"{kind} {number}")


def read_docx(data: bytes) -> Extracted:
    """The visible text of a DOCX document, with paragraph locations."""
    package = SafeZip(data, "DOCX")
    document = package.xml("word/document.xml")
    body = next((child for child in document if local(child.tag) == "body"), document)
    builder = TextBuilder()
    for number, paragraph in enumerate(_paragraphs(body), 1):
        builder.add(_paragraph_text(paragraph), f"paragraph {number}")
    _notes(package, "word/footnotes.xml", "footnote", builder)
    _notes(package, "word/endnotes.xml", "endnote", builder)
    return Extracted(builder.text(), "docx", locations=builder.locations())
