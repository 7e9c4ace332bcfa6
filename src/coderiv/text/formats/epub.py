"""EPUB: the XHTML chapters in reading (spine) order, each through the HTML reader.
Read through :class:`SafeZip` (capped, defusedxml for the container and package files).
Locations: ``chapter N`` (the Nth document of the spine that has text)."""

from __future__ import annotations

import posixpath

from coderiv.text.formats.base import Extracted, ExtractionError, TextBuilder
from coderiv.text.formats.html import html_to_text
from coderiv.text.formats.plain import decode
from coderiv.text.formats.ziparchive import SafeZip, local


def _spine(package: SafeZip) -> list[str]:
    container = package.xml("META-INF/container.xml")
    rootfile = next((node.get("full-path") for node in container.iter() if local(node.tag) == "rootfile"), None)
    if not rootfile:
        raise ExtractionError("corrupt EPUB (no rootfile in META-INF/container.xml)")
    opf = package.xml(rootfile)
    base = posixpath.dirname(rootfile)
    manifest = {node.get("id"): node.get("href", "") for node in opf.iter() if local(node.tag) == "item"}
    spine = [manifest.get(node.get("idref"), "") for node in opf.iter() if local(node.tag) == "itemref"]
    return [posixpath.normpath(posixpath.join(base, href)) for href in spine if href]


def read_epub(data: bytes) -> Extracted:
    """The visible text of an EPUB book, chapter by chapter."""
    package = SafeZip(data, "EPUB")
    builder = TextBuilder()
    chapter = 0
    lossy = False
    for name in _spine(package):
        if not package.has(name):
            continue
        decoded = decode(package.read(name))
        lossy = lossy or decoded.lossy
        text = html_to_text(decoded.text)
        if text.strip():
            chapter += 1
            builder.add(text.strip(), f"chapter {chapter}")
    return Extracted(builder.text(), "epub", lossy, builder.locations())
