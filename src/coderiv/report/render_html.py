"""The report as one self-contained HTML page (Jinja2 template ``templates/report.html.j2``).

Inline CSS and JavaScript, no external resource, and a Content-Security-Policy that forbids
any network access. Every piece of document text and every name goes through Jinja2's
autoescaping, so a document holding ``<script>`` shows it as text. The page has the overall
figure, the ranked sources with their colours, the query with every counted passage
highlighted in its source's colour (excluded text greyed, with the reason on hover), and one
side-by-side comparison per source: query left, source right, passages linked (click one side
and the other scrolls to it), long unmatched stretches folded. Comparisons are rendered lazily:
each lives in a ``<template>`` that is put into the page when it is opened (or printed), so a
large report opens quickly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from coderiv._version import __version__
from coderiv.output import html_visible
from coderiv.report.model import Report, ReportPassage, ReportSource
from coderiv.text.exclusions import KINDS

if TYPE_CHECKING:
    import jinja2

#: An unmatched stretch longer than this (characters) is folded in the side-by-side panes,
#: keeping :data:`FOLD_KEEP` characters visible at each end.
FOLD_OVER = 1200
FOLD_KEEP = 300
#: On the query side of a comparison (the query is repeated in every one), a folded stretch
#: longer than this is left out, not just folded: the whole query is on the page once already.
OMIT_OVER = 2_000


@dataclass(frozen=True)
class Run:
    """A stretch of text rendered alike: ``css`` class ('' for plain), element ``id`` and
    ``peer`` (the linked mark in the other pane), ``title`` on hover, ``source`` (rank of the
    source whose comparison a click opens), ``folded`` (shown collapsed), ``omitted`` (that
    many characters left out, ``text`` empty)."""

    text: str
    css: str = ""
    id: str = ""
    peer: str = ""
    title: str = ""
    source: int = 0
    folded: bool = False
    omitted: int = 0


def _boundaries(*layers: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of the maximal stretches where every layer keeps one value."""
    length = len(layers[0])
    if length == 0:
        return []
    change = np.zeros(length, bool)
    change[0] = True
    for layer in layers:
        change[1:] |= layer[1:] != layer[:-1]
    starts = np.flatnonzero(change).tolist()
    return list(zip(starts, starts[1:] + [length]))


def _fold(text: str, omit: bool = False) -> list[Run]:
    """An unmatched stretch, its middle folded when long (left out when very long and ``omit``)."""
    if len(text) <= FOLD_OVER:
        return [Run(text)]
    middle = text[FOLD_KEEP:-FOLD_KEEP]
    inner = Run("", omitted=len(middle)) if omit and len(middle) > OMIT_OVER else Run(middle, folded=True)
    return [Run(text[:FOLD_KEEP]), inner, Run(text[-FOLD_KEEP:])]


def query_runs(report: Report) -> list[Run]:
    """The query with counted passages in their sources' colours and exclusions greyed."""
    length = len(report.query_text)
    owner = np.zeros(length, np.int64)  # source rank, 0: none
    which = np.full(length, -1, np.int64)  # index into the owner's passages
    for source in reversed(report.sources):
        for i, p in enumerate(source.passages):
            if p.excluded is None:
                owner[p.query_start : p.query_end] = source.rank
                which[p.query_start : p.query_end] = i if p.doc_id == source.doc_id else -1
    kind = np.zeros(length, np.int64)
    reasons: dict[int, str] = {}
    for n, exclusion in enumerate(report.exclusions):
        kind[exclusion.start : exclusion.end] = n + 1
        reasons[n + 1] = exclusion.reason
    sources = {s.rank: s for s in report.sources}
    runs = []
    for start, end in _boundaries(owner, which, kind):
        text = report.query_text[start:end]
        rank, k = int(owner[start]), int(kind[start])
        if k:
            runs.append(Run(text, "ex", title=f"excluded: {reasons[k]}"))
        elif rank:
            first = f"q{rank}-{which[start]}" if which[start] >= 0 else ""
            runs.append(Run(text, f"s{rank}", peer=first, title=sources[rank].doc_id, source=rank))
        else:
            runs.append(Run(text))
    return runs


def _pane_runs(text: str, spans: list[tuple[int, int, int, ReportPassage]], rank: int, side: str, other: str) -> list[Run]:
    """One side of a comparison: ``spans`` are (start, end, passage index, passage)."""
    which = np.full(len(text), -1, np.int64)
    for start, end, i, _ in sorted(spans, key=lambda s: s[3].excluded is None):  # counted ones on top
        which[start:end] = i
    by_index = {i: p for _, _, i, p in spans}
    seen: set[int] = set()
    runs: list[Run] = []
    for start, end in _boundaries(which):
        i = int(which[start])
        piece = text[start:end]
        if i < 0:
            runs += _fold(piece, omit=side == "q")
            continue
        p = by_index[i]
        css = f"s{rank}" if p.excluded is None else "mx"
        title = f"passage {i + 1}: {p.words} words" + (f", excluded ({p.excluded})" if p.excluded else "")
        runs.append(Run(piece, css, "" if i in seen else f"{side}{rank}-{i}", f"{other}{rank}-{i}", title))
        seen.add(i)
    return runs


def pane_runs(report: Report, source: ReportSource) -> tuple[list[Run], list[Run]]:
    """(query side, source side) of a source's comparison: its own passages, linked."""
    own = [(i, p) for i, p in enumerate(source.passages) if p.doc_id == source.doc_id]
    left = _pane_runs(report.query_text, [(p.query_start, p.query_end, i, p) for i, p in own], source.rank, "q", "d")
    right = _pane_runs(source.text, [(p.source_start, p.source_end, i, p) for i, p in own], source.rank, "d", "q")
    return left, right


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The template environment, made (and Jinja2 imported) at the first HTML page: a JSON
    report, or the search before the page, does not pay Jinja2's import (issue 27, start-up)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,
        finalize=html_visible,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(report: Report) -> str:
    """The report as one self-contained HTML page."""
    summary = {kind: n for kind, n in report.excluded_words.items() if n}
    return _environment().get_template("report.html.j2").render(
        report=report,
        query_runs=query_runs(report),
        panes={s.rank: pane_runs(report, s) for s in report.sources},
        excluded_summary=summary,
        kinds=KINDS,
        version=__version__,
    )
