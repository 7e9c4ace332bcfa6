"""index/mapped_pages.py: a memory-mapped store's pages leave the resident set (Linux), the data
read the same afterwards, and in-memory arrays are left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coderiv.index.format import integrity
from coderiv.index.format.integrity import load_npy
from coderiv.index.format.postings import Postings, from_forward
from coderiv.pairs.eligibility import release_pages
from coderiv.system.mapped_pages import RESIDENCY, Residency, release_arrays, release_store
from tests.support.resident import HAS_SMAPS, resident_kb

pytestmark = pytest.mark.skipif(not HAS_SMAPS, reason="needs Linux's /proc/self/smaps")


def _saved_store(tmp_path: Path) -> tuple[Path, list]:
    # keys over 32 bits: a plain keys.npy of 8 bytes a key (keys that fit 32 bits are split)
    docs = [
        (np.arange(i, i + 20_000, dtype=np.uint64) * 7 + np.uint64(1 << 32), np.ones(20_000, np.int32))
        for i in range(0, 200_000, 5_000)
    ]
    from_forward(docs).save(tmp_path / "s")
    return tmp_path / "s", docs


def test_a_loaded_store_keeps_no_page_of_its_checks_and_a_pass_is_released(tmp_path):
    folder, docs = _saved_store(tmp_path)
    store = Postings.load(folder, len(docs))
    keys_file, docs_file = str(folder / "keys.npy"), str(folder / "docs.npy")
    assert resident_kb(keys_file) == 0 and resident_kb(docs_file) == 0  # the open's checks released
    want = np.asarray(store.keys).copy()  # reads every page of keys.npy
    low = np.asarray(store.docs.low).copy()
    assert resident_kb(keys_file) > 500  # 220,000 keys of 8 bytes: about 1.8 MB
    release_pages(store)  # pairs' name for it
    assert resident_kb(keys_file) == 0 and resident_kb(docs_file) == 0
    assert np.array_equal(np.asarray(store.keys), want)  # the data are read again from the file
    assert np.array_equal(np.asarray(store.docs.low), low)


def test_a_pass_over_a_split_store_releases_its_keys_and_offsets(tmp_path):
    """A chunk-like store (keys below 2³²: split, format 8) keeps its keys' and offsets' low
    bits in a holder of their own; a release reaches them too."""
    docs = [(np.arange(i, i + 20_000, dtype=np.uint64) * 7, np.ones(20_000, np.int32)) for i in range(0, 200_000, 5_000)]
    from_forward(docs).save(tmp_path / "s")
    store = Postings.load(tmp_path / "s", len(docs), split=True)
    keys_file, ptr_file = str(tmp_path / "s" / "keys.npy"), str(tmp_path / "s" / "ptr.npy")
    want_keys, want_ptr = np.asarray(store.keys), np.asarray(store.ptr)  # decoded whole: every page read
    assert resident_kb(keys_file) > 300 and resident_kb(ptr_file) > 300  # 220,000 keys of 2 bytes: 440 KB each
    release_pages(store)
    assert resident_kb(keys_file) == 0 and resident_kb(ptr_file) == 0
    assert np.array_equal(store.keys, want_keys) and np.array_equal(store.ptr, want_ptr)
    assert want_keys[-1] == (195_000 + 19_999) * 7 and want_ptr[-1] == 40 * 20_000


def test_arrays_in_memory_are_left_alone():
    store = from_forward([(np.array([1, 2], np.uint64), np.ones(2, np.int32))])
    release_store(store)  # nothing mapped: no error, nothing changed
    release_arrays([np.arange(3), None, 7, "text"])
    assert np.asarray(store.keys).tolist() == [1, 2]


def test_residency_releases_every_registered_map_once_its_budget_may_be_resident(tmp_path):
    """What may be resident is what was read of each array since the last release, at most its
    size: reading one array over and over never passes a budget larger than it; reading a
    second one does, and then every registered array's pages are released (once), and the data
    read afterwards are the same."""
    paths = [tmp_path / f"a{i}.npy" for i in range(2)]
    for i, path in enumerate(paths):
        np.save(path, np.arange(i, i + 300_000, dtype=np.int64))  # 2.4 MB each
    arrays = [load_npy(path) for path in paths]
    residency = Residency(budget=3_000_000)
    keys = [residency.add(array) for array in arrays]
    total = [int(a.sum()) for a in arrays]  # every page of both read
    assert [resident_kb(str(p)) > 2000 for p in paths] == [True, True]
    for _ in range(10):
        residency.reading(keys[0], 1_000_000)  # 10 MB read of a 2.4 MB array: at most 2.4 MB resident
    assert residency.releases == 0 and residency.resident == 2_400_000
    assert [resident_kb(str(p)) > 2000 for p in paths] == [True, True]
    residency.reading(keys[1], 600_000)  # 3.0 MB may be resident: the budget
    assert residency.releases == 1 and residency.resident == 0 and [resident_kb(str(p)) for p in paths] == [0, 0]
    assert [int(a.sum()) for a in arrays] == total == [44_999_850_000, 45_000_150_000]
    residency.reading(keys[0], 2_000_000)
    assert residency.releases == 1 and residency.resident == 2_000_000  # counted again from the release


def test_a_large_store_file_s_reads_are_counted_and_released(tmp_path, monkeypatch):
    """A store whose files are "large" (the threshold lowered to 512 KB here) reports its reads
    to the process's residency, which releases them as its budget is reached: the query's
    answer is the same, and keys.npy holds fewer pages than with no release."""
    folder, docs = _saved_store(tmp_path)
    monkeypatch.setattr(integrity, "LARGE_FILE", 1 << 19)
    monkeypatch.setattr(RESIDENCY, "budget", 1 << 19)
    monkeypatch.setattr(RESIDENCY, "resident", 0)
    keys_file = folder / "keys.npy"
    crcs = integrity.block_crcs(keys_file)
    store = Postings.load(folder, len(docs))
    guard = integrity.FileGuard("keys.npy", keys_file, store._raw_keys, crcs)
    assert guard.large
    before = RESIDENCY.releases
    wanted = np.load(keys_file)[::1000]  # read from the file, not through the map
    size_kb = keys_file.stat().st_size // 1024
    assert resident_kb(str(keys_file)) <= 64  # the header, which the guard read
    guard.whole()  # every block checked, through the map: 1.8 MB read, the budget passed on the way
    assert RESIDENCY.releases > before
    assert 0 < resident_kb(str(keys_file)) < size_kb  # without a release, every page would stay
    assert np.array_equal(store.lookup(wanted), np.arange(0, len(store._raw_keys), 1000))
