"""The set methods' sparse product (pairs/counting.py: incidence, product_rows) and the grouped
top-k: hand-worked counts, and the same tables as the block path that sorts pair codes."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index
from coderiv.index.format.postings import from_forward
from coderiv.pairs.counting import Engine, incidence, product_ranges, product_rows, serial_engine
from coderiv.pairs.eligibility import key_freqs
from coderiv.pairs.row_ranking import kth_largest, select_top, select_top_grouped
from coderiv.pairs.run import compute_pairs, run_pairs
from coderiv.pairs.table import PairTable
from tests.support.pairs import ALL_STORES, build, edit_docs, random_docs

ARRAYS = ("row_ptr", "targets", "values", "truncated")


def _store():
    # key 10 in documents 0, 1, 2; key 20 in documents 1, 2; key 30 in document 3 only
    return from_forward([
        (np.array([10], np.uint64), np.ones(1, np.int32)),
        (np.array([10, 20], np.uint64), np.ones(2, np.int32)),
        (np.array([10, 20], np.uint64), np.ones(2, np.int32)),
        (np.array([30], np.uint64), np.ones(1, np.int32)),
    ])


def test_product_rows_count_shared_keys_both_ways():
    store = _store()
    f = key_freqs(store)
    eligible = f >= 2
    keys_docs, docs_keys = incidence(store, eligible, f)
    assert keys_docs.shape == (2, 4) and docs_keys.shape == (4, 2)
    src, dst, shared = product_rows(docs_keys, keys_docs, 0, 4)
    got = sorted(zip(src.tolist(), dst.tolist(), shared.tolist()))
    # (0,1): 1, (0,2): 1, (1,2): 2 in both directions; document 3 shares nothing, no diagonal
    assert got == [(0, 1, 1), (0, 2, 1), (1, 0, 1), (1, 2, 2), (2, 0, 1), (2, 1, 2)]
    # rows 1..2 only, and only entries with an end in document 0
    rows = np.array([True, False, False, False])
    src, dst, shared = product_rows(docs_keys, keys_docs, 1, 3, rows)
    assert sorted(zip(src.tolist(), dst.tolist(), shared.tolist())) == [(1, 0, 1), (2, 0, 1)]
    # a document's row bound is 1 + Σ (f_t − 1): 3, 4, 4, 1 (cumulated 3, 7, 11, 12); a range
    # ends at the row that crosses each multiple of the budget (row_ranges' cut)
    assert product_ranges(docs_keys, f[eligible], 5) == [(0, 2), (2, 3), (3, 4)]
    assert product_ranges(docs_keys, f[eligible], 100) == [(0, 4)]


def test_kth_largest_of_each_row():
    val = np.array([5.0, 1.0, 3.0, 3.0, 2.0, 9.0, 0.5, 7.0, 7.0])
    starts, counts = np.array([0, 5]), np.array([5, 4])
    assert kth_largest(val, starts, counts, 2).tolist() == [3.0, 7.0]
    assert kth_largest(val, starts, counts, 4).tolist() == [2.0, 0.5]


@settings(max_examples=60, deadline=None)
@given(
    counts=st.lists(st.integers(0, 40), min_size=1, max_size=12),
    k=st.integers(1, 6),
    levels=st.integers(1, 5),
    seed=st.integers(0, 1000),
)
def test_grouped_top_equals_the_full_sort(counts, k, levels, seed):
    # few distinct values: many ties at the k-th value, broken by document number
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(len(counts)), counts)
    dst = np.concatenate([rng.permutation(100)[:c] for c in counts]).astype(np.uint32) if src.size else np.empty(0, np.uint32)
    val = rng.integers(0, levels, len(src)) * 12.5
    want = select_top(src, dst, val, k, len(counts))
    got = select_top_grouped(src, dst, val, k, len(counts))
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def _block_path(tasks):  # another engine object: compute_pairs takes the block path with it
    return serial_engine(tasks)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10_000),
    method=st.sampled_from(["chunks", "resemblance"]),
    max_df=st.sampled_from([None, 3, 4]),
    row_entries=st.sampled_from([3, 20, 8_000_000]),
)
def test_product_gives_the_block_paths_tables(tmp_path_factory, monkeypatch, seed, method, max_df, row_entries):
    from coderiv.pairs import eligibility, row_ranking

    monkeypatch.setattr(row_ranking, "ROW_ENTRIES", row_entries)  # product rows in several ranges
    monkeypatch.setattr(eligibility, "POSTINGS_STEP", 40)  # whole-store passes in several steps
    tmp = tmp_path_factory.mktemp("prod")
    rng = random.Random(seed)
    index = build(tmp / "c", random_docs(rng, 18, vocab=14, length=24), tmp)
    blocks_engine: Engine = _block_path
    by_blocks, blocks_report = compute_pairs(index, method, top=3, max_df=max_df, engine=blocks_engine)
    by_product, product_report = compute_pairs(index, method, top=3, max_df=max_df)
    assert product_report.shared_pairs == blocks_report.shared_pairs
    for name in ARRAYS:
        a, b = by_blocks.arrays[name], by_product.arrays[name]
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    # incremental: both paths update the same stored table to the same rows
    run_pairs(index, method, top=3, max_df=max_df)
    edit_docs(tmp / "c", rng)
    Index.update_from(tmp / "c", tmp / "idx", stores=ALL_STORES, workers=1)
    index = Index.open(tmp / "idx")
    previous = PairTable.load_previous(index, method)
    assert previous is not None
    inc_blocks, r1 = compute_pairs(index, method, top=3, max_df=max_df, previous=previous, engine=blocks_engine)
    inc_product, r2 = compute_pairs(index, method, top=3, max_df=max_df, previous=previous)
    assert r1.mode == r2.mode == "incremental" and r1.shared_pairs == r2.shared_pairs
    for name in ARRAYS:
        assert np.array_equal(inc_blocks.arrays[name], inc_product.arrays[name]), name


def test_identity5_and_dask_keep_the_block_path(tmp_path: Path, monkeypatch):
    calls: list[str] = []
    from coderiv.pairs import run as pairs_run

    monkeypatch.setattr("coderiv.pairs.compiled.load", lambda: False)  # no compiled loop
    original = pairs_run._rows_by_blocks
    monkeypatch.setattr(pairs_run, "_rows_by_blocks", lambda *a, **kw: calls.append("blocks") or original(*a, **kw))
    index = build(tmp_path / "c", random_docs(random.Random(3), 8), tmp_path)
    compute_pairs(index, "identity5", top=3)
    compute_pairs(index, "chunks", top=3)
    compute_pairs(index, "chunks", top=3, engine=_block_path)
    assert calls == ["blocks", "blocks"]

