"""Verifying ranked or fingerprint candidates with exact passages (``coderiv query --verify``).

Ranking and hashing say which documents look like coderivatives of the query; term statistics
and hash collisions can make an unrelated document look close. Verification re-reads each of
the top candidates from the indexed collection and computes the exact passages (matching
statistics, :mod:`coderiv.overlap.matching`) it shares with the query. Its **verified percentage** is
the share of the query covered by those passages, by the self-score rule (the query against
itself is 100%): a false match shares no long passage and falls to 0%.

The family ``verified:BASE[,top=K]`` registers the combination with ``coderiv evaluate``: the
top K documents (default 20) of any evaluable method BASE (a ranking measure, or a fingerprint
method such as ``fingerprint:anchor:g=4``) get their verified percentages, every other document
0%, so its HFM can be set beside BASE's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coderiv.errors import CoderivError, InputError, UnknownNameError
from coderiv.evaluation.evaluate import PercentagesFn, get_method, register_family
from coderiv.index.index import Index
from coderiv.overlap.matching import DEFAULT_THRESHOLD, NormalizedText, Passage, coverage_percent, normalize, shared_passages
from coderiv.ranking.kernel import top_k
from coderiv.ranking.measures import DEFAULT_MEASURE
from coderiv.ranking.results import Match, QueryResult
from coderiv.text.collection import is_archive, iter_archive, read_member
from coderiv.text.extract import visible_text

#: Candidates re-checked per query in ``verified:`` evaluations.
DEFAULT_VERIFY_TOP = 20


class DocumentTexts:
    """Visible texts of an indexed collection's documents, read on demand and cached.

    A folder is read file by file; an archive is read in one pass for all the ids asked for
    at once (``preload=True`` reads the whole archive on first use, for evaluations).
    """

    def __init__(self, source: str | os.PathLike[str] | None, preload: bool = False) -> None:
        if source is None:
            raise CoderivError("the index does not record the folder or archive it was built from; cannot verify")
        self.source = Path(source)
        if not self.source.exists():
            raise InputError(f"the indexed collection {self.source} is gone; cannot re-read documents to verify")
        self.archive = is_archive(self.source)
        self.preload = preload
        self._texts: dict[str, str] = {}

    def get(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """The texts of ``doc_ids`` (an error names a document that is missing)."""
        doc_ids = list(doc_ids)
        wanted = [d for d in doc_ids if d not in self._texts]
        if wanted and self.archive:
            pending = set(wanted)
            for doc in iter_archive(self.source):
                if self.preload or doc.doc_id in pending:
                    self._texts.setdefault(doc.doc_id, visible_text(doc.data, doc.doc_id).text)
                    pending.discard(doc.doc_id)
                    if not pending and not self.preload:
                        break
            self.preload = False
        elif wanted:
            for doc_id in wanted:
                self._texts[doc_id] = visible_text(read_member(self.source, doc_id), doc_id).text
        missing = [d for d in doc_ids if d not in self._texts]
        if missing:
            raise InputError(f"{missing[0]} is no longer in {self.source}; update the index")
        return {d: self._texts[d] for d in doc_ids}


@dataclass(frozen=True)
class VerifiedMatch:
    """A ranked match with its exact shared passages (a = query, b = document) and the share of
    the query they cover."""

    match: Match
    verified: float
    passages: list[Passage] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.match.to_dict(), "verified": self.verified, "passages": [p.to_dict() for p in self.passages]}


def verify_texts(
    query: NormalizedText, texts: dict[str, str], threshold: int = DEFAULT_THRESHOLD
) -> dict[str, tuple[float, list[Passage]]]:
    """{doc id: (verified percentage, passages)} of each candidate text against the query."""
    out = {}
    for doc_id, text in texts.items():
        passages = shared_passages(query, normalize(text), threshold)
        out[doc_id] = (coverage_percent(query, passages, "a", threshold), passages)
    return out


def verify_result(
    result: QueryResult, query_text: str, texts: DocumentTexts, threshold: int = DEFAULT_THRESHOLD
) -> list[VerifiedMatch]:
    """Re-check every match of ``result``: its passages shared with the query and verified %."""
    query = normalize(query_text)
    checked = verify_texts(query, texts.get([m.doc_id for m in result.matches]), threshold)
    return [VerifiedMatch(m, *checked[m.doc_id]) for m in result.matches]


def _parse(params: str) -> tuple[str, int]:
    """``BASE[,top=K]`` -> (base method name, K); BASE defaults to the default measure."""
    base, top = params.strip(), DEFAULT_VERIFY_TOP
    head, _, last = base.rpartition(",")
    if last.strip().startswith("top="):
        value = last.strip()[4:]
        if not value.isdigit() or int(value) < 1:
            raise UnknownNameError(f"verified: top must be a positive integer (got {value!r})")
        base, top = head.strip(), int(value)
    base = base or DEFAULT_MEASURE
    if base.startswith("verified:"):
        raise UnknownNameError("verified: cannot verify a verified method")
    get_method(base)  # refuse an unknown base method before any index is opened
    return base, top


def verified_method(params: str) -> Any:
    """Evaluation family ``verified:BASE[,top=K]``: any evaluable method (a measure, or e.g.
    ``fingerprint:anchor:g=4``), its top K re-checked by exact passages (module docstring)."""
    base, top = _parse(params)

    def factory(index: Index) -> PercentagesFn:
        base_percentages = get_method(base)(index)
        texts = DocumentTexts(index.source, preload=True)

        def percentages(doc_id: str) -> np.ndarray:
            ranked = top_k(np.asarray(base_percentages(doc_id), np.float64), top)
            ids = [index.doc_ids[d] for d in ranked.tolist()]
            checked = verify_texts(normalize(texts.get([doc_id])[doc_id]), texts.get(ids))
            out = np.zeros(index.n_docs)
            out[ranked] = [checked[i][0] for i in ids]
            return out

        return percentages

    return factory


register_family("verified", verified_method)
