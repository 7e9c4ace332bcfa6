"""The inner loops of exact top-k (:mod:`coderiv.ranking.topk`, through
:class:`coderiv.ranking.kernel.CompiledPasses`) in compiled code
(numba), when ``coderiv[fast]`` is installed: reading postings into partial sums, probing
documents in postings, and cosine's per-document bounds, each in one pass.

The numpy passes they replace touch every posting several times (decode the document number,
decode the count, a table index, a gather, a ``bincount`` into an array of every document),
and a probe is one binary search per (term, document) costing several numpy calls. Here:

- :func:`accumulate` adds ``table[offset_i + f_dt]`` to ``partial[d]`` for every posting
  (d, f_dt) of the given keys (and marks d as seen, for the per-term bounds' pruning), decoding the run-split document numbers
  (:class:`~coderiv.index.format.postings.SplitNumbers`) and the escaped counts
  (:class:`~coderiv.index.format.counts.CountValues`) on the way, with the codec's packed-run
  helpers (:mod:`coderiv.index.format.packed_runs`: the run of a posting, the side table's
  entries);
- :func:`probe` adds the same contributions for an ascending list of documents, found by
  galloping search in each key's postings (the documents ascend, so each search starts where
  the last one ended);
- :func:`above` lists the documents whose bound ``partial·factor + constant + Σ_c w_c·table_c``
  reaches θ (or counts them, on every ``step``-th document);
- :func:`fill_products` multiplies out a product measure's contribution table (cosine's).

The contribution of a posting is looked up in the same per-(term, f_dt) table the numpy pass
uses (:func:`coderiv.ranking.kernel.contribution_table`), so only the order of the additions
differs: the sums agree to rounding, and the ranking's 12-digit ties absorb that
(``tests/test_compiled_probes.py`` checks the sums, ``tests/test_pruning_cosine.py`` the rankings
of both paths against the full pass).

numba is optional. Importing it and loading the loops from numba's disk cache costs about 0.4 s
of CPU (0.2 s when numba is already imported): what the loops save on 5–10 whole-document
cosine queries of a 100K-document index. So :mod:`coderiv.ranking.topk` loads them only once
the process has spent as much CPU time in the numpy passes (:func:`note_numpy_work`: a single
short query never pays for the import); a batch of known size (:func:`expect_queries`, from
``coderiv query FOLDER``) decides at its first query whether the rest repays the load; and a
long-lived process (a benchmark) may call :func:`load`. The very first load on a machine (or after an upgrade) compiles them,
5–10 s, once. Without numba, the numpy passes answer, with the same answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from coderiv.index.format.packed_runs import escaped_value, first_escape, lower_bound, run_of
from coderiv.jit import LazyKernels
from coderiv.jit import available as available  # re-exported: whether numba is installed

#: CPU seconds a process spends in the numpy passes of pruned queries before it loads the
#: compiled loops: about what loading them costs, so that whatever the number of queries still
#: to come, the process never spends more than twice the best choice's time (rent or buy).
LOAD_AFTER_SECONDS = 0.4

#: The share of the numpy passes' time the loops save (0.5–0.8 on the 20K and 100K benchmarks):
#: what a batch of known size weighs against the load.
SAVED_SHARE = 0.6

_SPENT = 0.0
_PLANNED: int | None = None  # queries announced by a batch, not begun yet
_HOLD = 0  # pruned queries still to run before the rent-or-buy rule may load


def _accumulate(
    low: np.ndarray, run_at: np.ndarray, run_high: np.ndarray, vals: np.ndarray, over_at: np.ndarray, over_val: np.ndarray,
    starts: np.ndarray, ends: np.ndarray, offsets: np.ndarray, table: np.ndarray, partial: np.ndarray, touched: np.ndarray,
) -> None:
    """partial[d] += table[offsets[i] + f_dt] for every posting (d, f_dt) of ``starts[i]:ends[i]``,
    in store order, and touched[d] = True unless ``touched`` is empty.

    Each run of a key is cut at its escaped counts (ascending with the postings, so a cursor
    into the side table: one search per key), so the loop over the stretches between them tests
    nothing but its bound (on 8,000-word documents a read of every posting took a third less
    time than with a test for the escape and for ``touched`` at each posting)."""
    n_over, mark = over_at.shape[0], touched.shape[0] > 0
    for i in range(starts.shape[0]):
        position, end, offset = int(starts[i]), int(ends[i]), int(offsets[i])
        if position >= end:
            continue
        run = run_of(run_at, position)
        escape = first_escape(over_at, position) if n_over else 0
        while position < end:
            stop = min(int(run_at[run + 1]), end)
            high = int(run_high[run]) << 16
            while position < stop:
                cut = int(over_at[escape]) if escape < n_over and int(over_at[escape]) < stop else stop
                # the stretch up to the next escape: unsigned indexes, so that numba drops the
                # test for negative ones each access would otherwise pay (a third of the loop's time)
                base, shift = np.uintp(high), np.uintp(offset)
                if mark:
                    for p in range(np.uintp(position), np.uintp(cut)):
                        doc = base | np.uintp(low[p])
                        partial[doc] += table[shift + np.uintp(vals[p])]
                        touched[doc] = True
                else:
                    for p in range(np.uintp(position), np.uintp(cut)):
                        partial[base | np.uintp(low[p])] += table[shift + np.uintp(vals[p])]
                if cut == stop:
                    break
                doc = high | int(low[cut])  # the escaped posting: its f_dt from the side table
                partial[doc] += table[offset + int(over_val[escape])]
                if mark:
                    touched[doc] = True
                escape += 1
                position = cut + 1
            position = stop
            run += 1


def _probe(
    low: np.ndarray, run_at: np.ndarray, run_high: np.ndarray, vals: np.ndarray, over_at: np.ndarray, over_val: np.ndarray,
    starts: np.ndarray, ends: np.ndarray, offsets: np.ndarray, table: np.ndarray, docs: np.ndarray, sums: np.ndarray,
) -> None:
    """sums[j] += table[offsets[i] + f_dt] wherever document ``docs[j]`` (ascending) has a
    posting (docs[j], f_dt) in ``starts[i]:ends[i]``: a galloping search per (key, document),
    each starting where the previous one ended."""
    n_docs, escapes = docs.shape[0], over_at.shape[0] > 0
    for i in range(starts.shape[0]):
        position, end, offset = int(starts[i]), int(ends[i]), int(offsets[i])
        if position >= end or n_docs == 0:
            continue
        run = run_of(run_at, position)
        j = 0
        while position < end and j < n_docs:
            stop = min(int(run_at[run + 1]), end)
            high = int(run_high[run])
            while j < n_docs and (int(docs[j]) >> 16) < high:
                j += 1
            while j < n_docs and position < stop and (int(docs[j]) >> 16) == high:
                target = int(docs[j]) & 0xFFFF
                if int(low[position]) < target:
                    # gallop: low[position] < target; double the step until it is passed
                    step = 1
                    while position + step < stop and int(low[position + step]) < target:
                        position += step
                        step <<= 1
                    position = lower_bound(low, position + 1, min(position + step, stop), target)
                if position < stop and int(low[position]) == target:
                    value = int(vals[position])
                    if value == 255 and escapes:
                        value = escaped_value(over_at, over_val, position)
                    sums[j] += table[offset + value]
                    position += 1
                j += 1
            position = stop
            run += 1


def _above(
    lower: np.ndarray,
    constant: float,
    table: np.ndarray,
    weights: np.ndarray,
    theta: float,
    step: int,
    out: np.ndarray,
) -> int:
    """Write into ``out`` the documents d (every ``step``-th) whose bound
    lower[d] + constant + Σ_c weights[c]·table[c, d] is ≥ θ; return how many."""
    classes = np.flatnonzero(weights)
    count = 0
    for d in range(0, lower.shape[0], step):
        upper = lower[d] + constant
        for c in classes:
            upper += weights[c] * table[c, d]
        if upper >= theta:
            out[count] = d
            count += 1
    return count


def _fill_products(
    per_count: np.ndarray, weight: np.ndarray, query: np.ndarray, offsets: np.ndarray, widths: np.ndarray, table: np.ndarray
) -> None:
    """table[offsets[i] + v] = (per_count[v] · weight[i]) · query[i] for every v < widths[i]: a
    product measure's contribution table (:func:`coderiv.ranking.kernel.fill_products`, the
    same products without numpy's index arrays)."""
    for i in range(offsets.shape[0]):
        at, w, q = int(offsets[i]), weight[i], query[i]
        for v in range(int(widths[i])):
            table[at + v] = (per_count[v] * w) * q


