"""Passage matching over 50-word windows (paper 004, "Further experiments"; SPEC §7).

"Passage" here is the SPEC's word window, ranked by a measure; the exact character spans that
two texts share are :class:`coderiv.overlap.matching.Passage` (matching statistics).

Documents are split into passages of 50 words overlapping by 25. Every passage of the query is
ranked against every passage of the collection with a ranking measure of
:mod:`coderiv.ranking.measures` (statistics N and f_t counted over passages, percentages by the
self-score rule); a query passage *matches* a document when one of the document's passages
reaches ``threshold`` percent. A document's passage score is the number of query passages it
matches, and its percentage is that number over the query's passage count: a copy of the query
scores 100%, and a document holding one copied paragraph of a long query scores the share of
the query that paragraph spans, where a whole-document measure would dilute it.

The paper counts "chunks that had high similarity in each pair of documents"; counting query
passages rather than (query passage, document passage) pairs keeps the score ideal (a document
that repeats a passage cannot pass 100%).

:class:`PassageIndex` holds a collection's passages in one postings store and streams the query
passages through it; ``passages[:MEASURE]`` makes it an evaluation method over a whole index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from coderiv.index.format.postings import from_forward
from coderiv.index.index import Index
from coderiv.keys.kinds import counted_keys, term_key
from coderiv.ranking.kernel import document_scores, store_contributions
from coderiv.ranking.measures import DEFAULT_MEASURE, get_measure, self_score
from coderiv.ranking.percent import percent
from coderiv.ranking.results import NO_WORDS, QueryResult
from coderiv.weights import posting_norms

PASSAGE_WORDS = 50
PASSAGE_STEP = 25
#: A query passage matches a document passage at this percentage or more.
DEFAULT_PASSAGE_THRESHOLD = 50.0


def split_passages(terms: Sequence[str], size: int = PASSAGE_WORDS, step: int = PASSAGE_STEP) -> list[list[str]]:
    """Passages of ``size`` terms starting every ``step`` terms; the last reaches the end.

    A document of at most ``size`` terms is one passage; an empty one has none.
    """
    if size < 1 or not 1 <= step <= size:
        raise ValueError(f"need size ≥ 1 and 1 ≤ step ≤ size (got size={size}, step={step})")
    terms = list(terms)
    if not terms:
        return []
    starts = list(range(0, max(len(terms) - size, 0) + 1, step))
    if starts[-1] + size < len(terms):
        starts.append(len(terms) - size)
    return [terms[s : s + size] for s in starts]


@dataclass(frozen=True)
class PassageScore:
    """How many of the query's passages a document matches, and the percentage that makes."""

    doc: int
    matched: int
    query_passages: int

    @property
    def percent(self) -> float:
        return float(percent(self.matched, self.query_passages))


class PassageIndex:
    """The passages of a collection of documents (term lists) in one in-memory postings store,
    with the per-passage statistics the measures need (N, f_t, lengths, cosine norms)."""

    def __init__(self, documents: Sequence[Sequence[str]], size: int = PASSAGE_WORDS, step: int = PASSAGE_STEP) -> None:
        self.size, self.step, self.n_docs = size, step, len(documents)
        pieces, owners = [], []
        for number, terms in enumerate(documents):
            for passage in split_passages(terms, size, step):
                pieces.append(counted_keys(Counter(passage), term_key))
                owners.append(number)
        self.owners = np.asarray(owners, np.int64)
        self.n = len(pieces)
        self.store = from_forward(pieces)
        self.f_t = self.store.doc_freqs.astype(np.float64)
        self.lengths = np.array([int(v.sum()) for _, v in pieces], np.float64)
        docs, vals, owner = self.store.gather(np.arange(self.store.n_keys))
        self.norms = posting_norms(docs.astype(np.int64), np.asarray(vals), self.f_t[owner], self.n)

    def rows(self, query_terms: Sequence[str], measure: str = DEFAULT_MEASURE) -> Iterator[np.ndarray]:
        """For each passage of the query, its percentage against every passage of the collection."""
        m = get_measure(measure)
        for passage in split_passages(query_terms, self.size, self.step):
            keys, f_qt = counted_keys(Counter(passage), term_key)
            pos = self.store.lookup(keys)
            present = pos >= 0
            pos, f_qt = pos[present], f_qt[present].astype(np.float64)
            if len(pos) == 0:
                yield np.zeros(self.n)
                continue
            f_t = self.f_t[pos]
            own = self_score(m, f_qt, f_t, self.n, len(passage))
            docs, contributions = store_contributions(self.store, pos, f_qt, f_t, self.n, m)
            row = document_scores(m, docs.astype(np.int64), contributions, len(passage), self.lengths, self.norms)
            yield percent(row, own)

    def matched(
        self, query_terms: Sequence[str], measure: str = DEFAULT_MEASURE, threshold: float = DEFAULT_PASSAGE_THRESHOLD
    ) -> tuple[np.ndarray, int]:
        """Per document, how many query passages it matches; and the query's passage count."""
        counts = np.zeros(self.n_docs, np.int64)
        n_query = 0
        for row in self.rows(query_terms, measure):
            n_query += 1
            counts[np.unique(self.owners[row >= threshold])] += 1
        return counts, n_query

    def percentages(
        self, query_terms: Sequence[str], measure: str = DEFAULT_MEASURE, threshold: float = DEFAULT_PASSAGE_THRESHOLD
    ) -> np.ndarray:
        """Every document's passage percentage: 100 · matched query passages / query passages."""
        counts, n_query = self.matched(query_terms, measure, threshold)
        return percent(counts.astype(np.float64), float(n_query))


