"""reStructuredText: parsed and rendered by docutils, then the visible text.

Documentation written for Sphinx uses roles and directives that plain docutils does not know
(``:ref:``, ``.. versionadded::``). Before parsing, each unknown name found in the source is
registered as a generic role (its text, without a ``<target>``) or a generic directive (its
argument and content, parsed as ordinary body text), so their words are kept and nothing
crashes. File inclusion and raw output are disabled: a document cannot pull in other files.
"""

from __future__ import annotations

import io
import re
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


def read_rst(data: bytes) -> Extracted:
    """The visible text of a reStructuredText document."""
    core: Any = require("docutils.core", "all", "reading reStructuredText")
    html5: Any = require("docutils.writers.html5_polyglot", "all", "reading reStructuredText")
    decoded = decode(data)
    _register_unknown(decoded.text)
    try:
        parts = core.publish_parts(
            decoded.text, writer=html5.Writer(), settings_overrides={**_SETTINGS, "warning_stream": io.StringIO()}
        )
    except Exception as exc:  # docutils reports malformed input by many exception types
        raise ExtractionError(f"unreadable reStructuredText ({type(exc).__name__}: {exc})") from None
    return Extracted(html_to_text(parts["html_body"]), "rst", decoded.lossy)
