"""Seeds that survive rewording: pairs of sentences, one of each text, similar in their
normalised words (Sanchez-Perez, Sidorov & Gelbukh, "A Winning Approach to Text Alignment for
Text Reuse Detection at PAN 2014", CLEF 2014 Working Notes, CEUR-WS Vol-1180: the PAN 2014
winner's seeding).

Each sentence (:mod:`.sentences`) is a vector of its terms (:mod:`.terms`: Snowball stems,
stopwords out) weighted tf-isf: a term's count in the sentence times ``log(N / n_t)``, N the
sentences of both texts and n_t those holding the term, so a term that every sentence holds
weighs nothing. A pair of sentences is a seed when both

- the cosine of their tf-isf vectors is at least ``min_cosine`` (0.33, the paper's ``th1``) and
- the Dice coefficient of their term sets, 2|A ∩ B| / (|A| + |B|), is at least ``min_dice``
  (0.33, the paper's ``th2``),

and, ours, they share at least ``min_shared`` = 2 distinct terms: without stopwords a short
sentence has few terms, and one shared rare word gave cosine and Dice above 0.33 to unrelated
sentences of the no-plagiarism pairs. A sentence that seeds with more than ``max_occurrences``
sentences of the other text is boilerplate, as the repeated n-grams of :mod:`.seeds`: dropped.

**Bounded cost.** The similarities are one sparse product of the two texts' sentence-term
matrices, written in numpy (a join of the two texts' postings on the term: scipy would cost a
report its start-up, tests/test_startup.py), whose cost is the sum over shared terms of the
product of the sentences holding it in each text. When that sum passes ``max_products`` the
most widespread terms are left out of the product (not of the vectors' norms: a cosine can only
fall) until it fits, so a text of one sentence repeated thousands of times costs no more than
any other (2 M pairs: about 100 MB at most).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coderiv.overlap.align.sentences import Sentences

#: Sparse products (pairs of sentences sharing a term, counted per term) allowed for one pair.
MAX_PRODUCTS = 2_000_000


@dataclass(frozen=True)
class SentenceWeights:
    """A text's tf-isf sentence-term matrix in compressed rows: sentence k's terms are
    ``columns[indptr[k]:indptr[k + 1]]`` (increasing), their weights ``values[...]``."""

    indptr: np.ndarray
    columns: np.ndarray
    values: np.ndarray
    width: int

    def row_sum(self, start: int, end: int) -> np.ndarray:
        """The sum of sentences [start, end) as a dense vector over the ``width`` terms."""
        lo, hi = int(self.indptr[start]), int(self.indptr[end])
        summed: np.ndarray = np.bincount(self.columns[lo:hi], weights=self.values[lo:hi], minlength=self.width)
        return summed


@dataclass(frozen=True)
class SentenceSeeds:
    """Seed k pairs sentence ``susp[k]`` of A with ``src[k]`` of B (sorted by ``susp``, then
    ``src``); ``weights_a``/``weights_b`` are the texts' tf-isf sentence-term matrices, for the
    similarity of whole fragments (:mod:`.clusters`)."""

    susp: np.ndarray
    src: np.ndarray
    weights_a: SentenceWeights
    weights_b: SentenceWeights

    def __len__(self) -> int:
        return len(self.susp)


def _postings(terms: np.ndarray, sentences: Sentences, columns: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sentence, column, count) of each distinct term of each sentence, sorted by sentence then column."""
    rows = np.repeat(np.arange(len(sentences), dtype=np.int64), sentences.end - sentences.first)[terms >= 0]
    keys, counts = np.unique(rows * width + columns, return_counts=True)
    return keys // width, keys % width, counts.astype(np.float64)


def _weights(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, n_rows: int, width: int) -> SentenceWeights:
    indptr = np.searchsorted(rows, np.arange(n_rows + 1), "left")
    return SentenceWeights(indptr, cols, values, width)


