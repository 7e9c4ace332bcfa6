"""The compiled loops of the cosine top-k (coderiv.ranking.compiled_probes) give the numpy passes'
sums: over stores whose document numbers span several runs of high bits (more than 65,536
documents) and whose counts escape to the side table (≥ 255); run as plain Python too, so the
loops' logic is checked where numba is missing; and loaded only once worth it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv.index.format.counts import CountValues
from coderiv.index.format.encoded import narrow
from coderiv.index.format.postings import Postings, group_by_key
from coderiv.index.format.split_numbers import SplitNumbers
from coderiv.index.index import Index
from coderiv.ranking import compiled_probes
from coderiv.ranking.batch import Limits, query_documents
from coderiv.ranking.search import MeasureSearcher
from tests.support.files import write_docs

pytestmark = pytest.mark.compiled  # numba compiles (or loads) the query loops: the compiled tier

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_store(n_docs: int, postings: list[list[tuple[int, int]]]) -> Postings:
    """A store of keys 0, 1, … with the given (document, count) postings each."""
    keys = np.array([k for k, plist in enumerate(postings) for _ in plist], np.uint64)
    docs = np.array([d for plist in postings for d, _ in plist], np.int64)
    vals = np.array([v for plist in postings for _, v in plist], np.int64)
    keys, counts, docs, vals, maxvals = group_by_key(keys, docs, vals)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return Postings(n_docs, keys, ptr, SplitNumbers.encode(docs.astype(np.uint32)), CountValues.encode(vals), narrow(maxvals))


def arrays(store: Postings) -> tuple[np.ndarray, ...]:
    numbers, values = store.docs, store.vals
    return (numbers.low, numbers.run_at, numbers.run_high, values.low,
            np.asarray(values.over_at, np.int64), np.asarray(values.over_val, np.int64))


@st.composite
def stores(draw: st.DrawFn) -> tuple[Postings, np.ndarray]:
    """A store over up to 200,000 documents (so up to 4 runs of high bits per key), counts up to
    300 (some escaped), and a per-(key, count) contribution table."""
    n_docs = draw(st.sampled_from([5, 1_000, 70_000, 200_000]))
    n_keys = draw(st.integers(1, 6))
    postings = []
    for _ in range(n_keys):
        docs = draw(st.lists(st.integers(0, n_docs - 1), min_size=1, max_size=60, unique=True))
        counts = draw(st.lists(st.sampled_from([1, 2, 3, 254, 255, 256, 300]), min_size=len(docs), max_size=len(docs)))
        postings.append(list(zip(docs, counts)))
    store = make_store(n_docs, postings)
    return store, np.random.default_rng(len(store.docs)).random(int(np.asarray(store.maxvals, np.int64).sum()) + n_keys)


def offsets_of(store: Postings, keys: np.ndarray) -> np.ndarray:
    top = np.asarray(store.maxvals, np.int64)[keys]
    return np.concatenate(([0], np.cumsum(top + 1)[:-1])).astype(np.int64)


def expected_partial(store: Postings, keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    docs, vals, lengths = store.slices(keys)
    partial: np.ndarray = np.bincount(docs, weights=table[np.repeat(offsets_of(store, keys), lengths) + vals], minlength=store.n_docs)
    return partial


def expected_sums(store: Postings, keys: np.ndarray, table: np.ndarray, docs: np.ndarray) -> np.ndarray:
    ptr = np.asarray(store.ptr)
    owner = np.repeat(np.arange(len(keys)), len(docs))
    at = store.docs.search(ptr[keys], ptr[keys + 1], np.tile(docs, len(keys)), owner)
    hit = np.flatnonzero(at >= 0)
    values = table[offsets_of(store, keys)[owner[hit]] + store.vals.take(at[hit]).astype(np.int64)]
    sums: np.ndarray = np.bincount(hit % len(docs), weights=values, minlength=len(docs))
    return sums


def key_range(store: Postings, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.asarray(store.ptr, np.int64)
    return ptr[keys], ptr[keys + 1]


def run_loops(compiled: bool, store: Postings, keys: np.ndarray, table: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    starts, ends = key_range(store, keys)
    partial, sums = np.zeros(store.n_docs), np.zeros(len(docs))
    accumulate = compiled_probes.accumulate if compiled else compiled_probes._accumulate
    probe = compiled_probes.probe if compiled else compiled_probes._probe
    touched = np.zeros(store.n_docs, bool)
    accumulate(*arrays(store), starts, ends, offsets_of(store, keys), table, partial, touched)
    assert touched.tolist() == np.isin(np.arange(store.n_docs), store.slices(keys)[0]).tolist()
    again = np.zeros(store.n_docs)
    accumulate(*arrays(store), starts, ends, offsets_of(store, keys), table, again, np.zeros(0, bool))
    assert again.tolist() == partial.tolist()
    probe(*arrays(store), starts, ends, offsets_of(store, keys), table, docs, sums)
    return partial, sums


def check_loops(compiled: bool, data: tuple[Postings, np.ndarray], picks: st.DataObject) -> None:
    store, table = data
    n_keys = len(store.keys)
    keys = np.array(picks.draw(st.lists(st.integers(0, n_keys - 1), min_size=1, max_size=n_keys, unique=True)), np.int64)
    present = np.asarray(store.docs[:]).astype(np.int64)
    wanted = picks.draw(st.lists(st.one_of(st.sampled_from(present.tolist()), st.integers(0, store.n_docs - 1)), max_size=40))
    docs = np.unique(np.array(wanted, np.int64))
    partial, sums = run_loops(compiled, store, keys, table, docs)
    np.testing.assert_allclose(partial, expected_partial(store, keys, table), rtol=1e-12, atol=0)
    np.testing.assert_allclose(sums, expected_sums(store, keys, table, docs), rtol=1e-12, atol=0)


@PROPERTY
@given(data=stores(), picks=st.data())
def test_plain_python_loops_give_the_numpy_sums(data: tuple[Postings, np.ndarray], picks: st.DataObject) -> None:
    check_loops(False, data, picks)


@PROPERTY
@given(data=stores(), picks=st.data())
def test_compiled_loops_give_the_numpy_sums(data: tuple[Postings, np.ndarray], picks: st.DataObject) -> None:
    pytest.importorskip("numba")
    assert compiled_probes.load()
    check_loops(True, data, picks)


def test_a_hand_made_store_with_runs_and_escapes() -> None:
    """Key 0: documents 3 (count 1), 65,540 (count 300, escaped) and 140,000 (count 2), in three
    runs; key 1: document 65,540 (count 255, escaped too). Contributions table[offset + f_dt]."""
    store = make_store(150_000, [[(3, 1), (65_540, 300), (140_000, 2)], [(65_540, 255)]])
    assert len(store.docs.run_at) - 1 == 4 and store.vals.escaped
    table = np.zeros(301 + 256)
    table[[1, 300, 2]] = [0.5, 7.0, 0.25]
    table[301 + 255] = 11.0
    keys, docs = np.array([0, 1]), np.array([3, 4, 65_540, 140_000])
    for compiled in ([False, True] if compiled_probes.available() and compiled_probes.load() else [False]):
        partial, sums = run_loops(compiled, store, keys, table, docs)
        assert (partial[3], partial[65_540], partial[140_000], partial.sum()) == (0.5, 18.0, 0.25, 18.75)
        assert sums.tolist() == [0.5, 0.0, 18.0, 0.25]


def test_above_lists_the_documents_whose_bound_reaches_theta() -> None:
    """bound = lower + constant + Σ_c weights[c]·table[c]: 0.1 + 0.2 + 0.5·[2, 0, 4, 1] … """
    lower = np.array([0.1, 0.9, 0.0, 0.3])
    table = np.array([[2, 0, 4, 1], [9, 9, 9, 9]], np.uint8)
    weights = np.array([0.5, 0.0])
    # bounds: 1.3, 1.1, 2.2, 1.0
    expected_all, expected_even = [0, 1, 2], [0, 2]
    pytest.importorskip("numba")
    assert compiled_probes.load()
    assert compiled_probes.above(lower, 0.2, table, weights, 1.05, 1).tolist() == expected_all
    assert compiled_probes.above(lower, 0.2, table, weights, 1.05, 2).tolist() == expected_even
    assert compiled_probes.above(lower, 0.2, table, weights, 5.0, 1).tolist() == []


@contextmanager
def fresh_rule() -> Iterator[mock.MagicMock]:
    """The load rule's state as in a new process with numba installed; ``load`` recorded."""
    with mock.patch.object(compiled_probes, "_KERNELS", compiled_probes._KERNELS.fresh()), \
            mock.patch.object(compiled_probes, "_SPENT", 0.0), mock.patch.object(compiled_probes, "_PLANNED", None), \
            mock.patch.object(compiled_probes, "_HOLD", 0), mock.patch.object(compiled_probes, "available", lambda: True), \
            mock.patch.object(compiled_probes, "load", return_value=True) as load:
        yield load


