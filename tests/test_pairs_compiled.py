"""The compiled top-k loop of the set methods (pairs/compiled.py): hand-worked rows, and the
same tables, byte for byte, as the scipy product and the block path that sorts pair codes."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index
from coderiv.pairs import compiled
from coderiv.pairs import run as pairs_run
from coderiv.pairs.counting import Engine, serial_engine
from coderiv.pairs.row_ranking import RowBuilder
from coderiv.pairs.run import compute_pairs, run_pairs
from coderiv.pairs.table import PairTable
from tests.support.pairs import ALL_STORES, build, edit_docs, random_docs, rows_by_id

pytestmark = [pytest.mark.compiled, pytest.mark.skipif(not compiled.load(), reason="numba (coderiv[fast]) is not installed")]

ARRAYS = ("row_ptr", "targets", "values", "truncated")


@pytest.fixture(autouse=True)
def _compile_small_runs(monkeypatch):
    """The compiled loop for these small collections too (it starts at a million postings)."""
    monkeypatch.setattr(pairs_run, "COMPILED_MIN_POSTINGS", 0)


def _hand_lists():
    # eligible keys: 0 in documents 0, 1, 2; 1 in documents 1, 2; 2 in documents 2, 3
    key_ptr = np.array([0, 3, 5, 7], np.int64)
    key_docs = np.array([0, 1, 2, 1, 2, 2, 3], np.int32)
    return key_ptr, key_docs


def test_by_document_transposes_the_key_lists():
    key_ptr, key_docs = _hand_lists()
    key_vals = np.array([1, 2, 3, 4, 5, 6, 7], np.uint8)
    doc_ptr, doc_keys, doc_vals = compiled.by_document(key_ptr, key_docs, key_vals, 5)
    assert doc_ptr.tolist() == [0, 1, 3, 6, 7, 7]  # document 4 holds no eligible key
    assert doc_keys.tolist() == [0, 0, 1, 0, 1, 2, 2]
    assert doc_vals.tolist() == [1, 2, 4, 3, 5, 6, 7]
    _, _, no_vals = compiled.by_document(key_ptr, key_docs, np.empty(0, np.uint8), 5)
    assert len(no_vals) == 0


@pytest.mark.parametrize("resemblance", [True, False])
def test_top_rows_by_hand(resemblance):
    key_ptr, key_docs = _hand_lists()
    no_vals = np.empty(0, np.uint8)
    doc_ptr, doc_keys, doc_vals = compiled.by_document(key_ptr, key_docs, no_vals, 5)
    sizes = np.array([2, 2, 4, 1, 3], np.int64)  # sizes count skipped and single keys as well
    n, top = 5, 2
    acc = np.zeros(n, np.int32)
    built = RowBuilder(n, top)
    lists = (key_ptr, key_docs, no_vals, doc_ptr, doc_keys, doc_vals, sizes)
    kind = compiled.RESEMBLANCE if resemblance else compiled.CONTAINMENT
    tables = (np.zeros((1, 1), np.int64), np.ones(1), np.zeros(0, np.int64))
    buffers = (acc, np.empty(n, np.int32), np.empty(n, np.float64))
    counted = []
    for r0, r1 in ((0, 3), (3, 5)):  # two calls, each writing its own rows' CSR
        out = (np.empty(r1 - r0 + 1, np.int64), np.empty((r1 - r0) * top, np.uint32),
               np.empty((r1 - r0) * top, np.float64), np.empty(r1 - r0, bool))
        entries, found = compiled.top_rows(lists, kind, *tables, r0, r1, top, *buffers, out)
        built.add((out[0], out[1][:entries], out[2][:entries], out[3]))
        counted.append(found)
    pairs, more = counted
    row_ptr, targets, values, truncated = built.result()
    # shared: (0,1) 1, (0,2) 1, (1,2) 2, (2,3) 1: four pairs, three with the smaller end in 0..2
    assert (pairs, more) == (4, 0)
    assert not acc.any()  # the accumulator is left all zero
    assert row_ptr.tolist() == [0, 2, 4, 6, 7, 7]
    if resemblance:  # |A∩B| / (|A| + |B| − |A∩B|): document 2's partners 1 (50%), 3 (25%), 0 (20%)
        assert targets.tolist() == [1, 2, 2, 0, 1, 3, 2]
        want = [100 / 3, 20.0, 50.0, 100 / 3, 50.0, 25.0, 25.0]
    else:  # |A∩B| / |A|: document 2's partners 1 (50%), then 0 and 3 tie (25%): 0 first
        assert targets.tolist() == [1, 2, 2, 0, 1, 0, 2]
        want = [50.0, 50.0, 100.0, 50.0, 50.0, 25.0, 100.0]
    assert values.tolist() == want
    # document 2 has three partners (0, 1, 3) for a top of 2; ties broken by document number
    assert truncated.tolist() == [False, False, True, False, False]


def _block_path(tasks):  # another engine object: compute_pairs takes the block path with it
    return serial_engine(tasks)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10_000),
    method=st.sampled_from(["chunks", "resemblance", "identity5"]),
    max_df=st.sampled_from([None, 3, 4]),
    top=st.sampled_from([1, 3, 50]),
    steps=st.sampled_from([1, 3, 200]),
    threads=st.sampled_from([1, 2, 3]),
)
def test_compiled_gives_the_products_and_the_blocks_tables(
    tmp_path_factory, monkeypatch, seed, method, max_df, top, steps, threads
):
    monkeypatch.setattr(pairs_run, "COMPILED_STEPS", steps)
    monkeypatch.setattr(pairs_run, "PAIRS_THREADS", threads)
    tmp = tmp_path_factory.mktemp("comp")
    index = build(tmp / "c", random_docs(random.Random(seed), 20, vocab=12, length=24), tmp)
    blocks_engine: Engine = _block_path
    by_blocks, blocks_report = compute_pairs(index, method, top=top, max_df=max_df, engine=blocks_engine)
    by_compiled, compiled_report = compute_pairs(index, method, top=top, max_df=max_df)
    with monkeypatch.context() as patch:
        patch.setattr(compiled, "load", lambda: False)  # the scipy product (identity5: the blocks)
        by_product, product_report = compute_pairs(index, method, top=top, max_df=max_df)
    assert compiled_report.blocks == min(steps, index.n_docs)  # the compiled loop did run
    assert compiled_report.shared_pairs == product_report.shared_pairs == blocks_report.shared_pairs
    for name in ARRAYS:
        for other in (by_product, by_blocks):
            a, b = other.arrays[name], by_compiled.arrays[name]
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10_000),
    method=st.sampled_from(["chunks", "resemblance", "identity5"]),
    max_df=st.sampled_from([None, 3, 4]),
    top=st.sampled_from([1, 3, 50]),
    row_entries=st.sampled_from([2, 15, 8_000_000]),
)
def test_compiled_incremental_runs_give_the_other_paths_tables(
    tmp_path_factory, monkeypatch, seed, method, max_df, top, row_entries
):
    monkeypatch.setattr(pairs_run, "ROW_ENTRIES", row_entries)  # entries in several row ranges
    tmp = tmp_path_factory.mktemp("inc")
    rng = random.Random(seed)
    index = build(tmp / "c", random_docs(rng, 18, vocab=12, length=24), tmp)
    run_pairs(index, method, top=top, max_df=max_df)
    edit_docs(tmp / "c", rng)
    Index.update_from(tmp / "c", tmp / "idx", stores=ALL_STORES, workers=1)
    index = Index.open(tmp / "idx")
    previous = PairTable.load_previous(index, method)
    assert previous is not None
    blocks_engine: Engine = _block_path
    by_blocks, blocks_report = compute_pairs(index, method, top=top, max_df=max_df, previous=previous, engine=blocks_engine)
    calls: list[int] = []
    original = compiled.entries
    with monkeypatch.context() as patch:
        patch.setattr(compiled, "entries", lambda *a: calls.append(a[6]) or original(*a))  # r0 of each range
        by_compiled, compiled_report = compute_pairs(index, method, top=top, max_df=max_df, previous=previous)
    if compiled_report.mode == "incremental":
        assert calls and calls[0] == 0 and len(calls) == compiled_report.blocks
    with monkeypatch.context() as patch:
        patch.setattr(compiled, "load", lambda: False)  # the scipy product (identity5: the blocks)
        by_product, product_report = compute_pairs(index, method, top=top, max_df=max_df, previous=previous)
    full, _ = compute_pairs(index, method, top=top, max_df=max_df)
    assert compiled_report.mode == product_report.mode == blocks_report.mode
    assert compiled_report.shared_pairs == product_report.shared_pairs == blocks_report.shared_pairs
    for name in ARRAYS:
        for other in (by_product, by_blocks):
            a, b = other.arrays[name], by_compiled.arrays[name]
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    if compiled_report.mode == "incremental":  # and all equal a full recomputation
        assert rows_by_id(by_compiled) == rows_by_id(full)



def test_identity5_with_large_counts_and_lengths(tmp_path, monkeypatch):
    # counts past one byte (the values' side table) and very different document lengths: the
    # weight and length-factor tables span them, and the rows equal the block path's
    rng = random.Random(5)
    docs = random_docs(rng, 12, vocab=10, length=20)
    docs["big.txt"] = " ".join(["w1x"] * 300 + ["w2x"] * 7 + ["w3x"] * 260)
    docs["big2.txt"] = " ".join(["w1x"] * 280 + ["w3x"] * 2 + ["w4x"] * 40)
    index = build(tmp_path / "c", docs, tmp_path)
    assert int(np.asarray(index.store("terms").maxvals).max()) >= 300
    blocks_engine: Engine = _block_path
    by_blocks, _ = compute_pairs(index, "identity5", top=4, engine=blocks_engine)
    by_compiled, report = compute_pairs(index, "identity5", top=4)
    assert report.blocks > 0
    for name in ARRAYS:
        a, b = by_blocks.arrays[name], by_compiled.arrays[name]
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    # a weights table larger than the limit: the block path runs, the same table
    monkeypatch.setattr(pairs_run, "WEIGHT_TABLE_ENTRIES", 10)
    calls: list[str] = []
    original = pairs_run._rows_by_blocks
    monkeypatch.setattr(pairs_run, "_rows_by_blocks", lambda *a, **kw: calls.append("blocks") or original(*a, **kw))
    fallback, _ = compute_pairs(index, "identity5", top=4)
    assert calls == ["blocks"]
    for name in ARRAYS:
        assert fallback.arrays[name].tobytes() == by_compiled.arrays[name].tobytes(), name


def test_load_compiles_without_a_cache_when_numba_has_no_place_for_one(monkeypatch):
    import numba

    real = numba.njit

    def njit(*args, **options):
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real(*args, **options)

    monkeypatch.setattr(numba, "njit", njit)
    monkeypatch.setattr(compiled, "_KERNELS", compiled._KERNELS.fresh())
    assert compiled.load() and compiled.loaded()
    doc_ptr, _, _ = compiled.by_document(*_hand_lists(), np.empty(0, np.uint8), 5)
    assert doc_ptr.tolist() == [0, 1, 3, 6, 7, 7]


def test_small_runs_keep_the_other_paths(tmp_path, monkeypatch):
    index = build(tmp_path / "c", random_docs(random.Random(2), 10), tmp_path)
    calls: list[int] = []
    original = compiled.top_rows
    monkeypatch.setattr(compiled, "top_rows", lambda *a: calls.append(1) or original(*a))
    compute_pairs(index, "resemblance", top=3)
    assert calls  # (the fixture: every size)
    monkeypatch.setattr(pairs_run, "COMPILED_MIN_POSTINGS", 1_000_000)
    calls.clear()
    small, report = compute_pairs(index, "resemblance", top=3)
    assert not calls and report.blocks >= 1  # fewer eligible postings: the scipy product ran
