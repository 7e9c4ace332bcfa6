"""reStructuredText: parsed and rendered by docutils, then the visible text.

Documentation written for Sphinx uses roles and directives that plain docutils does not know
(``:ref:``, ``.. versionadded::``). Before parsing, each unknown name found in the source is
registered as a generic role (its text, without a ``<target>``) or a generic directive (its
argument and content, parsed as ordinary body text), so their words are kept and nothing
crashes. File inclusion and raw output are disabled: a document cannot pull in other files.

docutils is slow for what is asked of it here (about 20-30 ms of CPU for a 13 KB page, where
decoding plain text takes 0.005 ms), and its parse is the cost: no setting makes it fast. Three
costs that do not change the output are cut: the settings are built once (docutils otherwise
builds them for every document); Python's cyclic garbage collector is held off while a page is
parsed (one collection of the page's cyclic trees after it, not many during it); together a
few percent. And a document whose bytes were read moments ago is not parsed again
(:data:`RECENT` documents, :data:`RECENT_CHARS` characters, are kept): a collection of versions holds many identical pages (a
third of the dev collection's 3,354 reST files), which makes reading that collection 1.4 times
faster. The text is the same as before, byte for byte (tests/test_rst_speed.py; all 3,354 files
checked once). docs/performance.md has the figures.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import io
import re
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any

from coderiv.extras import require
from coderiv.text.formats.base import Extracted, ExtractionError
from coderiv.text.formats.html import html_to_text
from coderiv.text.formats.plain import decode

_DIRECTIVE = re.compile(r"^\s*\.\.\s+([A-Za-z][\w:.+-]*)::", re.MULTILINE)
_ROLE = re.compile(r"(?<![\w`]):([A-Za-z][\w:.+-]*):`")
_TARGET = re.compile(r"\s*<[^<>]*>\s*$")
_SETTINGS = {
    "report_level": 5, "halt_level": 5, "file_insertion_enabled": False, "raw_enabled": False,
    "_disable_config": True, "traceback": False, "input_encoding": "unicode", "embed_stylesheet": False,
}


def _register_unknown(source: str) -> None:
    directives: Any = require("docutils.parsers.rst.directives", "all", "reading reStructuredText")
    roles: Any = require("docutils.parsers.rst.roles", "all", "reading reStructuredText")
    rst: Any = require("docutils.parsers.rst", "all", "reading reStructuredText")
    nodes: Any = require("docutils.nodes", "all", "reading reStructuredText")
    known_directives = set(directives._directive_registry) | set(directives._directives)
    known_roles = set(roles._role_registry) | set(roles._roles)

    class AnyOption(dict[str, Any]):
        def __missing__(self, key: str) -> Any:
            return directives.unchanged

    class GenericDirective(rst.Directive):  # type: ignore[misc]
        has_content = True
        optional_arguments = 1
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            container = nodes.container()
            if self.arguments:
                container += nodes.paragraph(text=self.arguments[0])
            self.state.nested_parse(self.content, self.content_offset, container)
            return [container]

    def generic_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
                     options: Any = None, content: Any = None) -> tuple[list[Any], list[Any]]:
        shown = _TARGET.sub("", text).lstrip("~!") if "<" in text else text.lstrip("~!")
        return [nodes.inline(rawtext, shown or text)], []

    for name in set(_DIRECTIVE.findall(source)) - known_directives:
        directives.register_directive(name, GenericDirective)
    for name in set(_ROLE.findall(source)) - known_roles:
        roles.register_local_role(name, generic_role)


@lru_cache(maxsize=1)
def _settings() -> Any:
    """docutils' settings for the standalone reader, the reST parser and the HTML5 writer, with
    :data:`_SETTINGS`, built once (a copy is handed to each document)."""
    frontend: Any = require("docutils.frontend", "all", "reading reStructuredText")
    rst: Any = require("docutils.parsers.rst", "all", "reading reStructuredText")
    standalone: Any = require("docutils.readers.standalone", "all", "reading reStructuredText")
    html5: Any = require("docutils.writers.html5_polyglot", "all", "reading reStructuredText")
    components = (standalone.Reader, rst.Parser, html5.Writer)
    if hasattr(frontend, "get_default_settings"):
        settings = frontend.get_default_settings(*components)
    else:  # docutils < 0.19
        settings = frontend.OptionParser(components=components).get_default_values()
    for key, value in _SETTINGS.items():
        setattr(settings, key, value)
    return settings


#: Documents whose text is kept, by the SHA-256 of their bytes, at most this many ...
RECENT = 512
#: ... and at most this many characters of text in all (a few MB).
RECENT_CHARS = 8 << 20
_recent: OrderedDict[bytes, Extracted] = OrderedDict()
_recent_lock = threading.Lock()
_recent_chars = 0


def read_rst(data: bytes) -> Extracted:
    """The visible text of a reStructuredText document (the same bytes read lately: the same
    text, without parsing again)."""
    global _recent_chars
    key = hashlib.sha256(data).digest()
    with _recent_lock:
        if key in _recent:
            _recent.move_to_end(key)
            return _recent[key]
    extracted = _render(data)
    with _recent_lock:
        if key not in _recent and len(extracted.text) <= RECENT_CHARS // 8:
            _recent[key] = extracted
            _recent_chars += len(extracted.text)
        while len(_recent) > RECENT or _recent_chars > RECENT_CHARS:
            _recent_chars -= len(_recent.popitem(last=False)[1].text)
    return extracted


def _forget_recent() -> None:
    """Drop the kept documents (tests and benchmarks start from none)."""
    global _recent_chars
    with _recent_lock:
        _recent.clear()
        _recent_chars = 0


def _render(data: bytes) -> Extracted:
    """The document parsed and rendered by docutils, then the HTML's visible text."""
    core: Any = require("docutils.core", "all", "reading reStructuredText")
    html5: Any = require("docutils.writers.html5_polyglot", "all", "reading reStructuredText")
    decoded = decode(data)
    _register_unknown(decoded.text)
    settings = copy.copy(_settings())
    settings.warning_stream = io.StringIO()
    collecting = gc.isenabled()
    gc.disable()  # one collection of the page's garbage after it, not several during it
    try:
        parts = core.publish_parts(decoded.text, writer=html5.Writer(), settings=settings)
    except Exception as exc:  # docutils reports malformed input by many exception types
        raise ExtractionError(f"unreadable reStructuredText ({type(exc).__name__}: {exc})") from None
    finally:
        if collecting:
            gc.enable()
    return Extracted(html_to_text(parts["html_body"]), "rst", decoded.lossy)
