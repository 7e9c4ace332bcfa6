"""One check of a document against the collection, as the web page and the JSON API run it:
rank the collection (SPEC §3, absolute percentages; fast, shown at once), then build the
evidence report (:func:`coderiv.report.build_report`: candidates aligned with the query,
exclusions, each source's share). An index without the chunk store the report's containment
search needs falls back to verifying the ranked matches alone (:func:`verify`), with a note."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from coderiv.errors import CoderivError, InputError
from coderiv.index.builder.stores import REPORT_READY_HINT
from coderiv.overlap.matching import DEFAULT_THRESHOLD, normalize, self_covered
from coderiv.overlap.verify import VerifiedMatch, verify_texts
from coderiv.ranking.containment import chunk_store_spec
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES
from coderiv.ranking.results import QueryResult
from coderiv.report import Report, ReportOptions, build_report
from coderiv.text.reading import QueryDocument
from coderiv.text.sources import DocumentTexts
from coderiv.web.snapshot import Snapshot
from coderiv.web.views import DocumentNotFound

#: Most matches (and report candidates per search) a check may ask for.
MAX_TOP = 100

#: ``progress(done, total)``: candidates verified so far, of how many.
ProgressFn = Callable[[int, int], None]
#: ``stage(what)``: what the report is doing now, in words.
StageFn = Callable[[str], None]


class StagedTexts(DocumentTexts):
    """The indexed collection's texts, saying when the report reads its candidates: it finds
    them first (containment and ranking), reads them once, then verifies them and computes the
    shares; a stage line is all the progress a single library call can give."""

    def __init__(self, source: str | None, stage: StageFn) -> None:
        super().__init__(source)
        self._stage = stage

    def get(self, doc_ids: Iterable[str]) -> dict[str, str]:
        ids = list(doc_ids)
        self._stage(f"reading {len(ids)} candidate document{'' if len(ids) == 1 else 's'}")
        texts = super().get(ids)
        self._stage(f"aligning {len(ids)} candidate{'' if len(ids) == 1 else 's'} with the document")
        return texts


@dataclass(frozen=True)
class CheckOptions:
    """What the user chose: the ranking measure, how many matches, whether to verify them (API),
    and the report's exclusions (see :class:`coderiv.report.ReportOptions`)."""

    measure: str = DEFAULT_MEASURE
    top: int = 10
    verify: bool = True
    exclude_quotes: bool = True
    exclude_bibliography: bool = True
    min_words: int = ReportOptions.min_words
    common_docs: int | None = None
    group_versions: bool = True
    templates: tuple[tuple[str, str], ...] = ()
    exclude_docs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        MEASURES.get(self.measure)  # one-line error naming the choices
        if not 1 <= self.top <= MAX_TOP:
            raise InputError(f"top must be between 1 and {MAX_TOP} (got {self.top})")
        if self.min_words < 0:
            raise InputError(f"min_words must be 0 or more (got {self.min_words})")
        if self.common_docs is not None and self.common_docs < 1:
            raise InputError(f"common must be at least 1 document (got {self.common_docs})")

    def report_options(self) -> ReportOptions:
        return ReportOptions(
            top=self.top, measure=self.measure, min_words=self.min_words, exclude_quotes=self.exclude_quotes,
            exclude_bibliography=self.exclude_bibliography, templates=self.templates, common_docs=self.common_docs,
            group_versions=self.group_versions, exclude_docs=self.exclude_docs,
        )


@dataclass
class CheckOutcome:
    """A ranked result; then either the evidence report, or (fallback, and the API's ``verify``)
    each match's aligned passages and verified percentage."""

    document: QueryDocument
    generation: str
    result: QueryResult
    verified: list[VerifiedMatch] | None = None
    verify_note: str | None = None
    report: Report | None = None
    report_note: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        record = self.result.to_dict()
        record["generation"] = self.generation
        record["lossy"] = self.document.lossy
        record["notes"] = self.notes
        if self.verified is not None or self.verify_note is not None:
            record["verify_note"] = self.verify_note
        if self.verified is not None:
            record["matches"] = [v.to_dict() for v in self.verified]
        if self.report is not None or self.report_note is not None:
            record["report"] = self.report.to_dict() if self.report is not None else None
            record["report_note"] = self.report_note
        return record


