"""Rendering results for people (aligned tables) and programs (JSON, TSV)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

FORMATS = ("table", "json", "tsv")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A plain aligned text table; ``align`` has one ``<`` or ``>`` per column."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    align = align or "<" * len(headers)
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(f"{c:{a}{w}}" for c, a, w in zip(row, align, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def tsv(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Tab-separated values with a header line (tabs and newlines in cells become spaces)."""
    def clean(value: Any) -> str:
        return str(value).replace("\t", " ").replace("\n", " ")

    return "\n".join("\t".join(clean(c) for c in row) for row in [headers, *rows])


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


def fmt_percent(value: float, digits: int = 1) -> str:
    """Percentages as users read them: one decimal by default, e.g. ``83.9%``."""
    return f"{value:.{digits}f}%"
