"""Each document's top k in one compiled loop (numba), when ``coderiv[fast]`` is installed: the
same rows as :func:`~coderiv.pairs.counting.product_rows` followed by
:func:`~coderiv.pairs.row_ranking.directed_values` and
:func:`~coderiv.pairs.row_ranking.select_top_grouped` (and, for identity5, as the block path's),
without materialising a range's entries.

The sparse product computes a range of rows as a CSR matrix (every document sharing an eligible
key with each row, with the count), then numpy passes turn every entry into a percentage and
rank each row. At 1M documents of ~200 words that is 4.7 billion directed entries, cut into
thousands of ranges, each allocating and faulting in fresh arrays (scipy's dense accumulator
has one slot per document). :func:`_top_rows` keeps one accumulator (one slot per document)
and a few buffers for the whole run, and for each row: adds each shared key's weight (1 for the
set methods; identity5's fixed-point weight from a table) to every partner document
(Gustavson's dense accumulator, as scipy does), turns each partner's sum into the percentage
with the same float64 operations as ``directed_values``, keeps the candidates at least as
large as the row's k-th largest, and ranks those by (percentage descending, document number
ascending), as ``select_top`` does. Only the kept entries are written, straight into the
:class:`~coderiv.pairs.row_ranking.RowBuilder`'s arrays. An incremental run merges fresh entries
with kept ones, so :func:`_entries` writes a range's entries themselves (those with an end in
a recomputed row).

numba is optional: without it (or when it fails to load) the scipy product and the block path
run; all give byte-identical tables (``tests/test_pairs_compiled.py``). The loops are cached on
disk by numba (``cache=True``): only the first use on a machine compiles them (a few seconds).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from coderiv.jit import LazyKernels
from coderiv.jit import available as available  # re-exported: whether numba is installed

#: What a shared key adds and how a count becomes a percentage (``kind`` of :func:`_top_rows`).
RESEMBLANCE, CONTAINMENT, WEIGHTED = 0, 1, 2


def _by_document(
    key_ptr: np.ndarray, key_docs: np.ndarray, key_vals: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transpose of the key → documents lists: (doc_ptr, doc_keys, doc_vals), each
    document's keys ascending with its values (a counting sort, linear in the postings)."""
    doc_ptr = np.zeros(n_docs + 1, np.int64)
    for i in range(key_docs.shape[0]):
        doc_ptr[key_docs[i] + 1] += 1
    for d in range(n_docs):
        doc_ptr[d + 1] += doc_ptr[d]
    fill = doc_ptr[:-1].copy()
    doc_keys = np.empty(key_docs.shape[0], np.int32)
    doc_vals = np.empty(key_vals.shape[0], key_vals.dtype)
    for t in range(key_ptr.shape[0] - 1):
        for i in range(key_ptr[t], key_ptr[t + 1]):
            d = key_docs[i]
            doc_keys[fill[d]] = t
            if key_vals.shape[0]:
                doc_vals[fill[d]] = key_vals[i]
            fill[d] += 1
    return doc_ptr, doc_keys, doc_vals


def _count_row(
    lists: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    kind: int,
    weights: np.ndarray,
    r: int,
    acc: np.ndarray,
    partners: np.ndarray,
) -> int:
    """Document ``r``'s shared keys counted into ``acc`` (one slot per document, all zero on
    entry), its partners listed in ``partners`` in the order first met; returns how many."""
    key_ptr, key_docs, key_vals, doc_ptr, doc_keys, doc_vals, _ = lists
    m = 0
    for j in range(doc_ptr[r], doc_ptr[r + 1]):
        t = doc_keys[j]
        lo, hi = key_ptr[t], key_ptr[t + 1]
        for i in range(lo, hi):
            d = key_docs[i]
            if acc[d] == 0:
                partners[m] = d
                m += 1
            if kind == WEIGHTED:
                acc[d] += weights[hi - lo, abs(np.int64(key_vals[i]) - np.int64(doc_vals[j]))]
            else:
                acc[d] += 1
    return m


def _percent(
    kind: int, c: float, s1: float, s2: float, length_factor: np.ndarray, lengths: np.ndarray, r: int, d: int
) -> float:
    """The percentage of row ``r``'s count ``c`` with partner ``d`` (sizes ``s1``, ``s2``):
    resemblance, containment, or the weighted measure's self-score rule with its length factor
    (``lengths`` is read only then: the set methods pass an empty one)."""
    if kind == RESEMBLANCE:
        return 100.0 * c / (s1 + s2 - c)
    if kind == CONTAINMENT:
        return 100.0 * c / s1
    return float(100.0 * c * length_factor[abs(lengths[d] - lengths[r])] / (s1 * length_factor[0]))