def _warm_up(kernels: dict[str, Callable[..., Any]]) -> None:
    """Compile (or load from the cache) the loops for the array types of a usual index: one key
    of two postings (documents 1 and 70,000, in two runs)."""
    low, run_at, run_high = np.array([1, 4464], np.uint16), np.array([0, 1, 2], np.uint32), np.array([0, 1], np.uint16)
    vals, none = np.array([1, 2], np.uint8), np.zeros(0, np.int64)
    keys, table = (np.zeros(1, np.int64), np.full(1, 2, np.int64), np.zeros(1, np.int64)), np.ones(3)
    kernels["accumulate"](low, run_at, run_high, vals, none, none, *keys, table, np.zeros(70_001), np.zeros(0, np.bool_))
    kernels["accumulate"](low, run_at, run_high, vals, none, none, *keys, table, np.zeros(70_001), np.zeros(70_001, np.bool_))
    kernels["probe"](low, run_at, run_high, vals, none, none, *keys, table, np.array([1, 70_000]), np.zeros(2))
    kernels["above"](np.zeros(2), 0.0, np.ones((2, 2), np.uint8), np.ones(2), 1.0, 1, np.zeros(2, np.int64))
    kernels["fill_products"](np.ones(2), np.ones(1), np.ones(1), np.zeros(1, np.int64), np.full(1, 2, np.int64), np.zeros(2))


