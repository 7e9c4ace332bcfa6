"""A pairs run's memory: whole-store passes that make no copy of a whole key array, the compiled
loop run without the store's per-key arrays, and the heap a store build freed given back
before the run (pairs/eligibility.py, pairs/run.py, pairs/heap.py)."""

from __future__ import annotations

import random
import tracemalloc
import weakref
from pathlib import Path

import numpy as np
import pytest

from coderiv.index.format.postings import Postings, from_forward
from coderiv.pairs import compiled, eligibility, heap
from coderiv.pairs.eligibility import key_ranges
from coderiv.pairs.run import compute_pairs
from tests.support.pairs import build, random_docs


def _one_posting_per_key(n_keys: int) -> Postings:
    """A presence store of ``n_keys`` keys, key i in document i % 7 only (ptr: uint32)."""
    keys = np.arange(n_keys, dtype=np.uint64)
    return from_forward([(keys[d::7], np.ones(len(keys[d::7]), np.int32)) for d in range(7)])


def test_key_ranges_search_the_offsets_without_a_wider_copy():
    """Cutting a store of 1M keys into steps of 1,000 postings searches its uint32 offsets as
    they are: before, the int64 needles made numpy search an int64 copy of the whole ``ptr``
    (8 MB here, 128 MB for the 16M keys of 2,500 long documents' 4-shingles)."""
    store = _one_posting_per_key(1_000_000)
    ptr = np.asarray(store.ptr)
    assert ptr.dtype == np.uint32 and ptr.nbytes == 4_000_004
    tracemalloc.start()
    try:
        ranges = list(key_ranges(store, step=1000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ranges[:2] == [(0, 1000), (1000, 2000)] and ranges[-1] == (999_000, 1_000_000) and len(ranges) == 1000
    assert peak < ptr.nbytes // 4  # the needles and cuts (1,000 each), nothing a key


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists() or heap._trim() is None, reason="needs Linux with glibc")
def test_release_free_heap_gives_back_the_holes_a_run_of_arrays_left():
    """Arrays of 96 KB come from malloc's heap (below its mmap threshold); freeing every other
    one of 1,000 leaves ~48 MB of free holes that the process keeps resident until
    ``malloc_trim`` returns them."""
    arrays = [np.ones(96 << 10, np.uint8) for _ in range(1000)]
    del arrays[::2]
    before = _rss_kb()
    assert heap.release_free_heap() is True
    after = _rss_kb()
    assert before - after > 30_000, (before, after)
    assert all(int(a[-1]) == 1 for a in arrays)  # the live half untouched


@pytest.mark.compiled
@pytest.mark.skipif(not compiled.load(), reason="numba (coderiv[fast]) is not installed")
@pytest.mark.parametrize("method", ["resemblance", "identity5"])
def test_the_compiled_loop_runs_without_the_stores_per_key_arrays(tmp_path, monkeypatch, method):
    """Every key's frequency (4 bytes) and eligibility (1) are gone once the eligible postings
    are listed: the transpose and the loop run without them (80 MB for the 16M keys of 2,500
    long documents' 4-shingles), and the table is the one of a run that kept them."""
    from coderiv.pairs import run as pairs_run

    monkeypatch.setattr(pairs_run, "COMPILED_MIN_POSTINGS", 0)
    index = build(tmp_path / "c", random_docs(random.Random(5), 14, vocab=30, length=25), tmp_path)
    expected, _ = compute_pairs(index, method)
    made: list[weakref.ref[np.ndarray]] = []

    def key_freqs(store: Postings) -> np.ndarray:
        f = eligibility.key_freqs(store)
        made.append(weakref.ref(f))
        return f

    alive_at_transpose: list[bool] = []

    def by_document(*args: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        alive_at_transpose.append(made[0]() is not None)
        return real_by_document(*args)  # type: ignore[arg-type]

    real_by_document = compiled.by_document
    monkeypatch.setattr(pairs_run, "key_freqs", key_freqs)
    monkeypatch.setattr(compiled, "by_document", by_document)
    table, _ = compute_pairs(index, method)
    assert alive_at_transpose == [False]
    for name in ("row_ptr", "targets", "values", "truncated"):
        assert np.array_equal(table.arrays[name], expected.arrays[name]) and table.arrays[name].dtype == expected.arrays[name].dtype
