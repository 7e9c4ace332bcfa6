"""Running n-to-n pairs on an index: compute the table (in full, or incrementally from the stored
one), store it, read a document's row; and open an index with the store a method needs."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from coderiv.index.index import Index
from coderiv.index.index import open_with_store as open_index_with_store
from coderiv.keys.kinds import StoreSpec
from coderiv.pairs.engine import (
    DEFAULT_METHOD,
    DEFAULT_TOP,
    Engine,
    RunReport,
    SharedPairs,
    aggregate,
    block_count,
    default_max_df,
    directed_values,
    get_method,
    join_rows,
    key_view,
    keys_holding,
    plan_blocks,
    row_ranges,
    select_top,
    serial_engine,
)
from coderiv.pairs.table import PairTable
from coderiv.progress import Progress


def compute_pairs(
    index: Index,
    method: str = DEFAULT_METHOD,
    top: int = DEFAULT_TOP,
    max_df: int | None = None,
    previous: PairTable | None = None,
    engine: Engine = serial_engine,
    progress: Progress | None = None,
) -> tuple[PairTable, RunReport]:
    """The pair table of ``index`` (incrementally from ``previous`` when it can be reused)."""
    pm = get_method(method)
    store = index.store(pm.store.name)
    n = index.n_docs
    m = max_df if max_df is not None else default_max_df(n)
    view = key_view(store, m, pm.measure)
    lengths = np.asarray(index.doc_lengths) if pm.measure else None

    plan = None if previous is None else previous.incremental_plan(index, pm.name, top, max_df, store, view)
    if plan is not None and plan.unchanged:
        assert previous is not None
        return previous, RunReport(
            pm.name, "unchanged", n, 0, 0, 0, m, len(view.skipped_keys), view.skipped_postings, plan.reason
        )
    rows = None if plan is None else plan.rows
    f = store.doc_freqs
    eligible = view.used & (f >= 2)
    if rows is not None:  # only keys holding a recomputed document
        eligible &= keys_holding(store, rows)
    positions = np.flatnonzero(eligible)
    results = []
    if progress is not None:
        progress.start(block_count(store, positions), "blocks")
    for number, codes, sums in engine(plan_blocks(store, positions, pm.measure, rows)):
        results.append((number, codes, sums))
        if progress is not None:
            progress.advance(1)
    results.sort(key=lambda r: r[0])
    blocks = len(results)
    codes, shared = aggregate(
        np.concatenate([r[1] for r in results]) if results else np.empty(0, np.uint64),
        np.concatenate([r[2] for r in results]) if results else None,
    )
    shared_pairs = len(codes)
    del results
    pairs = SharedPairs.from_codes(codes, shared, n)
    del codes, shared
    counts = pairs.row_counts(n)
    if plan is not None:
        counts += np.bincount(plan.kept_src, minlength=n)
    pieces = []
    for r0, r1 in row_ranges(counts):
        src, dst, weight = pairs.rows(r0, r1)
        val = directed_values(pm, src, dst, weight, view.sizes, lengths)
        if plan is None:
            pieces.append(select_top(src - r0, dst, val, top, r1 - r0))
        else:
            pieces.append(plan.merge(src, dst, val, top, r0, r1))
    row_ptr, targets, values, truncated = join_rows(pieces)
    recomputed, mode = (n, "full") if plan is None else (int(plan.rows.sum()), "incremental")
    table = PairTable.create(index, pm, top, max_df, view, row_ptr, targets, values, truncated)
    report = RunReport(
        pm.name, mode, n, recomputed, blocks, shared_pairs, m,
        len(view.skipped_keys), view.skipped_postings, "" if plan is None else plan.reason,
    )
    return table, report


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
) -> RunReport:
    """Compute (or bring up to date) and save the pair table of ``index`` for ``method``."""
    pm = get_method(method)
    with PairTable.lock(index, pm.name):
        previous = None if full else PairTable.load_previous(index, pm.name)
        table, report = compute_pairs(index, pm.name, top, max_df, previous, engine, progress)
        if report.mode != "unchanged":
            table.save(index, pm.name)
    return report


def require_store(index: Index, method: str) -> StoreSpec | None:
    """The store ``method`` needs when the index lacks it (None when present)."""
    spec = get_method(method).store
    return None if spec.name in index.specs else spec


def open_with_store(
    index_dir: str | os.PathLike[str], method: str, progress: Progress | None = None,
    notice: Callable[[str], Any] | None = None,
) -> Index:
    """Open the index, first adding the store ``method`` needs if it lacks it (re-reads the
    indexed source; ``notice`` is told so, ``progress`` follows the bytes read)."""
    return open_index_with_store(index_dir, get_method(method).store, progress, notice)