def passage_scores(
    query_terms: Sequence[str],
    documents: Sequence[Sequence[str]],
    measure: str = DEFAULT_MEASURE,
    threshold: float = DEFAULT_PASSAGE_THRESHOLD,
    size: int = PASSAGE_WORDS,
    step: int = PASSAGE_STEP,
) -> list[PassageScore]:
    """Each document's passage score against the query (documents given as term lists).

    The query's own passages join the passage statistics (N, f_t), as they do when the query is
    an indexed document (:func:`passages_method`), and its matches with itself are not counted.
    Without them a query passage's self-score would sum only the terms the *other* documents
    happen to hold: against one unrelated document, a passage sharing two common words with it
    had a self-score made of those two words alone, and any passage holding both "matched" at
    100% (``compare -m passages`` gave 81% between unrelated files).
    """
    counts, n_query = PassageIndex([query_terms, *documents], size, step).matched(query_terms, measure, threshold)
    return [PassageScore(d, int(counts[d + 1]), n_query) for d in range(len(documents))]


@dataclass(frozen=True)
class PreparedPassages:
    """A query's terms, to be split into passages; ``indexed`` when the query is a document of
    the collection (its passages are then already in the statistics)."""

    terms: list[str]
    indexed: bool = True

    @property
    def length(self) -> int:
        return len(self.terms)


class PassageSearcher:
    """Passage matching over a whole indexed collection as a
    :class:`~coderiv.ranking.protocol.DocumentSearcher` (method ``passages[:MEASURE]``): every
    document's passage percentage against the query (SPEC §7). The collection's passages are
    built once, from its source re-read and analysed as the index was."""

    unit = "passages"

    def __init__(
        self, index: Index, measure: str = DEFAULT_MEASURE, threshold: float = DEFAULT_PASSAGE_THRESHOLD
    ) -> None:
        get_measure(measure)  # refuse an unknown measure before reading the collection
        self.index, self.measure, self.threshold = index, measure, threshold
        self.method = "passages" if measure == DEFAULT_MEASURE else f"passages:{measure}"
        texts = index.source_texts(preload=True).get(index.doc_ids)
        self.terms = [index.analyzer.terms(texts[doc_id]) for doc_id in index.doc_ids]
        self.passages = PassageIndex(self.terms)

    def prepare(self, text: str) -> PreparedPassages:
        return PreparedPassages(self.index.analyzer.terms(text), indexed=False)

    def prepare_doc(self, doc_id: str) -> PreparedPassages:
        return PreparedPassages(self.terms[self.index.number(doc_id)])

    def matched(self, prepared: PreparedPassages) -> tuple[np.ndarray, int]:
        """Per document, how many query passages it matches; and the query's passage count.

        A query from outside the collection joins the passage statistics, as in
        :func:`passage_scores` (its own matches not counted): without it, a query passage's
        self-score would sum only the words the collection happens to hold. That needs the
        statistics built again with the query's passages, once per such query."""
        if prepared.indexed:
            return self.passages.matched(prepared.terms, self.measure, self.threshold)
        joined = PassageIndex([*self.terms, prepared.terms], self.passages.size, self.passages.step)
        counts, n_query = joined.matched(prepared.terms, self.measure, self.threshold)
        return counts[: len(self.terms)], n_query

    def percentages(self, prepared: PreparedPassages) -> np.ndarray:
        counts, n_query = self.matched(prepared)
        return percent(counts.astype(np.float64), float(n_query))

    def rank(
        self, prepared: PreparedPassages, top: int | None = 10, *, label: str = "", min_percent: float = 0.0
    ) -> QueryResult:
        """Documents by how many query passages they match; the score is that count."""
        counts, n_query = self.matched(prepared)
        return QueryResult.ranked(
            counts.astype(np.float64), float(n_query), self.index.doc_ids, top, min_percent, label=label, method=self.method,
            query_length=prepared.length, matched=int(np.count_nonzero(counts)) if n_query else 0, query_terms=n_query,
            empty=NO_WORDS,
        )
