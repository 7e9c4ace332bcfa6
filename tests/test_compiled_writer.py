"""The writer's compiled loops give exactly what their numpy paths give: a run's postings grouped
by key as the (key, document) lexicographic sort of :func:`~coderiv.index.format.postings.group_by_key`,
and the cosine statistics to the last bit."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index.builder import compiled_writer, cosine_statistics
from coderiv.index.cosine_bounds import class_norms
from coderiv.index.format.counts import CountValues
from coderiv.index.format.postings import Postings, from_forward, group_by_key
from coderiv.keys import compiled_terms

pytestmark = pytest.mark.compiled  # numba compiles (or loads) the writer's loops: the compiled tier

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
    got = compiled_writer.group_run(keys, counts, first, vals, compiled=compiled)
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
    assert compiled_terms.load() and compiled_writer.load()
    _check(*run, compiled=True)


@numba_loaded
def test_compiled_loop_on_a_large_zipfian_run() -> None:
    """100,000 postings of 2,000 documents over 5,000 Zipfian keys: many keys in many documents,
    hash-table probes past collisions."""
    assert compiled_terms.load() and compiled_writer.load()
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
    monkeypatch.setattr(compiled_writer, "_KERNELS", compiled_writer._KERNELS.fresh())
    monkeypatch.setattr(compiled_terms, "_KERNELS", compiled_terms._KERNELS.fresh())
    assert not compiled_writer.load()
    store = _store(20, 1)
    args = (store.docs, store.vals, np.asarray(store.ptr), np.ones(len(store.keys)), np.ones(70_000), np.array([len(store.keys)]), 20)
    assert compiled_writer.cosine_passes(*args) is None  # type: ignore[arg-type]


@numba_loaded
def test_a_store_of_another_layout_takes_the_numpy_path() -> None:
    """Values wider than a byte (an index of format 4): the compiled cosine loops decline."""
    assert compiled_terms.load() and compiled_writer.load()
    store = _store(20, 1)
    args = (store.docs, store.vals, np.asarray(store.ptr), np.ones(len(store.keys)), np.ones(70_000), np.array([len(store.keys)]), 20)
    assert compiled_writer.cosine_passes(*args) is not None  # type: ignore[arg-type]
    store.vals = CountValues(np.asarray(store.vals.low).astype(np.uint16))
    assert compiled_writer.cosine_passes(*args[:1], store.vals, *args[2:]) is None  # type: ignore[arg-type]
    keys = np.array([9, 3, 3, 7], np.uint64)
    _check(keys, np.array([1, 0, 1, 2], np.int64), np.array([1, 2, 3, 4], np.uint32), 0, compiled=True)


@functools.lru_cache(maxsize=2)
def _large_store(seed: int) -> Postings:
    """:func:`_store` of 70,000 documents, built once per seed (the tests only read it)."""
    return _store(70_000, seed)


def _store(n_docs: int, seed: int) -> Postings:
    """Documents past 65,536 (keys with several runs of high bits), values past 255 (the side
    table), a few documents without postings."""
    rng = np.random.default_rng(seed)
    keys = np.array([3, 8, 21, 2**40, 2**63 + 1, 99], np.uint64)
    per_doc = []
    for d in range(n_docs):
        mine = np.unique(rng.choice(keys, 0 if d % 997 == 5 else int(rng.integers(1, 4))))
        per_doc.append((mine, rng.choice([1, 1, 2, 3, 40, 254, 255, 256, 70_000], len(mine)).astype(np.int32)))
    return from_forward(per_doc)


@numba_loaded
@pytest.mark.parametrize("chunk", [1, 20_000, 10**9])
def test_compiled_cosine_passes_give_the_same_bits(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """W_d and the per-term bounds of the compiled passes equal the numpy passes' to the last
    bit, for one chunk, many chunks and one key per chunk; with a shard's collection-wide f_t."""
    store = _large_store(11)
    assert store.vals.escaped and len(store.docs.run_high) > len(store.keys)
    n = store.n_docs
    f_t = np.diff(np.asarray(store.ptr)) + np.arange(len(store.keys))
    for kwargs in ({}, {"f_t": f_t, "collection_size": 3 * n}):
        assert compiled_terms.load() and compiled_writer.load()
        compiled = cosine_statistics.cosine_statistics(store, n, chunk, **kwargs)  # type: ignore[arg-type]
        with monkeypatch.context() as patch:
            patch.setattr(compiled_writer, "cosine_passes", lambda *args: None)
            plain = cosine_statistics.cosine_statistics(store, n, chunk, **kwargs)  # type: ignore[arg-type]
        assert compiled[0].tobytes() == plain[0].tobytes()
        assert compiled[1].tobytes() == plain[1].tobytes()
        assert np.all(plain[0][[5, 997 + 5]] == 0) and np.all(plain[0] >= 0)


@numba_loaded
@pytest.mark.parametrize("chunk", [1, 20_000, None])
def test_compiled_class_norms_give_the_same_bytes(monkeypatch: pytest.MonkeyPatch, chunk: int | None) -> None:
    """The norm-class table (``class_norms``, whose per-class sums go through
    :func:`~coderiv.index.builder.cosine_statistics.row_squares`) is the numpy path's, with the store's own and with
    a shard's collection-wide statistics."""
    store = _large_store(12)
    n = store.n_docs
    f_t = np.diff(np.asarray(store.ptr)) * 2
    for kwargs in ({}, {"f_t": f_t, "collection_size": 2 * n}):
        assert compiled_terms.load() and compiled_writer.load()
        norms, _ = cosine_statistics.cosine_statistics(store, n, **kwargs)  # type: ignore[arg-type]
        compiled = class_norms(store, n, norms, chunk=chunk, **kwargs)  # type: ignore[arg-type]
        with monkeypatch.context() as patch:
            patch.setattr(compiled_writer, "row_squares", lambda *args: None)
            plain = class_norms(store, n, norms, chunk=chunk, **kwargs)  # type: ignore[arg-type]
        assert compiled[0].tobytes() == plain[0].tobytes() and compiled[1].tobytes() == plain[1].tobytes()
        assert compiled[0].max() == 255 and compiled[0].min() == 0  # some classes hold a whole norm, some none