def _row_percents(
    lists: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    kind: int, weights: np.ndarray, length_factor: np.ndarray, lengths: np.ndarray, rows: np.ndarray, r: int,
    acc: np.ndarray, partners: np.ndarray, cand_val: np.ndarray,
) -> tuple[int, int]:
    """Row ``r``'s documents d ≠ r sharing a key with it (with an end in ``rows``, a mask over
    documents, unless it is empty) into ``partners[:count]``, their percentages into
    ``cand_val[:count]``, in the order :func:`_count_row` found them, ``acc`` left all zero;
    returns (count, how many of them have d > r: the shared pairs read from their smaller
    document)."""
    sizes = lists[6]
    m = _count_row(lists, kind, weights, r, acc, partners)
    s1 = np.float64(sizes[r])
    every = rows.shape[0] == 0
    count = 0
    pairs = 0
    for i in range(m):
        d = partners[i]
        c = np.float64(acc[d])
        acc[d] = 0
        if d == r or not (every or rows[r] or rows[d]):
            continue
        if d > r:
            pairs += 1
        partners[count] = d
        cand_val[count] = _percent(kind, c, s1, np.float64(sizes[d]), length_factor, lengths, r, d)
        count += 1
    return count, pairs


def _top_rows(
    lists: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    kind: int, weights: np.ndarray, length_factor: np.ndarray, lengths: np.ndarray, r0: int, r1: int, top: int,
    acc: np.ndarray, partners: np.ndarray, cand_val: np.ndarray, out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> tuple[int, int]:
    """Rows r0…r1−1 written to ``out`` (row_ptr, targets, values, truncated: the CSR rows of the
    range, row_ptr[0] = 0, room for ``top`` entries a row); returns (entries written, shared
    pairs whose smaller document is in the range).

    ``lists`` = (key_ptr, key_docs, key_vals, doc_ptr, doc_keys, doc_vals, sizes). ``kind``:
    :data:`RESEMBLANCE` or :data:`CONTAINMENT` (each shared key adds 1) or :data:`WEIGHTED`
    (a key in f documents adds ``weights[f, |f_dt − f_qt|]``, and the percentage is the
    self-score rule's, with ``length_factor[|L_d − L_q|]`` the document part). ``acc`` (one slot per
    document) must be all zero, and is left so."""
    row_ptr, targets, values, truncated = out
    row_ptr[0] = 0
    every = np.zeros(0, np.bool_)
    e = 0
    pairs = 0
    for r in range(r0, r1):
        count, found = _row_percents(lists, kind, weights, length_factor, lengths, every, r, acc, partners, cand_val)
        pairs += found
        truncated[r - r0] = count > top
        if count > top:
            threshold = np.partition(cand_val[:count], count - top)[count - top]
            kept = 0
            for i in range(count):
                if cand_val[i] >= threshold:
                    partners[kept] = partners[i]
                    cand_val[kept] = cand_val[i]
                    kept += 1
            count = kept
        by_doc = np.argsort(partners[:count])
        cand_d = partners[:count][by_doc]
        cand_v = cand_val[:count][by_doc]
        order = np.argsort(-cand_v, kind="mergesort")  # stable: ties stay by document number
        keep = min(count, top)
        for i in range(keep):
            targets[e + i] = cand_d[order[i]]
            values[e + i] = cand_v[order[i]]
        e += keep
        row_ptr[r - r0 + 1] = e
    return e, pairs


def _entries(
    lists: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    kind: int, weights: np.ndarray, length_factor: np.ndarray, lengths: np.ndarray, rows: np.ndarray, r0: int, r1: int,
    acc: np.ndarray, partners: np.ndarray, cand_val: np.ndarray, out: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[int, int]:
    """Every directed entry of rows r0…r1−1 with an end in ``rows`` (a mask over documents: the
    rows an incremental run recomputes), written to ``out`` (src, dst, percent) in row order;
    returns (entries, shared pairs among them read from their smaller document). The counts
    and percentages are :func:`_top_rows`'s; what an incremental run merges with its kept
    entries (``IncrementalPlan.merge``), as the scipy product's entries are."""
    src, dst, val = out
    e = 0
    pairs = 0
    for r in range(r0, r1):
        count, found = _row_percents(lists, kind, weights, length_factor, lengths, rows, r, acc, partners, cand_val)
        pairs += found
        for i in range(count):
            src[e + i] = r
            dst[e + i] = partners[i]
            val[e + i] = cand_val[i]
        e += count
    return e, pairs


_KERNELS = LazyKernels(
    {"by_document": _by_document, "top_rows": _top_rows, "entries": _entries},
    helpers=(globals(), ("_count_row", "_percent", "_row_percents")),  # the loops call them, compiled
)


def load() -> bool:
    """Compile (or load from numba's cache) the loops; False when numba is missing or fails
    (the scipy product then runs)."""
    return _KERNELS.load()


def loaded() -> bool:
    """Whether the compiled loops are ready in this process (see :func:`load`)."""
    return _KERNELS.loaded()


def by_document(
    key_ptr: np.ndarray, key_docs: np.ndarray, key_vals: np.ndarray, n_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Compiled :func:`_by_document` (needs :func:`load`); ``key_vals`` may be empty (set methods)."""
    result: tuple[np.ndarray, np.ndarray, np.ndarray] = _KERNELS["by_document"](key_ptr, key_docs, key_vals, n_docs)
    return result


def top_rows(*args: Any) -> tuple[int, int]:
    """Compiled :func:`_top_rows` (needs :func:`load`)."""
    e, pairs = _KERNELS["top_rows"](*args)
    return int(e), int(pairs)


def entries(*args: Any) -> tuple[int, int]:
    """Compiled :func:`_entries` (needs :func:`load`)."""
    count, pairs = _KERNELS["entries"](*args)
    return int(count), int(pairs)
