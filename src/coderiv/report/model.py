"""The typed report object (what :func:`coderiv.report.build.build_report` returns) and its
JSON form (``to_dict``; every field is described in docs/report.md).

Offsets are characters (Unicode code points) into the *visible text* of each document (what
``coderiv`` extracts from it: markup removed), ``[start, end)``. Percentages are of the
query's words: every maximal run of letters and digits counts, stopwords included.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from coderiv.overlap.align.kinds import REUSE_KINDS
from coderiv.ranking.measures import DEFAULT_MEASURE

#: Version of the JSON form; raised when a field changes meaning or disappears (2: passages
#: are aligned passages, with their identical-word share and same/changed spans).
JSON_VERSION = 2

#: Candidates the query's windows add at most by default (each is aligned with the query: its
#: cost is the bound; :mod:`coderiv.report.window_candidates`).
MAX_WINDOW_CANDIDATES = 40

#: The report warns when its exclusions leave out more than this share of the query's words.
EXCLUSION_WARNING_SHARE = 0.2


@dataclass(frozen=True)
class ReportOptions:
    """How a report is built (each exclusion can be turned off).

    ``top``: candidates taken from the ranking ``measure`` (whole-document likeness;
    ``measure=None``: none) and from the containment search's greedy cover; the containment
    search adds every document holding at least ``min_chunks`` of the query's chunks, at most
    ``max_candidates`` of them (docs/report.md, "Sources and their cost"). ``min_chars``:
    shortest exact passage of a template looked for (characters of normalized text).
    ``min_words``: aligned passages with fewer counted words are excluded as small matches
    (0: off). ``exclude_quotes`` / ``exclude_bibliography``: leave
    quotations / the bibliography out. ``templates``: (name, text) of documents whose passages
    found in the query are not counted. ``common_docs``: passages found in more than this many
    documents of the collection are excluded as boilerplate (None: off). ``group_versions``:
    sources whose chunk similarity is at least ``version_percent`` both ways are one source.
    ``exclude_docs``: documents of the index never taken as sources (e.g. the query itself).
    ``window_candidates``: at most this many more candidates from the query's windows ranked one
    by one, for reworded reuse (0: none; :mod:`coderiv.report.window_candidates`).
    """

    top: int = 10
    max_candidates: int = 200
    min_chunks: int = 2
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
    window_candidates: int = MAX_WINDOW_CANDIDATES

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["templates"] = [name for name, _ in self.templates]
        data["exclude_docs"] = list(self.exclude_docs)
        return data


@dataclass(frozen=True)
class PassageSpan:
    """A run of words of one side of a passage, characters [start, end): ``same`` (identical,
    in the same order, on the other side) or ``changed`` (replaced, inserted or deleted)."""

    start: int
    end: int
    kind: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ReportPassage:
    """An aligned passage (:mod:`coderiv.overlap.align`): query characters
    [query_start, query_end) copied, verbatim or with words changed, from the source's
    [source_start, source_end). ``words``: query words inside; ``counted_words``: those not
    excluded (they are what the shares count); ``excluded``: None, or the kind of exclusion that
    drops the whole passage (``quote``, ``bibliography``, ``template``, ``common``, ``small``);
    ``doc_id``: the document it was found in (a version of the source when grouped).
    ``same_words``: query words identical in the source (same order); ``identical_share``:
    ``same_words / words`` (1.0: verbatim); ``query_spans``/``source_spans``: each side's words
    as alternating same/changed runs. ``credited_words``: its query words credited to its source
    (0 when another source of the report explains them all: a source lists every passage it
    matches, but each word counts for one source only). ``reuse``: its kind (verbatim, edited,
    paraphrased, summarised: :mod:`coderiv.overlap.align.kinds`)."""

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
    same_words: int = 0
    source_words: int = 0
    query_spans: tuple[PassageSpan, ...] = ()
    source_spans: tuple[PassageSpan, ...] = ()
    credited_words: int = 0
    reuse: str = "verbatim"

    @property
    def identical_share(self) -> float:
        return self.same_words / self.words if self.words else 0.0

    @property
    def match(self) -> str:
        """``verbatim`` (every word identical) or ``near-copy``."""
        return "verbatim" if self.words and self.same_words == self.words else "near-copy"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["identical_share"] = round(self.identical_share, 4)
        data["match"] = self.match
        data["query_spans"] = [s.to_dict() for s in self.query_spans]
        data["source_spans"] = [s.to_dict() for s in self.source_spans]
        return data


@dataclass(frozen=True)
class ReportVersion:
    """Another version of a source (grouped under it): its id, the query words it matches, and
    whether it was aligned with the query (``verified``) or is only known from the index's
    version groups (the ``chunks`` pair table, ``coderiv groups --mutual``)."""

    doc_id: str
    matched_words: int
    verified: bool = True

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

    @property
    def reuse_counts(self) -> list[tuple[int, str]]:
        """(number, kind) of its own counted passages per kind of reuse, the kinds it has only,
        in :data:`coderiv.overlap.align.REUSE_KINDS` order."""
        counted = [p.reuse for p in self.own_passages if p.excluded is None]
        return [(counted.count(kind), kind) for kind in REUSE_KINDS if kind in counted]

    def to_dict(self, include_texts: bool = False) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "text"}
        data["passages"] = [p.to_dict() for p in self.passages]
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
    how the candidates were found (method names). ``words_by_reuse``: the covered words by the
    kind of the passage they are credited through (verbatim, edited, paraphrased, summarised;
    they add up to ``covered_words``)."""

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
    words_by_reuse: dict[str, int] = field(default_factory=dict)

    @property
    def excluded_share(self) -> float:
        """Share of the query's words its exclusions left out (0-1)."""
        return sum(self.excluded_words.values()) / self.total_words if self.total_words else 0.0

    @property
    def warning(self) -> str | None:
        """A warning when exclusions leave out more than :data:`EXCLUSION_WARNING_SHARE` of the words."""
        if self.excluded_share <= EXCLUSION_WARNING_SHARE:
            return None
        return (
            f"exclusions leave out {100 * self.excluded_share:.1f}% of the words (more than "
            f"{100 * EXCLUSION_WARNING_SHARE:.0f}%): check the excluded text below, which stays highlighted in grey"
        )

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
            "words_by_reuse": self.words_by_reuse,
            "sources": [s.to_dict(include_texts) for s in self.sources],
            "exclusions": [e.to_dict() for e in self.exclusions],
            "options": self.options.to_dict(),
            "index": self.index,
            "documents": self.documents,
            "candidates": self.candidates,
            "searches": self.searches,
            "note": self.note,
            "warning": self.warning,
        }
        if include_texts:
            data["query_text"] = self.query_text
        return data
