"""Running n-to-n pairs on an index: compute the table (in full, or incrementally from the stored
one), store it, read a document's row; and open an index with the store a method needs."""

from __future__ import annotations

import os
import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from coderiv.index.builder.stores import open_with_store
from coderiv.index.format.postings import Postings
from coderiv.index.index import Index
from coderiv.pairs import compiled
from coderiv.pairs.budget import PAIRS_MEMORY, document_ranges, fixed_bytes, range_pairs
from coderiv.pairs.counting import (
    Engine,
    block_count,
    incidence,
    plan_blocks,
    product_ranges,
    product_rows,
    serial_engine,
    shared_pairs_of,
)
from coderiv.pairs.eligibility import (
    KeyView,
    default_max_df,
    eligible_lists,
    key_freqs,
    key_view,
    keys_holding,
    release_pages,
)
from coderiv.pairs.heap import release_free_heap
from coderiv.pairs.incremental import IncrementalPlan
from coderiv.pairs.methods import (
    CONTAINMENT,
    DEFAULT_METHOD,
    DEFAULT_TOP,
    RESEMBLANCE,
    PairMethod,
    get_method,
    key_weights,
)
from coderiv.pairs.row_ranking import ROW_ENTRIES, RowBuilder, directed_values, row_ranges, select_top_grouped
from coderiv.pairs.table import PairTable
from coderiv.progress import Progress
from coderiv.ranking.measures import get_measure


@dataclass
class RunReport:
    """What a ``pairs`` run did."""

    method: str
    mode: str  # "full", "incremental" or "unchanged"
    documents: int
    recomputed_rows: int
    blocks: int
    shared_pairs: int
    max_df: int
    skipped_keys: int
    skipped_postings: int
    reason: str = ""


def compute_pairs(
    index: Index,
    method: str = DEFAULT_METHOD,
    top: int = DEFAULT_TOP,
    max_df: int | None = None,
    previous: PairTable | None = None,
    engine: Engine = serial_engine,
    progress: Progress | None = None,
    memory: int | None = None,
) -> tuple[PairTable, RunReport]:
    """The pair table of ``index`` (incrementally from ``previous`` when it can be reused).

    A full run in one process with numba (``coderiv[fast]``) counts and ranks each row in one
    compiled loop (:func:`_rows_compiled`, every method). Otherwise set methods (``chunks``,
    ``resemblance``) in one process count shared keys by a sparse product of the key-document
    incidence, a range of rows at a time (:func:`_rows_by_product`); identity5, whose weights
    depend on both documents' counts, and any other ``engine`` (Dask) sort pair codes per block
    of keys (:func:`_rows_by_blocks`). All give the same table.

    ``memory`` (bytes, default :data:`~coderiv.pairs.budget.PAIRS_MEMORY`) bounds the run: what
    it holds apart from the shared pairs (:func:`~coderiv.pairs.budget.fixed_bytes`) is taken
    off, and the entries held at once stay within the rest: the product's row ranges shrink;
    the block path computes rows a document range at a time
    (:func:`~coderiv.pairs.budget.document_ranges`), each range's blocks keeping only pairs with
    an end in the range, so the rows are the same, only slower.
    """
    pm = get_method(method)
    store = index.store(pm.store.name)
    n = index.n_docs
    m = max_df if max_df is not None else default_max_df(n)
    # what the open's checks mapped, in every store (the passes below hold a step's pages); a
    # sharded index's stores are merged in memory, on first use
    for name in index.specs if isinstance(index, Index) else (pm.store.name,):
        release_pages(index.store(name))
    f = key_freqs(store)
    view = key_view(store, m, pm.measure, f)
    lengths = np.asarray(index.doc_lengths) if pm.measure else None

    plan = None if previous is None else previous.incremental_plan(index, pm.name, top, max_df, store, view)
    if plan is not None and plan.unchanged:
        assert previous is not None
        return previous, RunReport(
            pm.name, "unchanged", n, 0, 0, 0, m, len(view.skipped_keys), view.skipped_postings, plan.reason
        )
    rows = None if plan is None else plan.rows
    eligible = view.used & (f >= 2)
    if rows is not None:  # only keys holding a recomputed document
        eligible &= keys_holding(store, rows)
    built = RowBuilder(n, top)
    inputs = None
    if engine is serial_engine and _worth_compiling(f, eligible) and compiled.load():
        inputs = _compiled_inputs(store, f, eligible, pm, view, lengths)
    if inputs is not None:
        # the loop reads the eligible postings both ways: a key's frequency and mask (5 bytes a
        # key of the store, 80 MB for 16M 4-shingles) are not held through it
        del f, eligible
        blocks, shared_pairs = _rows_compiled(inputs, plan, top, memory, store, built, progress)
    elif pm.measure is None and engine is serial_engine:
        blocks, shared_pairs = _rows_by_product(store, f, eligible, pm, view, plan, top, memory, built, progress)
    else:
        blocks, shared_pairs = _rows_by_blocks(store, f, eligible, pm, view, plan, top, memory, built, engine, progress, lengths)
    row_ptr, targets, values, truncated = built.result()
    recomputed, mode = (n, "full") if plan is None else (int(plan.rows.sum()), "incremental")
    table = PairTable.create(index, pm, top, max_df, view, row_ptr, targets, values, truncated)
    report = RunReport(
        pm.name, mode, n, recomputed, blocks, shared_pairs, m,
        len(view.skipped_keys), view.skipped_postings, "" if plan is None else plan.reason,
    )
    return table, report