_KERNELS = LazyKernels(
    {"accumulate": _accumulate, "probe": _probe, "above": _above, "fill_products": _fill_products}, _warm_up,
    helpers=(globals(), ("lower_bound", "run_of", "first_escape", "escaped_value")),  # the loops call them, compiled
)


def load() -> bool:
    """Import numba and compile (or load from numba's cache) the loops; False when numba is
    missing or fails (the numpy passes then answer). A server's threads may ask together."""
    return _KERNELS.load()


def loaded() -> bool:
    """Whether the compiled loops are ready in this process."""
    return _KERNELS.loaded()


def expect_queries(count: int | None) -> None:
    """A batch of ``count`` queries begins (None: unknown). At its first pruned query the process
    then knows what the rest would cost in numpy, and loads the loops at once if they would save
    more than loading costs, or else not during the batch (the rent-or-buy rule's worst case is
    a batch that ends just after the load)."""
    global _PLANNED
    _PLANNED = count


def note_numpy_work(seconds: float) -> bool:
    """Count CPU seconds spent in the numpy passes by one pruned query; load the loops (if numba
    is installed) when a batch announced by :func:`expect_queries` will repay them, or, without
    such a plan, once :data:`LOAD_AFTER_SECONDS` have been spent. Returns whether they are loaded."""
    global _SPENT, _PLANNED, _HOLD
    if _KERNELS.loaded():
        return True
    if _KERNELS.failed():
        return False
    _SPENT += seconds
    if _PLANNED is not None:  # a batch's first query: decide for the whole batch
        rest, _PLANNED = _PLANNED - 1, None
        if seconds * rest * SAVED_SHARE >= LOAD_AFTER_SECONDS and available():
            return load()
        _HOLD = rest
        return False
    if _HOLD > 0:
        _HOLD -= 1
        return False
    if _SPENT >= LOAD_AFTER_SECONDS and available():
        return load()
    return False


def accumulate(*arrays: np.ndarray) -> None:
    """:func:`_accumulate`, compiled (needs :func:`load` first)."""
    _KERNELS["accumulate"](*arrays)


def probe(*arrays: np.ndarray) -> None:
    """:func:`_probe`, compiled (needs :func:`load` first)."""
    _KERNELS["probe"](*arrays)


def fill_products(*arrays: np.ndarray) -> None:
    """:func:`_fill_products`, compiled (needs :func:`load` first)."""
    _KERNELS["fill_products"](*arrays)


def above(lower: np.ndarray, constant: float, table: np.ndarray, weights: np.ndarray, theta: float, step: int) -> np.ndarray:
    """Documents (every ``step``-th) whose bound reaches θ, ascending (needs :func:`load`)."""
    out = np.empty((lower.shape[0] + step - 1) // step, np.int64)
    count = _KERNELS["above"](lower, constant, table, weights, theta, step, out)
    return out[:count]
