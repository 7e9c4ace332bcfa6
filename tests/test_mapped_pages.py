"""index/mapped_pages.py: a memory-mapped store's pages leave the resident set (Linux), the data
read the same afterwards, and in-memory arrays are left alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coderiv.index.mapped_pages import release_arrays, release_store
from coderiv.index.postings import Postings, from_forward
from coderiv.pairs.eligibility import release_pages

pytestmark = pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's /proc/self/smaps")


def _resident_kb(path: str) -> int:
    """Resident kB of this process's mappings of ``path`` (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            if "-" in line.split(" ", 1)[0]:  # a mapping's header line
                inside = line.rstrip().endswith(path)
            elif inside and line.startswith("Rss:"):
                total += int(line.split()[1])
    return total


def _saved_store(tmp_path: Path) -> tuple[Path, list]:
    docs = [(np.arange(i, i + 20_000, dtype=np.uint64) * 7, np.ones(20_000, np.int32)) for i in range(0, 200_000, 5_000)]
    from_forward(docs).save(tmp_path / "s")
    return tmp_path / "s", docs


def test_a_loaded_store_keeps_no_page_of_its_checks_and_a_pass_is_released(tmp_path):
    folder, docs = _saved_store(tmp_path)
    store = Postings.load(folder, len(docs))
    keys_file, docs_file = str(folder / "keys.npy"), str(folder / "docs.npy")
    assert _resident_kb(keys_file) == 0 and _resident_kb(docs_file) == 0  # the open's checks released
    want = np.asarray(store.keys).copy()  # reads every page of keys.npy
    low = np.asarray(store.docs.low).copy()
    assert _resident_kb(keys_file) > 500  # 220,000 keys of 8 bytes: about 1.7 MB
    release_pages(store)  # pairs' name for it
    assert _resident_kb(keys_file) == 0 and _resident_kb(docs_file) == 0
    assert np.array_equal(np.asarray(store.keys), want)  # the data are read again from the file
    assert np.array_equal(np.asarray(store.docs.low), low)


def test_arrays_in_memory_are_left_alone():
    store = from_forward([(np.array([1, 2], np.uint64), np.ones(2, np.int32))])
    release_store(store)  # nothing mapped: no error, nothing changed
    release_arrays([np.arange(3), None, 7, "text"])
    assert np.asarray(store.keys).tolist() == [1, 2]