def _rows_by_blocks(
    store: Postings, f: np.ndarray, eligible: np.ndarray, pm: PairMethod, view: KeyView, plan: IncrementalPlan | None,
    top: int, memory: int | None, built: RowBuilder, engine: Engine, progress: Progress | None, lengths: np.ndarray | None,
) -> tuple[int, int]:
    """Rows through blocks of keys whose pair codes are sorted and summed (any method, any
    engine), a document range at a time when the budget requires; (blocks, shared pairs)."""
    n = store.n_docs
    rows = None if plan is None else plan.rows
    positions = np.flatnonzero(eligible)
    max_pairs = range_pairs(memory or PAIRS_MEMORY, fixed_bytes(store, n, top, len(positions)))
    ranges = document_ranges(store, eligible, max_pairs, f=f)
    blocks = shared_pairs = 0
    kept_counts = None if plan is None else np.bincount(plan.kept_src, minlength=n)
    whole = len(ranges) == 1
    if progress is not None and whole:
        progress.start(block_count(store, positions), "blocks")
    elif progress is not None:  # several ranges: documents, range by range
        progress.start(n, "documents")
    for d0, d1 in ranges:
        # a range's keys are found when it starts (never all ranges' at once)
        positions_of_range = positions if whole else positions[keys_holding(store, _documents(n, d0, d1))[positions]]
        within = None if whole else _documents(n, d0, d1)
        tasks = plan_blocks(store, positions_of_range, pm.measure, rows, within=within, first_number=blocks)
        del positions_of_range
        pairs, count = shared_pairs_of(engine(tasks), n, progress if whole else None)
        blocks += count
        shared_pairs += int(np.count_nonzero((pairs.first >= d0) & (pairs.first < d1)))
        counts = pairs.row_counts(n)[d0:d1]
        if kept_counts is not None:
            counts += kept_counts[d0:d1]
        for r0, r1 in row_ranges(counts):
            r0, r1 = r0 + d0, r1 + d0
            src, dst, weight = pairs.rows(r0, r1)
            val = directed_values(pm, src, dst, weight, view.sizes, lengths)
            if plan is None:
                order = np.argsort(src, kind="stable")  # two ascending runs: merged in linear time
                built.add(select_top_grouped(src[order] - r0, dst[order], val[order], top, r1 - r0))
            else:
                built.add(plan.merge(src, dst, val, top, r0, r1))
        del pairs
        if progress is not None and not whole:
            progress.advance(d1 - d0)
    return blocks, shared_pairs


