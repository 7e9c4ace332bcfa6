"""reStructuredText: parsed and rendered by docutils, then the visible text.

Documentation written for Sphinx uses roles and directives that plain docutils does not know
(``:ref:``, ``.. versionadded::``). Before parsing, each unknown name found in the source is
registered as a generic role (its text, without a ``<target>``) or a generic directive (its
argument and content, parsed as ordinary body text), so their words are kept and nothing
crashes. File inclusion and raw output are disabled: a document cannot pull in other files.

docutils is slow for what is asked of it here (about 13 ms for a 7 KB page, where decoding plain
text takes 0.02 ms). Two costs that do not change the output are removed: the settings are built
once (docutils otherwise builds an option parser for every document), and the transition
tables of the parser's states, which docutils remakes for each of the ~200 state objects a page
creates, are made once per state class (:func:`_cache_transitions`). docs/performance.md has the
figures; the parse itself remains the bulk of the time.
"""

from __future__ import annotations

import copy
import io
import re
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
    _cache_transitions()
    return settings


_TRANSITIONS: dict[tuple[type, tuple[Any, ...]], tuple[list[str], dict[str, tuple[Any, str, str]]]] = {}


def _cache_transitions() -> None:
    """Make docutils' ``State.make_transitions`` build each state class's table once: the
    patterns and next states depend only on the class, so only the methods are bound per
    object. The same tables as before, made ~10 times faster; docutils' output is unchanged
    (tests/test_rst_speed.py compares it with the uncached parse)."""
    statemachine: Any = require("docutils.statemachine", "all", "reading reStructuredText")
    state = statemachine.State
    if getattr(state, "_coderiv_cached", False):
        return
    original = state.make_transitions

    def make_transitions(self: Any, name_list: Any) -> tuple[list[str], dict[str, tuple[Any, Any, str]]]:
        key = (type(self), tuple(name_list))
        table = _TRANSITIONS.get(key)
        if table is None:
            names, made = original(self, name_list)
            table = _TRANSITIONS[key] = (names, {name: (t[0], t[1].__name__, t[2]) for name, t in made.items()})
            return names, made
        names, unbound = table
        return list(names), {name: (pattern, getattr(self, method), nxt) for name, (pattern, method, nxt) in unbound.items()}

    state.make_transitions = make_transitions
    state._coderiv_cached = True


def read_rst(data: bytes) -> Extracted:
    """The visible text of a reStructuredText document."""
    core: Any = require("docutils.core", "all", "reading reStructuredText")
    html5: Any = require("docutils.writers.html5_polyglot", "all", "reading reStructuredText")
    decoded = decode(data)
    _register_unknown(decoded.text)
    settings = copy.copy(_settings())
    settings.warning_stream = io.StringIO()
    try:
        parts = core.publish_parts(decoded.text, writer=html5.Writer(), settings=settings)
    except Exception as exc:  # docutils reports malformed input by many exception types
        raise ExtractionError(f"unreadable reStructuredText ({type(exc).__name__}: {exc})") from None
    return Extracted(html_to_text(parts["html_body"]), "rst", decoded.lossy)