def test_the_loops_load_once_the_numpy_passes_have_cost_as_much() -> None:
    """Rent or buy: numba is imported only after LOAD_AFTER_SECONDS of CPU in the numpy passes
    (no batch planned: the rule's whole state reset, whatever earlier tests left in it)."""
    with fresh_rule() as load:
        assert not compiled_probes.note_numpy_work(compiled_probes.LOAD_AFTER_SECONDS * 0.75)
        load.assert_not_called()
        assert compiled_probes.note_numpy_work(compiled_probes.LOAD_AFTER_SECONDS * 0.25)
        load.assert_called_once()


def test_a_batch_that_repays_the_load_loads_at_its_first_query() -> None:
    """20 queries of 0.05 s each: the 19 left would cost 0.95 s in numpy, of which the loops
    save 0.6 · 0.95 = 0.57 s > 0.4 s: load at once."""
    with fresh_rule() as load:
        compiled_probes.expect_queries(20)
        assert compiled_probes.note_numpy_work(0.05)
        load.assert_called_once()


def test_a_batch_too_small_to_repay_the_load_never_loads() -> None:
    """10 queries of 0.05 s: 0.6 · 9 · 0.05 = 0.27 s < 0.4 s, so no load, even after the
    rent-or-buy threshold is passed within the batch; after the batch the rule applies again."""
    with fresh_rule() as load:
        compiled_probes.expect_queries(10)
        assert not any(compiled_probes.note_numpy_work(0.05) for _ in range(10))
        load.assert_not_called()
        assert compiled_probes._SPENT >= compiled_probes.LOAD_AFTER_SECONDS
        assert compiled_probes.note_numpy_work(0.05)  # an 11th query: no plan covers it
        load.assert_called_once()