def _rows_by_product(
    store: Postings, f: np.ndarray, eligible: np.ndarray, pm: PairMethod, view: KeyView, plan: IncrementalPlan | None,
    top: int, memory: int | None, built: RowBuilder, progress: Progress | None,
) -> tuple[int, int]:
    """Rows of a set method (each shared key counts 1) through the sparse product of the
    key-document incidence (:func:`~coderiv.pairs.counting.incidence`), a range of rows at a time;
    (row ranges, shared pairs). Each document's row is counted once, whatever the budget: the
    budget only sets how many entries a range of rows holds."""
    n = store.n_docs
    f_eligible = f[eligible]
    fixed = fixed_bytes(store, n, top, len(f_eligible), int(f_eligible.sum()))
    keys_docs, docs_keys = incidence(store, eligible, f)
    ranges = product_ranges(docs_keys, f_eligible, range_pairs(memory or PAIRS_MEMORY, fixed))
    if progress is not None:
        progress.start(n, "documents")
    shared_pairs = 0
    for r0, r1 in ranges:
        src, dst, shared = product_rows(docs_keys, keys_docs, r0, r1, None if plan is None else plan.rows)
        shared_pairs += int(np.count_nonzero(src < dst))
        val = directed_values(pm, src, dst, shared, view.sizes, None)
        if plan is None:
            built.add(select_top_grouped(src - r0, dst, val, top, r1 - r0))
        else:
            built.add(plan.merge(src, dst, val, top, r0, r1))
        if progress is not None:
            progress.advance(r1 - r0)
    return len(ranges), shared_pairs


#: Calls of the compiled loop a full run is cut into (the progress advances between them).
COMPILED_STEPS = 200
#: Threads a full run's compiled loop runs on (each with its own accumulator; the table is the
#: same for any number).
PAIRS_THREADS = min(2, os.cpu_count() or 1)
#: Eligible postings from which a run loads the compiled loop (numba's import and cache cost
#: about 0.5 s, what the scipy product or the blocks take for about this many postings).
COMPILED_MIN_POSTINGS = 1_000_000
#: Largest table of identity5 weights (one per key frequency and count difference) the compiled
#: loop reads; a store with larger counts takes the block path.
WEIGHT_TABLE_ENTRIES = 1 << 24


def _worth_compiling(f: np.ndarray, eligible: np.ndarray) -> bool:
    """Whether the run is large enough for the compiled loop to pay for loading numba (about
    0.5 s of CPU once compiled and cached): :data:`COMPILED_MIN_POSTINGS` eligible postings."""
    return int(f[eligible].sum()) >= COMPILED_MIN_POSTINGS


def _compiled_kind(pm: PairMethod) -> int | None:
    """What the compiled loop computes for ``pm`` (None: it cannot, the other paths run)."""
    if pm.kind == RESEMBLANCE:
        return compiled.RESEMBLANCE
    if pm.kind == CONTAINMENT:
        return compiled.CONTAINMENT
    return compiled.WEIGHTED if pm.by_differences else None


