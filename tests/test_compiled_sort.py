"""A run's postings grouped by key: the compiled loop and the numpy path give exactly what the
(key, document) lexicographic sort of :func:`~coderiv.index.postings.group_by_key` gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index import compiled_sort
from coderiv.index.postings import group_by_key
from coderiv.keys import compiled_terms

numba_loaded = pytest.mark.skipif(not compiled_terms.available(), reason="numba (coderiv[fast]) not installed")

#: a few keys (so documents share them), colliding low and high bits, the extremes of uint64
KEYS = [0, 1, 5, 2**32, 2**32 + 1, 2**40, 2**63, 2**63 + 9, 2**64 - 1, 0x9E3779B97F4A7C15]


@st.composite
def runs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(keys, postings per document, values, first number): each document's keys distinct and
    ascending, some documents without postings, values up to 2^32 − 1."""
    pool = draw(st.lists(st.sampled_from(KEYS) | st.integers(0, 2**64 - 1), min_size=1, max_size=30, unique=True))
    docs = draw(st.lists(st.sets(st.sampled_from(pool), max_size=len(pool)), max_size=40))
    keys = [sorted(d) for d in docs]
    flat = np.array([k for d in keys for k in d], np.uint64)
    vals = np.array(draw(st.lists(st.integers(1, 2**32 - 1), min_size=len(flat), max_size=len(flat))), np.uint32)
    return flat, np.array([len(d) for d in keys], np.int64), vals, draw(st.integers(0, 2**31))


def _expected(keys: np.ndarray, counts: np.ndarray, vals: np.ndarray, first: int) -> list[np.ndarray]:
    docs = np.repeat(np.arange(first, first + len(counts), dtype=np.int64), counts)
    return list(group_by_key(keys, docs, vals))


def _check(keys: np.ndarray, counts: np.ndarray, vals: np.ndarray, first: int, compiled: bool) -> None:
    got = compiled_sort.group_run(keys, counts, first, vals, compiled=compiled)
    assert [a.dtype for a in got] == [np.uint64, np.uint32, np.uint32, np.uint32, np.uint32]
    for a, b in zip(got, _expected(keys, counts, vals, first)):
        assert np.array_equal(a, b)


@settings(max_examples=150, deadline=None)
@given(runs())
def test_numpy_path_equals_the_lexicographic_sort(run: tuple[np.ndarray, np.ndarray, np.ndarray, int]) -> None:
    _check(*run, compiled=False)


@numba_loaded
@settings(max_examples=150, deadline=None)
@given(runs())
def test_compiled_loop_equals_the_lexicographic_sort(run: tuple[np.ndarray, np.ndarray, np.ndarray, int]) -> None:
    assert compiled_terms.load() and compiled_sort.load()
    _check(*run, compiled=True)


@numba_loaded
def test_compiled_loop_on_a_large_zipfian_run() -> None:
    """100,000 postings of 2,000 documents over 5,000 Zipfian keys: many keys in many documents,
    hash-table probes past collisions."""
    assert compiled_terms.load() and compiled_sort.load()
    rng = np.random.default_rng(7)
    vocabulary = rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64)
    per_doc = [np.unique(vocabulary[np.minimum(rng.zipf(1.3, 80), 5000) - 1]) for _ in range(2000)]
    keys = np.concatenate(per_doc)
    counts = np.array([len(k) for k in per_doc], np.int64)
    vals = rng.integers(1, 400, len(keys)).astype(np.uint32)
    _check(keys, counts, vals, 65_530, compiled=True)
    _check(keys, counts, vals, 65_530, compiled=False)


def test_without_numba_loaded_the_numpy_path_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before :func:`coderiv.keys.compiled_terms.load` (a small job), no compiled loop is used."""
    monkeypatch.setattr(compiled_sort, "_KERNEL", None)
    monkeypatch.setattr(compiled_terms, "_KERNEL", None)
    assert not compiled_sort.load()
    keys = np.array([9, 3, 3, 7], np.uint64)
    _check(keys, np.array([1, 0, 1, 2], np.int64), np.array([1, 2, 3, 4], np.uint32), 0, compiled=True)
