"""Rendering results for people (aligned tables) and programs (JSON, TSV).

Document ids, file names and excerpts come from the collection, and a hostile one may hold
terminal escape sequences (colours, window titles) or a newline that forges a result row. Every
human output goes through :func:`printable`, which shows control characters as escapes; JSON
escapes them already.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from coderiv.errors import CoderivError

FORMATS = ("table", "json", "tsv")

#: control characters, and lone surrogates (a file name's undecodable bytes, which no terminal
#: encoding can print)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(value: Any) -> str:
    """``str(value)`` with control characters (C0, DEL, C1, line separators and bidirectional
    overrides) shown as escapes, so a terminal prints them instead of obeying them."""
    text = str(value)
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), _escape(m.group())), text)


#: what a web page or an HTML report must not pass through: the control characters of
#: :data:`_CONTROL` but line breaks and tabs, which a document's text keeps
_CONTROL_IN_HTML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def html_visible(value: Any) -> Any:
    """A Jinja2 ``finalize`` for pages and reports: in every string a template outputs (ids, file
    names, excerpts, texts), control characters, bidirectional overrides and undecodable bytes
    are shown as escapes (as :func:`printable` shows them), line breaks and tabs kept; values
    already marked safe (rendered HTML) and non-strings pass unchanged."""
    if not isinstance(value, str) or hasattr(value, "__html__") or not _CONTROL_IN_HTML.search(value):
        return value
    return _CONTROL_IN_HTML.sub(lambda m: _escape(m.group()), value)


def _escape(char: str) -> str:
    if 0xDC80 <= ord(char) <= 0xDCFF:  # an undecodable byte of a name (surrogateescape): \xNN
        return f"\\x{ord(char) - 0xDC00:02x}"
    return f"\\x{ord(char):02x}" if ord(char) < 256 else f"\\u{ord(char):04x}"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A plain aligned text table; ``align`` has one ``<`` or ``>`` per column."""
    cells = [[printable(h) for h in headers]] + [[printable(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    align = align or "<" * len(headers)
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(row, align, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def tsv(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Tab-separated values with a header line (control characters in cells, tabs and newlines
    included, shown as escapes: a cell never splits a row or a column)."""
    return "\n".join("\t".join(printable(c) for c in row) for row in [headers, *rows])


#: lone surrogates: a file name's undecodable bytes (surrogateescape), which UTF-8 cannot encode
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _valid_utf8(text: str) -> str:
    """``text`` with every lone surrogate written as printable() shows it (``\\xNN`` for an
    undecodable byte), so machine output always encodes as UTF-8."""
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: _escape(m.group()).replace("\\", "\\\\"), text)


def to_json(data: Any, indent: int | None = 2) -> str:
    """JSON for programs: non-ASCII kept as UTF-8, an undecodable byte of a name as the text
    ``\\xNN`` (as tables show it), so the output is always valid UTF-8 whatever the names."""
    return _valid_utf8(json.dumps(data, indent=indent, ensure_ascii=False))


def json_line(data: Any) -> str:
    """One JSON Lines record (as :func:`to_json`, on one line)."""
    return to_json(data, indent=None)


#: Decimals kept in every percentage of JSON (and TSV) output: a millionth of a percentage
#: point, far below any real difference, so 100.0000000000001 (floating-point noise of an exact
#: 100%) is written 100.0.
JSON_PERCENT_DECIMALS = 6
#: The mark a table puts after a percentage above 100%; :func:`over_100_note` explains it.
OVER_100_MARK = "*"


def json_percent(value: float) -> float:
    """A percentage as JSON carries it: rounded to :data:`JSON_PERCENT_DECIMALS` decimals."""
    return round(float(value), JSON_PERCENT_DECIMALS)


def above_100(value: float, digits: int = 1) -> bool:
    """Whether a percentage *shows* above 100% at ``digits`` decimals (noise over an exact
    100% does not)."""
    return round(float(value), digits) > 100


def fmt_percent(value: float, digits: int = 1) -> str:
    """Percentages as users read them: one decimal by default, e.g. ``83.9%``; a value above
    100% gets :data:`OVER_100_MARK` (``100.2%*``), explained under the table by
    :func:`over_100_note`."""
    return f"{value:.{digits}f}%" + (OVER_100_MARK if above_100(value, digits) else "")


def over_100_note(values: Iterable[float], reasons: Iterable[str | None], digits: int = 1) -> str | None:
    """The one line a table prints under it when one of its ``values`` shows above 100%:
    the mark and why (``reasons``: the method's own explanation of how it passes 100%; the
    distinct non-empty ones are joined). None when no value is above 100%."""
    if not any(above_100(v, digits) for v in values):
        return None
    why = [r for r in dict.fromkeys(reasons) if r]
    text = "; ".join(why) if why else "the method is not bounded by the query's own score"
    return f"{OVER_100_MARK} above 100%: {text}"


def save_figure(figure: Any, path: str | Path) -> None:
    """Write a matplotlib figure as a PNG and close it; an unwritable path is one line."""
    import matplotlib.pyplot as plt

    try:
        figure.savefig(path, dpi=110)
    except (OSError, ValueError) as exc:
        raise CoderivError(f"cannot write the plot {path}: {getattr(exc, 'strerror', None) or exc}") from None
    finally:
        plt.close(figure)