def indexed_document(snapshot: Snapshot, doc_id: str) -> QueryDocument:
    """A document of the index as the query: looked up by id (never opened as a path from the
    request), its visible text re-read from the indexed collection."""
    if snapshot.facts(doc_id) is None:
        raise DocumentNotFound(f"no document {doc_id!r} in the index")
    return QueryDocument(doc_id, snapshot.index.source_texts().get([doc_id])[doc_id], False)


def rank(snapshot: Snapshot, document: QueryDocument, options: CheckOptions) -> CheckOutcome:
    """Rank the collection against ``document`` (a document without words is an error)."""
    searcher = snapshot.searcher(options.measure)
    prepared = searcher.prepare(document.text)
    if prepared.length == 0:
        raise InputError(f"{document.label} has no words after analysis ({snapshot.index.settings.describe()})")
    result = searcher.rank(prepared, options.top, label=document.label)
    notes = []
    if document.lossy:
        notes.append(f"{document.label}: undecodable bytes were replaced (not valid UTF-8)")
    if result.note:
        notes.append(result.note)
    return CheckOutcome(document, snapshot.generation, result, notes=notes)


def verify(
    snapshot: Snapshot, outcome: CheckOutcome, progress: ProgressFn | None = None, threshold: int = DEFAULT_THRESHOLD
) -> CheckOutcome:
    """Re-check every match of ``outcome`` with aligned passages, one candidate at a time.

    A collection that cannot be re-read (moved since indexing) leaves the ranking as it is, with
    a note saying why nothing was verified."""
    matches = outcome.result.matches
    query = normalize(outcome.document.text)
    if self_covered(query, threshold) == 0:
        outcome.verify_note = f"the query has no passage of {threshold}+ characters: every verified percentage is 0"
    verified = []
    try:
        texts = snapshot.index.source_texts()
        for done, match in enumerate(matches):
            if progress is not None:
                progress(done, len(matches))
            percent, passages = verify_texts(query, texts.get([match.doc_id]), threshold)[match.doc_id]
            verified.append(VerifiedMatch(match, percent, passages))
    except CoderivError as exc:
        outcome.verify_note = f"not verified: {exc}"
        return outcome
    if progress is not None:
        progress(len(matches), len(matches))
    outcome.verified = verified
    return outcome


def has_report_store(snapshot: Snapshot) -> bool:
    """Whether the index holds the chunk store the report's containment search reads."""
    return chunk_store_spec().name in snapshot.specs


def report(
    snapshot: Snapshot, outcome: CheckOutcome, options: CheckOptions, progress: ProgressFn | None = None,
    stage: StageFn | None = None,
) -> CheckOutcome:
    """Build the evidence report of ``outcome``'s document; without the chunk store (the server
    never writes the index), verify the ranked matches instead and say how to get the report."""
    if not has_report_store(snapshot):
        outcome.report_note = (
            f"no evidence report: the index has no chunk store; {REPORT_READY_HINT} (or 'coderiv report FILE' "
            "adds it once). The matches below are verified with aligned passages instead."
        )
        return verify(snapshot, outcome, progress)
    document = outcome.document
    texts = StagedTexts(snapshot.index.source, stage) if stage is not None else snapshot.index.source_texts()
    outcome.report = build_report(snapshot.index, document.text, document.label, options.report_options(), texts)
    return outcome


def run_check(
    snapshot: Snapshot, document: QueryDocument, options: CheckOptions, progress: ProgressFn | None = None
) -> CheckOutcome:
    """Rank, then verify when ``options.verify`` asks for it (the API's ``/api/check``)."""
    outcome = rank(snapshot, document, options)
    return verify(snapshot, outcome, progress) if options.verify else outcome


def run_report(snapshot: Snapshot, document: QueryDocument, options: CheckOptions) -> Report:
    """The evidence report alone (the API's ``/api/report``); an index without the chunk store
    is a one-line error."""
    if not has_report_store(snapshot):
        raise CoderivError(
            f"the index has no chunk store for the report; {REPORT_READY_HINT} (or 'coderiv report FILE' adds it once)")
    return build_report(snapshot.index, document.text, document.label, options.report_options(), snapshot.index.source_texts())