def test_a_batch_of_unknown_size_rents_then_buys() -> None:
    with fresh_rule() as load:
        compiled_probes.expect_queries(None)
        assert not compiled_probes.note_numpy_work(0.3)
        assert compiled_probes.note_numpy_work(0.1)
        load.assert_called_once()


def test_without_numba_the_numpy_passes_stay() -> None:
    with mock.patch.object(compiled_probes, "_KERNELS", compiled_probes._KERNELS.fresh()), \
            mock.patch.object(compiled_probes, "_SPENT", 0.0), mock.patch.object(compiled_probes, "available", lambda: False):
        assert not compiled_probes.note_numpy_work(10 * compiled_probes.LOAD_AFTER_SECONDS)
        assert not compiled_probes.loaded()


def test_coderiv_query_announces_its_batch(tmp_path: Path) -> None:
    """query_documents tells the load rule how many queries follow: three files and one id."""
    write_docs(tmp_path / "docs", {"a.txt": "kiwi mango lemon", "b.txt": "kiwi lime", "c.txt": "lemon lime"})
    Index.update_from(tmp_path / "docs", tmp_path / "idx", workers=1)
    index = Index.open(tmp_path / "idx")
    paths = [str(tmp_path / "docs" / name) for name in ("a.txt", "b.txt", "c.txt")]
    with mock.patch.object(compiled_probes, "expect_queries") as expect:
        items = list(query_documents(index, MeasureSearcher(index, "cosine"), paths, ["b.txt"], Limits(2, 0.0)))
    expect.assert_called_once_with(4)
    assert len(items) == 4


def test_the_loops_compile_from_an_empty_cache(tmp_path: Path) -> None:
    """The loops call the codec's packed-run helpers (index.format.packed_runs, one calling
    another): compiled from nothing, in a new process with an empty numba cache, they load."""
    script = "from coderiv.ranking import compiled_probes; print(compiled_probes.load())"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["True"]