def sentence_seeds(
    terms_a: np.ndarray, sentences_a: Sentences, terms_b: np.ndarray, sentences_b: Sentences,
    min_cosine: float = 0.33, min_dice: float = 0.33, min_shared: int = 2, max_occurrences: int = 8,
    max_products: int = MAX_PRODUCTS,
) -> SentenceSeeds:
    """The seed sentence pairs of A and B (module docstring); ``terms_*`` one term per word
    (``-1``: left out), ``sentences_*`` covering every word."""
    kept_a, kept_b = terms_a[terms_a >= 0], terms_b[terms_b >= 0]
    vocabulary, columns = np.unique(np.concatenate([kept_a, kept_b]), return_inverse=True)
    columns = columns.ravel().astype(np.int64)
    width = max(len(vocabulary), 1)
    na, nb = len(sentences_a), len(sentences_b)
    row_a, col_a, tf_a = _postings(terms_a, sentences_a, columns[: len(kept_a)], width)
    row_b, col_b, tf_b = _postings(terms_b, sentences_b, columns[len(kept_a):], width)
    holders_a = np.bincount(col_a, minlength=width)
    holders_b = np.bincount(col_b, minlength=width)
    isf = np.log((na + nb) / np.maximum(holders_a + holders_b, 1))
    w_a, w_b = tf_a * isf[col_a], tf_b * isf[col_b]
    weights_a, weights_b = _weights(row_a, col_a, w_a, na, width), _weights(row_b, col_b, w_b, nb, width)
    empty = np.empty(0, np.int64)
    if len(vocabulary) == 0 or na == 0 or nb == 0:
        return SentenceSeeds(empty, empty, weights_a, weights_b)
    norm_a = np.sqrt(np.bincount(row_a, weights=w_a * w_a, minlength=na))
    norm_b = np.sqrt(np.bincount(row_b, weights=w_b * w_b, minlength=nb))
    size_a, size_b = np.bincount(row_a, minlength=na), np.bincount(row_b, minlength=nb)
    # the product's cost per term; the most widespread terms out until it fits
    cost = holders_a.astype(np.int64) * holders_b.astype(np.int64)
    allowed = np.ones(width, bool)
    if cost.sum() > max_products:
        order = np.argsort(cost, kind="stable")
        allowed[order[np.searchsorted(np.cumsum(cost[order]), max_products, "right"):]] = False
    # join the postings on the term: each posting of A with every posting of B of its term
    by_b = np.argsort(col_b, kind="stable")
    start_b = np.concatenate([[0], np.cumsum(holders_b)])[:-1]
    reps = np.where(allowed[col_a], holders_b[col_a], 0)
    total = int(reps.sum())
    if total == 0:
        return SentenceSeeds(empty, empty, weights_a, weights_b)
    offsets = np.arange(total) - np.repeat(np.cumsum(reps) - reps, reps)
    at_b = by_b[np.repeat(start_b[col_a], reps) + offsets]
    keys = np.repeat(row_a, reps) * nb + row_b[at_b]
    pairs, which = np.unique(keys, return_inverse=True)
    which = which.ravel()
    inter = np.bincount(which)
    dot = np.bincount(which, weights=np.repeat(w_a, reps) * w_b[at_b])
    i, j = pairs // nb, pairs % nb
    good = inter >= min_shared
    i, j, inter, dot = i[good], j[good], inter[good], dot[good]
    dice = 2 * inter / (size_a[i] + size_b[j])
    cosine = dot / np.maximum(norm_a[i] * norm_b[j], 1e-12)
    good = (dice >= min_dice) & (cosine >= min_cosine)
    i, j = i[good].astype(np.int64), j[good].astype(np.int64)
    if len(i):
        busy_a = np.bincount(i, minlength=na) > max_occurrences
        busy_b = np.bincount(j, minlength=nb) > max_occurrences
        good = ~busy_a[i] & ~busy_b[j]
        i, j = i[good], j[good]
    order = np.lexsort((j, i))
    return SentenceSeeds(i[order], j[order], weights_a, weights_b)
