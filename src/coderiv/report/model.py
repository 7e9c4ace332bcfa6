"""The typed report object (what :func:`coderiv.report.build.build_report` returns) and its
JSON form (``to_dict``; every field is described in docs/report.md).

Offsets are characters (Unicode code points) into the *visible text* of each document (what
``coderiv`` extracts from it: markup removed), ``[start, end)``. Percentages are of the
query's words: every maximal run of letters and digits counts, stopwords included.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from coderiv.ranking.measures import DEFAULT_MEASURE

#: Version of the JSON form; raised when a field changes meaning or disappears.
JSON_VERSION = 1


@dataclass(frozen=True)
class ReportOptions:
    """How a report is built (each exclusion can be turned off).

    ``top``: candidates taken from each search (containment and the ranking ``measure``;
    ``measure=None`` uses containment alone). ``min_chars``: shortest exact passage looked for
    (characters of normalized text). ``min_words``: passages with fewer counted words are
    excluded as small matches (0: off). ``exclude_quotes`` / ``exclude_bibliography``: leave
    quotations / the bibliography out. ``templates``: (name, text) of documents whose passages
    found in the query are not counted. ``common_docs``: passages found in more than this many
    documents of the collection are excluded as boilerplate (None: off). ``group_versions``:
    sources whose chunk similarity is at least ``version_percent`` both ways are one source.
    ``exclude_docs``: documents of the index never taken as sources (e.g. the query itself).
    """

    top: int = 10
    measure: str | None = DEFAULT_MEASURE
    min_chars: int = 20
    min_words: int = 8
    exclude_quotes: bool = True
    exclude_bibliography: bool = True
    templates: tuple[tuple[str, str], ...] = ()
    common_docs: int | None = None
    group_versions: bool = True
    version_percent: float = 50.0
    exclude_docs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["templates"] = [name for name, _ in self.templates]
        data["exclude_docs"] = list(self.exclude_docs)
        return data


@dataclass(frozen=True)
class ReportPassage:
    """An exact passage shared by the query and a source: query characters
    [query_start, query_end) equal the source's [source_start, source_end) after normalization
    (case, whitespace). ``words``: query words wholly inside; ``counted_words``: those not
    excluded (they are what the shares count); ``excluded``: None, or the kind of exclusion that
    drops the whole passage (``quote``, ``bibliography``, ``template``, ``common``, ``small``);
    ``doc_id``: the document it was found in (a version of the source when grouped)."""

    number: int
    doc_id: str
    query_start: int
    query_end: int
    source_start: int
    source_end: int
    words: int
    counted_words: int
    excluded: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReportVersion:
    """Another version of a source (grouped under it): its id and the query words it matches."""

    doc_id: str
    matched_words: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ReportSource:
    """One source of the query (with its versions, when grouped).

    ``share``: percentage of the query's words credited to it (words it alone explains, then
    shared ones, greedily: the shares add up to the overall figure); ``credited_words`` that
    count; ``matched_words`` / ``matched_percent``: every counted query word it matches, shared
    or not. ``containment_percent``: the containment search's percentage (share of the query's
    chunks in it); ``ranking_percent``: the ranking measure's (None if it was not among that
    measure's top candidates). ``color``: its highlight colour in the HTML report. ``text``: its
    visible text (left out of the JSON form unless asked for)."""

    rank: int
    doc_id: str
    color: str
    share: float
    credited_words: int
    matched_words: int
    matched_percent: float
    containment_percent: float | None
    ranking_percent: float | None
    versions: list[ReportVersion] = field(default_factory=list)
    passages: list[ReportPassage] = field(default_factory=list)
    text: str = ""

    @property
    def own_passages(self) -> list[ReportPassage]:
        """Passages found in this document itself (not in one of its versions)."""
        return [p for p in self.passages if p.doc_id == self.doc_id]

    def to_dict(self, include_texts: bool = False) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "text"}
        if include_texts:
            data["text"] = self.text
        return data


@dataclass(frozen=True)
class ReportExclusion:
    """Query characters [start, end) left out of the shares: ``kind`` (``quote``,
    ``bibliography``, ``template``, ``common``, ``small``), the ``words`` it removed, and why."""

    kind: str
    start: int
    end: int
    words: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Report:
    """The evidence report of one query document.

    ``overall``: percentage of the query's ``total_words`` covered by counted passages of any
    source (``covered_words``; each word once, whoever matched it). ``excluded_words``: words
    removed by each kind of exclusion (a word is attributed to the first of quote, bibliography,
    template, common, small that applies). ``candidates``: documents verified; ``searches``:
    how the candidates were found (method names)."""

    label: str
    query_text: str
    total_words: int
    covered_words: int
    overall: float
    sources: list[ReportSource]
    exclusions: list[ReportExclusion]
    excluded_words: dict[str, int]
    options: ReportOptions
    index: str
    documents: int
    candidates: int
    searches: list[str]
    note: str | None = None

    def to_dict(self, include_texts: bool = False) -> dict[str, Any]:
        """The JSON form (docs/report.md); ``include_texts`` adds the query's and every source's
        visible text (``query_text``, ``sources[].text``)."""
        data: dict[str, Any] = {
            "version": JSON_VERSION,
            "label": self.label,
            "total_words": self.total_words,
            "covered_words": self.covered_words,
            "overall": self.overall,
            "excluded_words": self.excluded_words,
            "sources": [s.to_dict(include_texts) for s in self.sources],
            "exclusions": [e.to_dict() for e in self.exclusions],
            "options": self.options.to_dict(),
            "index": self.index,
            "documents": self.documents,
            "candidates": self.candidates,
            "searches": self.searches,
            "note": self.note,
        }
        if include_texts:
            data["query_text"] = self.query_text
        return data