def _weight_tables(
    pm: PairMethod, f_eligible: np.ndarray, key_vals: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """identity5's fixed-point weights ``w[f, |f_dt − f_qt|]`` for every key frequency f and
    count difference of the eligible postings, and its document part ``L[|L_d − L_q|]`` for
    every length difference, computed by the measure's own functions (:func:`key_weights`,
    ``measure.doc``): its term depends on the counts only through their difference, its length
    factor on the lengths only through theirs. None when the weights table would be too large."""
    f_max = int(f_eligible.max()) if len(f_eligible) else 1
    d_max = int(key_vals.max()) if len(key_vals) else 0
    if (f_max + 1) * (d_max + 1) > WEIGHT_TABLE_ENTRIES:
        return None
    assert pm.measure is not None
    f_grid, d_grid = np.meshgrid(np.arange(1, f_max + 1), np.arange(d_max + 1), indexing="ij")
    weights = np.zeros((f_max + 1, d_max + 1), np.int64)
    weights[1:] = key_weights(pm.measure, d_grid.ravel(), np.zeros(d_grid.size), f_grid.ravel()).reshape(f_grid.shape)
    span = np.arange(int(lengths.max()) + 1 if len(lengths) else 1, dtype=np.float64)
    length_factor = np.asarray(get_measure(pm.measure).doc(span, 0.0, np.ones_like(span)), np.float64)
    return weights, length_factor


@dataclass
class _CompiledInputs:
    """What the compiled loops read: the eligible postings by key (``key_lists``: key_ptr,
    documents, values) and the documents' sizes, what a shared key adds and how a count becomes
    a percentage (``tables``: kind, identity5's weights and length factor, the documents'
    lengths), and the eligible keys' frequencies (an incremental run's range bounds)."""

    key_lists: tuple[np.ndarray, np.ndarray, np.ndarray]
    sizes: np.ndarray
    tables: tuple[int, np.ndarray, np.ndarray, np.ndarray]
    f_eligible: np.ndarray

    def lists(self, n_docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The loops' ``lists``: the postings by key and by document (the transpose, made here,
        once the store's per-key arrays are gone), and the sizes."""
        key_ptr, key_docs, key_vals = self.key_lists
        doc_ptr, doc_keys, doc_vals = compiled.by_document(key_ptr, key_docs, key_vals, n_docs)
        return key_ptr, key_docs, key_vals, doc_ptr, doc_keys, doc_vals, self.sizes


def _compiled_inputs(
    store: Postings, f: np.ndarray, eligible: np.ndarray, pm: PairMethod, view: KeyView, lengths: np.ndarray | None,
) -> _CompiledInputs | None:
    """The compiled loops' inputs for the ``eligible`` keys, or None when the loop cannot run
    this method (no compiled kind, or identity5's weights table too large)."""
    kind = _compiled_kind(pm)
    if kind is None:
        return None
    weighted = kind == compiled.WEIGHTED
    f_eligible = f[eligible]
    weights, length_factor = np.zeros((1, 1), np.int64), np.ones(1)
    doc_lengths = np.zeros(0, np.int64)
    key_lists = eligible_lists(store, eligible, f, weighted)
    if weighted:
        assert lengths is not None
        doc_lengths = np.asarray(lengths).astype(np.int64)
        tables = _weight_tables(pm, f_eligible, key_lists[2], doc_lengths)
        if tables is None:
            return None
        weights, length_factor = tables
    return _CompiledInputs(key_lists, np.asarray(view.sizes, np.int64), (kind, weights, length_factor, doc_lengths), f_eligible)


def _rows_compiled(
    inputs: _CompiledInputs, plan: IncrementalPlan | None, top: int, memory: int | None, store: Postings,
    built: RowBuilder, progress: Progress | None,
) -> tuple[int, int]:
    """Rows through the compiled loops (:mod:`~coderiv.pairs.compiled`): the same rows as
    :func:`_rows_by_product` (set methods) and :func:`_rows_by_blocks` (identity5). A full run
    ranks each row as it is counted, so nothing but the kept entries and one accumulator of one
    slot per document is held beside the eligible postings both ways (8 bytes a posting, 10 with
    identity5's counts); an incremental run gets each range's entries with an end in a
    recomputed row and merges them with its kept entries (:func:`_merge_compiled`). Returns
    (calls, shared pairs)."""
    n = store.n_docs
    lists, measure_tables = inputs.lists(n), inputs.tables
    acc = np.zeros(n, np.int64 if measure_tables[0] == compiled.WEIGHTED else np.int32)
    partners = np.empty(n, np.int32)
    if plan is not None:
        return _merge_compiled(lists, measure_tables, inputs.f_eligible, plan, top, memory, store, built, acc, partners, progress)
    if progress is not None:
        progress.start(n, "documents")
    step = max(1, -(-n // COMPILED_STEPS))
    threads = max(1, min(PAIRS_THREADS, n // step))
    buffers: queue.SimpleQueue[tuple[np.ndarray, ...]] = queue.SimpleQueue()
    buffers.put((acc, partners, np.empty(n, np.float64)))
    for _ in range(threads - 1):
        buffers.put((np.zeros_like(acc), np.empty_like(partners), np.empty(n, np.float64)))

    def rank(r0: int) -> tuple[tuple[np.ndarray, ...], int]:
        r1 = min(n, r0 + step)
        own = buffers.get()  # an accumulator and scratch of this thread's own
        out = (np.empty(r1 - r0 + 1, np.int64), np.empty((r1 - r0) * top, np.uint32),
               np.empty((r1 - r0) * top, np.float64), np.empty(r1 - r0, bool))
        entries, pairs = compiled.top_rows(lists, *measure_tables, r0, r1, top, *own, out)
        buffers.put(own)
        return (out[0], out[1][:entries], out[2][:entries], out[3]), pairs

    calls = shared_pairs = 0
    with ThreadPoolExecutor(threads) as pool:  # the loop releases the GIL; rows come back in order
        for piece, pairs in pool.map(rank, range(0, n, step)):
            built.add(piece)
            calls += 1
            shared_pairs += pairs
            if progress is not None:
                progress.advance(len(piece[3]))
    return calls, shared_pairs


def _merge_compiled(
    lists: tuple[np.ndarray, ...], tables: tuple[Any, ...], f_eligible: np.ndarray, plan: IncrementalPlan, top: int,
    memory: int | None, store: Postings, built: RowBuilder, acc: np.ndarray, partners: np.ndarray,
    progress: Progress | None,
) -> tuple[int, int]:
    """An incremental run's rows: row ranges of about as many entries as the scipy product's
    (:func:`~coderiv.pairs.counting.product_ranges`' bound, 1 + Σ (f_t − 1) over a document's
    eligible keys), each range's entries with an end in a recomputed row counted by the compiled
    loop and merged with the kept entries; (row ranges, shared pairs)."""
    n = store.n_docs
    doc_ptr, doc_keys = lists[3], lists[4]
    fixed = fixed_bytes(store, n, top, len(f_eligible), int(f_eligible.sum()))
    budget = min(range_pairs(memory or PAIRS_MEMORY, fixed), ROW_ENTRIES)
    owner = np.repeat(np.arange(n), np.diff(doc_ptr))
    bound = np.bincount(owner, weights=f_eligible[doc_keys].astype(np.float64) - 1, minlength=n).astype(np.int64) + 1
    del owner
    ranges = row_ranges(bound, budget)
    totals = np.add.reduceat(bound, [r0 for r0, _ in ranges]) if ranges else np.zeros(1, np.int64)
    capacity = int(totals.max())
    out = (np.empty(capacity, np.int64), np.empty(capacity, np.int32), np.empty(capacity, np.float64))
    if progress is not None:
        progress.start(n, "documents")
    shared_pairs = 0
    values = np.empty(n, np.float64)  # a row's percentages, before they are written out
    for r0, r1 in ranges:
        count, pairs = compiled.entries(lists, *tables, plan.rows, r0, r1, acc, partners, values, out)
        shared_pairs += pairs
        src, dst, val = out[0][:count], out[1][:count].astype(np.uint32), out[2][:count]
        built.add(plan.merge(src, dst, val, top, r0, r1))
        if progress is not None:
            progress.advance(r1 - r0)
    return len(ranges), shared_pairs


def _documents(n: int, d0: int, d1: int) -> np.ndarray:
    """Mask of documents d0 ≤ d < d1 among n."""
    mask = np.zeros(n, bool)
    mask[d0:d1] = True
    return mask


def similar(index: Index, doc_id: str, method: str = DEFAULT_METHOD) -> list[tuple[int, float, str]]:
    """(rank, percent, doc_id) of the stored most similar documents of ``doc_id``."""
    return PairTable.open(index, method).similar(doc_id)


def run_pairs(
    index: Index,
    method: str = DEFAULT_METHOD,
    top: int = DEFAULT_TOP,
    max_df: int | None = None,
    full: bool = False,
    engine: Engine = serial_engine,
    progress: Progress | None = None,
    memory: int | None = None,
) -> RunReport:
    """Compute (or bring up to date) and save the pair table of ``index`` for ``method``
    (``memory``: see :func:`compute_pairs`)."""
    pm = get_method(method)
    with PairTable.lock(index, pm.name):
        previous = None if full else PairTable.load_previous(index, pm.name)
        table, report = compute_pairs(index, pm.name, top, max_df, previous, engine, progress, memory)
        if report.mode != "unchanged":
            table.save(index, pm.name)
    return report


def open_for_pairs(
    index_dir: str | os.PathLike[str], method: str, progress: Progress | None = None,
    announce: Callable[[str], Any] | None = None,
) -> Index:
    """The index the pair tables of ``method`` belong to (a sharded index's one-index view),
    first adding the store ``method`` needs if it lacks it (re-reads the indexed source;
    ``announce`` is told so, ``progress`` follows the bytes read). What a build freed is given
    back to the system first (:func:`~coderiv.pairs.heap.release_free_heap`), so that the run's
    arrays do not come on top of it."""
    index = open_with_store(index_dir, get_method(method).store, announce=announce, progress=progress).pairs_index()
    release_free_heap()
    return index
