"""Verifying ranked or fingerprint candidates with aligned passages (``coderiv query --verify``).

Ranking and hashing say which documents look like coderivatives of the query; term statistics
and hash collisions can make an unrelated document look close. Verification re-reads each of
the top candidates from the indexed collection and aligns it with the query
(:mod:`coderiv.overlap.align`: passages copied verbatim or with words changed, issue 24). Its
**verified percentage** is the share of the query's words inside those passages (the query
against itself is 100%): a false match shares no passage and falls to 0%, and an edited copy is
no longer cut into fragments that miss its changed words. (Before issue 24 it was the share of
the query's characters inside exact passages of 60+ characters; ``threshold`` still sets the
shortest passage, as words: ``threshold / 6``, the mean English word with its space.)

:class:`VerifiedSearcher` makes the combination evaluable as ``verified:BASE[,top=K]`` (see
:mod:`coderiv.evaluation.methods`): the
top K documents (default 20) of any evaluable method BASE (a ranking measure, or a fingerprint
method such as ``fingerprint:anchor:g=4``) get their verified percentages, every other document
0%, so its HFM can be set beside BASE's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coderiv.index.index import Index
from coderiv.output import json_percent
from coderiv.overlap.align import AlignSettings, align_sources
from coderiv.overlap.matching import (
    DEFAULT_THRESHOLD,
    NormalizedText,
    Passage,
    normalize,
    self_covered,
)
from coderiv.ranking.kernel import top_k
from coderiv.ranking.percent import meets_threshold
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.results import Match, QueryResult
from coderiv.text.exclusions import word_bounds
from coderiv.text.sources import DocumentTexts

#: Candidates re-checked per query in ``verified:`` evaluations.
DEFAULT_VERIFY_TOP = 20


@dataclass(frozen=True)
class VerifiedMatch:
    """A ranked match with its exact shared passages (a = query, b = document) and the share of
    the query they cover."""

    match: Match
    verified: float
    passages: list[Passage] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.match.to_dict(), "verified": json_percent(self.verified), "passages": [p.to_dict() for p in self.passages]}


#: Characters of the mean word with the space after it: ``threshold`` characters -> words.
CHARS_PER_WORD = 6


def verify_texts(
    query: NormalizedText, texts: dict[str, str], threshold: int = DEFAULT_THRESHOLD
) -> dict[str, tuple[float, list[Passage]]]:
    """{doc id: (verified percentage, passages)} of each candidate text against the query: the
    share of the query's words inside its aligned passages of at least ``threshold / 6`` words;
    each passage as a :class:`Passage` of raw characters (``length``: query characters)."""
    settings = AlignSettings(min_words=max(3, threshold // CHARS_PER_WORD))
    raw = query.original
    total = len(word_bounds(raw)[0])
    aligned = align_sources(raw, texts, settings)
    out = {}
    for doc_id, found in aligned.items():
        passages = [Passage(p.a_start, p.a_end, p.b_start, p.b_end, p.a_end - p.a_start, raw[p.a_start : p.a_end]) for p in found]
        covered = sum(p.a_words for p in found)
        out[doc_id] = (100.0 * covered / total if total else 0.0, passages)
    return out


def verify_result(
    result: QueryResult, query_text: str, texts: DocumentTexts, threshold: int = DEFAULT_THRESHOLD
) -> list[VerifiedMatch]:
    """Re-check every match of ``result``: its passages shared with the query and verified %."""
    query = normalize(query_text)
    checked = verify_texts(query, texts.get([m.doc_id for m in result.matches]), threshold)
    return [VerifiedMatch(m, *checked[m.doc_id]) for m in result.matches]


@dataclass
class VerifiedResult:
    """One query's ranked result with every match re-checked, and a note when every verified
    percentage must be 0 (the query has no passage long enough to count)."""

    result: QueryResult
    matches: list[VerifiedMatch]
    note: str | None


def verify_results(
    results: list[QueryResult], query_texts: list[str | None], texts: DocumentTexts, threshold: int = DEFAULT_THRESHOLD
) -> list[VerifiedResult]:
    """Verify every result of a query run; a query text of None is the indexed document named by
    the result's label (``query --doc``). The documents needed are read in one pass."""
    needed = {m.doc_id for r in results for m in r.matches}
    needed.update(r.query for r, q in zip(results, query_texts) if q is None)
    texts.get(sorted(needed))
    out = []
    for result, text in zip(results, query_texts):
        text = text if text is not None else texts.text(result.query)
        short = self_covered(normalize(text), threshold) == 0
        note = f"the query has no passage of {threshold}+ characters: every verified percentage is 0" if short else None
        out.append(VerifiedResult(result, verify_result(result, text, texts, threshold), note))
    return out


@dataclass(frozen=True)
class PreparedVerified:
    """A query's text (for exact passages) beside the base searcher's prepared query."""

    text: str
    base: Any

    @property
    def length(self) -> int:
        return int(self.base.length)


class VerifiedSearcher:
    """Any searcher's top K re-checked by exact passages, as a
    :class:`~coderiv.ranking.protocol.DocumentSearcher` (method ``verified:BASE,top=K``): the top
    K documents of the base method get their verified percentages, every other document 0%."""

    unit = "candidates"

    def __init__(self, index: Index, base: DocumentSearcher[Any], top: int = DEFAULT_VERIFY_TOP) -> None:
        self.index, self.base, self.top = index, base, top
        self.method = f"verified:{base.method},top={top}"
        self.texts = index.source_texts(preload=True)

    def prepare(self, text: str) -> PreparedVerified:
        return PreparedVerified(text, self.base.prepare(text))

    def prepare_doc(self, doc_id: str) -> PreparedVerified:
        return PreparedVerified(self.texts.text(doc_id), self.base.prepare_doc(doc_id))

    def percentages(self, prepared: PreparedVerified) -> np.ndarray:
        ranked = top_k(np.asarray(self.base.percentages(prepared.base), np.float64), self.top)
        ids = [self.index.doc_ids[d] for d in ranked.tolist()]
        checked = verify_texts(normalize(prepared.text), self.texts.get(ids))
        out = np.zeros(self.index.n_docs)
        out[ranked] = [checked[i][0] for i in ids]
        return out

    def rank(
        self, prepared: PreparedVerified, top: int | None = 10, *, label: str = "", min_percent: float = 0.0
    ) -> QueryResult:
        """The verified candidates by verified percentage (the score is that percentage)."""
        pct = self.percentages(prepared)
        pct = np.where(meets_threshold(pct, min_percent), pct, 0.0)
        ranked = top_k(pct, top)
        matches = [
            Match(rank=i + 1, percent=float(pct[d]), score=float(pct[d]), doc_id=self.index.doc_ids[d])
            for i, d in enumerate(ranked.tolist())
        ]
        return QueryResult(label, self.method, 100.0, prepared.length, len(matches), self.top, matches)
