"""Passage matching (paper 004, "Further experiments"; SPEC §7).

Documents are split into passages of 50 words overlapping by 25. Every passage of the query is
ranked against every passage of the collection with a ranking measure of
:mod:`coderiv.scoring` (statistics N and f_t counted over passages, percentages by the
self-score rule); a query passage *matches* a document when one of the document's passages
reaches ``threshold`` percent. A document's passage score is the number of query passages it
matches, and its percentage is that number over the query's passage count: a copy of the query
scores 100%, and a document holding one copied paragraph of a long query scores the share of
the query that paragraph spans, where a whole-document measure would dilute it.

The paper counts "chunks that had high similarity in each pair of documents"; counting query
passages rather than (query passage, document passage) pairs keeps the score ideal (a document
that repeats a passage cannot pass 100%).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .keys import counted_keys, term_key
from .postings import from_forward
from .query import percent
from .scoring import DEFAULT_MEASURE, document_norms, get_measure, self_score

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


def passage_matrix(
    query_terms: Sequence[str],
    documents: Sequence[Sequence[str]],
    measure: str = DEFAULT_MEASURE,
    size: int = PASSAGE_WORDS,
    step: int = PASSAGE_STEP,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentages of every query passage (rows) against every collection passage (columns),
    and the document number of each column."""
    m = get_measure(measure)
    pieces, owners = [], []
    for number, terms in enumerate(documents):
        for passage in split_passages(terms, size, step):
            pieces.append(counted_keys(Counter(passage), term_key))
            owners.append(number)
    queries = split_passages(query_terms, size, step)
    result = np.zeros((len(queries), len(pieces)))
    if not pieces or not queries:
        return result, np.asarray(owners, np.int64)
    store = from_forward(pieces)
    n = len(pieces)
    f_t_all = store.doc_freqs.astype(np.float64)
    docs, vals, owner = store.gather(np.arange(len(store.keys)))
    norms = document_norms(docs.astype(np.int64), np.asarray(vals), f_t_all[owner], n)
    lengths = np.array([int(v.sum()) for _, v in pieces], np.float64)
    for row, passage in enumerate(queries):
        keys, f_qt = counted_keys(Counter(passage), term_key)
        pos = store.lookup(keys)
        present = pos >= 0
        pos, f_qt = pos[present], f_qt[present].astype(np.float64)
        if len(pos) == 0:
            continue
        own = self_score(m, f_qt, f_t_all[pos], n, len(passage))
        p_docs, p_vals, p_owner = store.gather(pos)
        contributions = m.term(p_vals.astype(np.float64), f_qt[p_owner], f_t_all[pos][p_owner], float(n))
        sums = np.bincount(p_docs.astype(np.int64), weights=contributions, minlength=n)
        result[row] = percent(sums * m.doc(lengths, float(len(passage)), norms), own)
    return result, np.asarray(owners, np.int64)


def passage_scores(
    query_terms: Sequence[str],
    documents: Sequence[Sequence[str]],
    measure: str = DEFAULT_MEASURE,
    threshold: float = DEFAULT_PASSAGE_THRESHOLD,
    size: int = PASSAGE_WORDS,
    step: int = PASSAGE_STEP,
) -> list[PassageScore]:
    """Each document's passage score against the query (documents given as term lists)."""
    matrix, owners = passage_matrix(query_terms, documents, measure, size, step)
    n_query = matrix.shape[0]
    hits = np.zeros((n_query, len(documents)), bool)
    if matrix.size:
        rows, cols = np.nonzero(matrix >= threshold)
        hits[rows, owners[cols]] = True
    matched = hits.sum(axis=0)
    return [PassageScore(d, int(matched[d]), n_query) for d in range(len(documents))]
