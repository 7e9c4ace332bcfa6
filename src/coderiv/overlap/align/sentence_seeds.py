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
matrices (scipy), whose cost is the sum over shared terms of the product of the sentences holding
it in each text. When that sum passes ``max_products`` the most widespread terms are left out of
the product (not of the vectors' norms: a cosine can only fall) until it fits, so a text of one
sentence repeated thousands of times costs no more than any other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from coderiv.overlap.align.sentences import Sentences

#: Sparse products (pairs of sentences sharing a term, counted per term) allowed for one pair.
MAX_PRODUCTS = 4_000_000


@dataclass(frozen=True)
class SentenceSeeds:
    """Seed k pairs sentence ``susp[k]`` of A with ``src[k]`` of B (sorted by ``susp``, then
    ``src``); ``weights_a``/``weights_b`` are the texts' tf-isf sentence-term matrices
    (rows: sentences), for the similarity of whole fragments (:mod:`.clusters`)."""

    susp: np.ndarray
    src: np.ndarray
    weights_a: sparse.csr_matrix
    weights_b: sparse.csr_matrix

    def __len__(self) -> int:
        return len(self.susp)


def _counts(terms: np.ndarray, sentences: Sentences, columns: np.ndarray, n_columns: int) -> sparse.csr_matrix:
    rows = np.repeat(np.arange(len(sentences)), sentences.end - sentences.first)
    keep = terms >= 0
    data = np.ones(int(keep.sum()), np.float64)
    return sparse.csr_matrix((data, (rows[keep], columns)), shape=(len(sentences), n_columns))


def _entries(matrix: sparse.coo_matrix, i: np.ndarray, j: np.ndarray, width: int) -> np.ndarray:
    """``matrix[i, j]`` for each pair (0 where nothing is stored), by a sorted search."""
    keys = matrix.row.astype(np.int64) * width + matrix.col
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], np.asarray(matrix.data)[order]
    wanted = i * width + j
    at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    found = (keys[at] == wanted) if len(keys) else np.zeros(len(wanted), bool)
    return np.where(found, values[at] if len(keys) else 0.0, 0.0)


def sentence_seeds(
    terms_a: np.ndarray, sentences_a: Sentences, terms_b: np.ndarray, sentences_b: Sentences,
    min_cosine: float = 0.33, min_dice: float = 0.33, min_shared: int = 2, max_occurrences: int = 8,
    max_products: int = MAX_PRODUCTS,
) -> SentenceSeeds:
    """The seed sentence pairs of A and B (module docstring); ``terms_*`` one term per word
    (``-1``: left out), ``sentences_*`` covering every word."""
    kept_a, kept_b = terms_a[terms_a >= 0], terms_b[terms_b >= 0]
    vocabulary, columns = np.unique(np.concatenate([kept_a, kept_b]), return_inverse=True)
    width = len(vocabulary)
    tf_a = _counts(terms_a, sentences_a, columns[: len(kept_a)], width)
    tf_b = _counts(terms_b, sentences_b, columns[len(kept_a):], width)
    holders_a = np.diff(tf_a.tocsc().indptr)
    holders_b = np.diff(tf_b.tocsc().indptr)
    total = len(sentences_a) + len(sentences_b)
    isf = np.log(total / np.maximum(holders_a + holders_b, 1))
    weights_a = sparse.csr_matrix(tf_a.multiply(isf[np.newaxis, :]))
    weights_b = sparse.csr_matrix(tf_b.multiply(isf[np.newaxis, :]))
    empty = np.empty(0, np.int64)
    if width == 0 or len(sentences_a) == 0 or len(sentences_b) == 0:
        return SentenceSeeds(empty, empty, weights_a, weights_b)
    norm_a = np.sqrt(np.asarray(weights_a.multiply(weights_a).sum(axis=1)).ravel())
    norm_b = np.sqrt(np.asarray(weights_b.multiply(weights_b).sum(axis=1)).ravel())
    size_a, size_b = np.diff(tf_a.indptr), np.diff(tf_b.indptr)
    # the product's cost per term; the most widespread terms out until it fits
    cost = holders_a.astype(np.int64) * holders_b.astype(np.int64)
    allowed = np.ones(width, bool)
    if cost.sum() > max_products:
        order = np.argsort(cost)
        allowed[order[np.searchsorted(np.cumsum(cost[order]), max_products, "right"):]] = False
    bin_a, bin_b, wa, wb = sparse.csr_matrix(tf_a.sign()), sparse.csr_matrix(tf_b.sign()), weights_a, weights_b
    if not allowed.all():
        mask = sparse.diags(allowed.astype(np.float64))
        bin_a, wa = bin_a @ mask, wa @ mask
    shared = (bin_a @ bin_b.T).tocoo()
    i, j, inter = shared.row, shared.col, shared.data
    good = inter >= min_shared
    i, j, inter = i[good].astype(np.int64), j[good].astype(np.int64), inter[good]
    dice = 2 * inter / (size_a[i] + size_b[j])
    cosine = _entries((wa @ wb.T).tocoo(), i, j, len(sentences_b)) / np.maximum(norm_a[i] * norm_b[j], 1e-12)
    good = (dice >= min_dice) & (cosine >= min_cosine)
    i, j = i[good].astype(np.int64), j[good].astype(np.int64)
    if len(i):
        busy_a = np.bincount(i, minlength=len(sentences_a)) > max_occurrences
        busy_b = np.bincount(j, minlength=len(sentences_b)) > max_occurrences
        good = ~busy_a[i] & ~busy_b[j]
        i, j = i[good], j[good]
    order = np.lexsort((j, i))
    return SentenceSeeds(i[order], j[order], weights_a, weights_b)
