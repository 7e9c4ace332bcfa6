"""One check of a document against the collection, as the web page and the JSON API run it:
rank the collection (SPEC §3, absolute percentages), then verify the top matches with exact
passages (matching statistics, SPEC §6), reporting progress as each candidate is verified."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coderiv.errors import CoderivError, InputError
from coderiv.overlap.matching import DEFAULT_THRESHOLD, normalize, self_covered
from coderiv.overlap.verify import DocumentTexts, VerifiedMatch, verify_texts
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES
from coderiv.ranking.results import QueryResult
from coderiv.text.reading import QueryDocument
from coderiv.web.snapshot import Snapshot

#: Most matches a check may ask for (a page of results, not an export of the collection).
MAX_TOP = 100

#: ``progress(done, total)``: candidates verified so far, of how many.
ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class CheckOptions:
    """What the user chose: the ranking measure, how many matches, and whether to verify them."""

    measure: str = DEFAULT_MEASURE
    top: int = 10
    verify: bool = True

    def __post_init__(self) -> None:
        MEASURES.get(self.measure)  # one-line error naming the choices
        if not 1 <= self.top <= MAX_TOP:
            raise InputError(f"top must be between 1 and {MAX_TOP} (got {self.top})")


@dataclass
class CheckOutcome:
    """A ranked result, and (once verified) each match's exact passages and verified percentage."""

    document: QueryDocument
    generation: str
    result: QueryResult
    verified: list[VerifiedMatch] | None = None
    verify_note: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        record = self.result.to_dict()
        record["generation"] = self.generation
        record["lossy"] = self.document.lossy
        record["notes"] = self.notes
        record["verify_note"] = self.verify_note
        if self.verified is not None:
            record["matches"] = [v.to_dict() for v in self.verified]
        return record


def rank(snapshot: Snapshot, document: QueryDocument, options: CheckOptions) -> CheckOutcome:
    """Rank the collection against ``document`` (a document without words is an error)."""
    prepared = snapshot.searcher.prepare(document.text)
    if prepared.length == 0:
        raise InputError(f"{document.label} has no words after analysis ({snapshot.index.settings.describe()})")
    result = snapshot.searcher.rank(prepared, options.measure, options.top, document.label)
    notes = []
    if document.lossy:
        notes.append(f"{document.label}: undecodable bytes were replaced (not valid UTF-8)")
    if result.note:
        notes.append(result.note)
    return CheckOutcome(document, snapshot.generation, result, notes=notes)


def verify(
    snapshot: Snapshot, outcome: CheckOutcome, progress: ProgressFn | None = None, threshold: int = DEFAULT_THRESHOLD
) -> CheckOutcome:
    """Re-check every match of ``outcome`` with exact passages, one candidate at a time.

    A collection that cannot be re-read (moved since indexing) leaves the ranking as it is, with
    a note saying why nothing was verified."""
    matches = outcome.result.matches
    query = normalize(outcome.document.text)
    if self_covered(query, threshold) == 0:
        outcome.verify_note = f"the query has no passage of {threshold}+ characters: every verified percentage is 0"
    try:
        texts = DocumentTexts(snapshot.index.source)
    except CoderivError as exc:
        outcome.verify_note = f"not verified: {exc}"
        return outcome
    verified = []
    for done, match in enumerate(matches):
        if progress is not None:
            progress(done, len(matches))
        try:
            text = texts.get([match.doc_id])
        except CoderivError as exc:
            outcome.verify_note = f"not verified: {exc}"
            return outcome
        percent, passages = verify_texts(query, text, threshold)[match.doc_id]
        verified.append(VerifiedMatch(match, percent, passages))
    if progress is not None:
        progress(len(matches), len(matches))
    outcome.verified = verified
    return outcome


def run_check(
    snapshot: Snapshot, document: QueryDocument, options: CheckOptions, progress: ProgressFn | None = None
) -> CheckOutcome:
    """Rank, then verify when ``options.verify`` asks for it."""
    outcome = rank(snapshot, document, options)
    return verify(snapshot, outcome, progress) if options.verify else outcome
