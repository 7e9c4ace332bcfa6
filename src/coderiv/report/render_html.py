"""The report as one self-contained HTML page (Jinja2 template ``templates/report.html.j2``).

Inline CSS and JavaScript, no external resource, and a Content-Security-Policy that forbids
any network access. Every piece of document text and every name goes through Jinja2's
autoescaping, so a document holding ``<script>`` shows it as text. The page has the overall
figure, the ranked sources with their colours, the query with every counted passage
highlighted in its source's colour and the words that differ from the source marked inside it
(WCopyfind's "imperfections"); excluded text that a source matches stays highlighted, greyed,
with the reason on hover; and one side-by-side comparison per source: query left, source right,
passages linked (click one side and the other scrolls to it; a click in the overview scrolls
both), long unmatched stretches folded. Names are shown as file names: the page never carries
the examiner's folders. Comparisons are rendered lazily:
each lives in a ``<template>`` that is put into the page when it is opened (or printed), so a
large report opens quickly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath
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


def file_name(name: str) -> str:
    """The last component of a path (POSIX or Windows): what a report shows of a file."""
    base = PureWindowsPath(PurePosixPath(name).name).name if name else name
    return base or name


def _changed(length: int, passages: list[ReportPassage], side: str) -> np.ndarray:
    """Characters of the counted passages' words that differ from the other side."""
    out = np.zeros(length, bool)
    for p in passages:
        if p.excluded is None:
            for span in p.query_spans if side == "q" else p.source_spans:
                if span.kind == "changed":
                    out[span.start : span.end] = True
    return out


def _exclusion_layer(report: Report) -> tuple[np.ndarray, dict[int, str]]:
    """Each query character's exclusion (1-based index into ``report.exclusions``, 0: none)."""
    kind = np.zeros(len(report.query_text), np.int64)
    reasons: dict[int, str] = {}
    for n, exclusion in enumerate(report.exclusions):
        kind[exclusion.start : exclusion.end] = n + 1
        reasons[n + 1] = exclusion.reason
    return kind, reasons


def query_runs(report: Report) -> list[Run]:
    """The query with counted passages in their sources' colours, their differing words marked,
    and exclusions greyed (still linked to the source that matches them)."""
    length = len(report.query_text)
    owner = np.zeros(length, np.int64)  # source rank, 0: none
    which = np.full(length, -1, np.int64)  # index into the owner's passages
    matched = np.zeros(length, np.int64)  # rank of a source matching the text, counted or not
    changed = np.zeros(length, bool)
    for source in reversed(report.sources):
        for i, p in enumerate(source.passages):
            matched[p.query_start : p.query_end] = source.rank
            if p.excluded is None:
                owner[p.query_start : p.query_end] = source.rank
                which[p.query_start : p.query_end] = i if p.doc_id == source.doc_id else -1
        changed |= _changed(length, source.own_passages, "q")
    kind, reasons = _exclusion_layer(report)
    sources = {s.rank: s for s in report.sources}
    runs = []
    for start, end in _boundaries(owner, which, kind, matched, changed):
        text = report.query_text[start:end]
        rank, k, seen = int(owner[start]), int(kind[start]), int(matched[start])
        if k:
            also = f"; matches {sources[seen].doc_id}" if seen else ""
            runs.append(Run(text, "ex", title=f"excluded: {reasons[k]}{also}", source=seen))
        elif rank:
            first = f"q{rank}-{which[start]}" if which[start] >= 0 else ""
            css = f"s{rank} chg" if changed[start] else f"s{rank}"
            title = sources[rank].doc_id + (" (words differ)" if changed[start] else "")
            runs.append(Run(text, css, peer=first, title=title, source=rank))
        else:
            runs.append(Run(text))
    return runs


def passage_title(number: int, p: ReportPassage) -> str:
    """What hovering a passage says: its size, how much of it is identical and its kind of reuse,
    and any exclusion."""
    share = "verbatim" if p.match == "verbatim" else f"{100 * p.identical_share:.0f}% of its words identical ({p.reuse})"
    return f"passage {number}: {p.words} words, {share}" + (f", excluded ({p.excluded})" if p.excluded else "")


def _pane_runs(
    text: str, spans: list[tuple[int, int, int, ReportPassage]], rank: int, side: str, other: str,
    excluded: tuple[np.ndarray, dict[int, str]] | None = None,
) -> list[Run]:
    """One side of a comparison: ``spans`` are (start, end, passage index, passage); differing
    words of counted passages marked; on the query side, excluded text inside a passage greyed."""
    which = np.full(len(text), -1, np.int64)
    for start, end, i, _ in sorted(spans, key=lambda s: s[3].excluded is None):  # counted ones on top
        which[start:end] = i
    changed = _changed(len(text), [p for _, _, _, p in spans], side)
    kind, reasons = excluded if excluded is not None else (np.zeros(len(text), np.int64), {})
    by_index = {i: p for _, _, i, p in spans}
    seen: set[int] = set()
    runs: list[Run] = []
    for start, end in _boundaries(which, changed, kind):
        i = int(which[start])
        piece = text[start:end]
        if i < 0:
            runs += _fold(piece, omit=side == "q")
            continue
        p = by_index[i]
        k = int(kind[start])
        css = "mx" if p.excluded is not None or k else f"s{rank} chg" if changed[start] else f"s{rank}"
        title = passage_title(i + 1, p) + (f"; excluded: {reasons[k]}" if k and p.excluded is None else "")
        runs.append(Run(piece, css, "" if i in seen else f"{side}{rank}-{i}", f"{other}{rank}-{i}", title))
        seen.add(i)
    return runs


def pane_runs(report: Report, source: ReportSource) -> tuple[list[Run], list[Run]]:
    """(query side, source side) of a source's comparison: its own passages, linked."""
    own = [(i, p) for i, p in enumerate(source.passages) if p.doc_id == source.doc_id]
    left = _pane_runs(
        report.query_text, [(p.query_start, p.query_end, i, p) for i, p in own], source.rank, "q", "d", _exclusion_layer(report),
    )
    right = _pane_runs(source.text, [(p.source_start, p.source_end, i, p) for i, p in own], source.rank, "d", "q")
    return left, right


_QUOTE_MARKS = "\"'“”„‟«»‹›‘’‚"


def excerpt(text: str, length: int = 90) -> str:
    """A short excerpt of excluded text, without the quotation marks it may start or end with
    (the page puts its own around it), whitespace made single spaces."""
    flat = re.sub(r"\s+", " ", text).strip().strip(_QUOTE_MARKS).strip()
    return flat if len(flat) <= length else flat[: length - 1].rstrip() + "…"


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
        label=file_name(report.label),
        index_name=file_name(report.index),
        excerpts=[excerpt(report.query_text[e.start : e.end]) for e in report.exclusions],
        query_runs=query_runs(report),
        panes={s.rank: pane_runs(report, s) for s in report.sources},
        excluded_summary=summary,
        kinds=KINDS,
        version=__version__,
    )
