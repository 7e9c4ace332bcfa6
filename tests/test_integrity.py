"""Block checksums (coderiv.index.format.integrity): an open checks (almost) nothing, a query checks the
blocks it reads and only those, and damage in a block is named exactly when a read touches it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from coderiv import Index, Searcher
from coderiv.errors import CorruptIndexError
from coderiv.index.format import integrity
from tests.support.files import write_docs

SMALL_BLOCK = 256
QUERY = "w150 w231 w299"


def _build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """60 documents over 600 words, indexed with 256-byte blocks: every array spans many."""
    monkeypatch.setattr(integrity, "BLOCK", SMALL_BLOCK)
    monkeypatch.setattr(integrity, "WHOLE_BELOW", 0)  # small files are checked whole at first read
    rng = np.random.default_rng(5)
    docs = {f"d{i:02d}.txt": " ".join(f"w{int(w)}" for w in rng.zipf(1.3, 200) % 600) for i in range(60)}
    write_docs(tmp_path / "c", docs)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    return tmp_path / "i"


def _answer(root: Path) -> tuple[list[tuple[str, float]], dict[str, np.ndarray]]:
    """The query's top 10 and, per store-0 file, which blocks the reads checked."""
    index = Index.open(root)
    result = Searcher(index).search(QUERY, top=10)
    terms = index.store("terms")
    guards = {**{f"{k}.npy": g for k, g in terms._guards.items()}, "docs.npy": terms.docs._guards["low"],
              "vals.npy": terms.vals._guards["low"]}
    return [(m.doc_id, m.score) for m in result.matches], {name: g.done.copy() for name, g in guards.items()}


def test_an_open_reads_almost_nothing_and_a_query_only_the_blocks_it_touches(tmp_path, monkeypatch):
    root = _build(tmp_path, monkeypatch)
    index = Index.open(root)
    docs = index.store("terms").docs._guards["low"]
    # the open checks each file's first block (it holds the .npy header numpy parsed) and no other posting
    assert len(docs.done) > 20 and np.flatnonzero(docs.done).tolist() == [0]
    ptr = index.store("terms")._guards["ptr"]
    assert np.flatnonzero(ptr.done).tolist() == [0, len(ptr.done) - 1]  # and the last pointer: where the postings end
    _, checked = _answer(root)
    assert 0 < int(checked["docs.npy"].sum()) < len(checked["docs.npy"])
    assert 0 < int(checked["keys.npy"].sum()) < len(checked["keys.npy"])


@pytest.mark.parametrize("name", ["docs.npy", "vals.npy", "keys.npy", "ptr.npy"])
def test_damage_in_a_block_is_named_exactly_when_a_query_reads_it(tmp_path, monkeypatch, name):
    """Each block of the file in turn gets a flipped byte: a query that read that block (in the
    undamaged run) fails naming it; any other query answers exactly as before."""
    root = _build(tmp_path, monkeypatch)
    want, checked = _answer(root)
    path = next(root.glob("gen-*")) / "store-0" / name
    original = path.read_bytes()
    header = len(original) - np.load(path, mmap_mode="r").nbytes
    read = np.flatnonzero(checked[name]).tolist()
    for block in range(header // SMALL_BLOCK + 1, len(checked[name])):
        data = bytearray(original)
        data[block * SMALL_BLOCK + 7] ^= 0x10
        path.write_bytes(bytes(data))
        if block in read:
            named = re.escape(f"index damaged: store-0/{name} block {block}; rebuild with coderiv index")
            with pytest.raises(CorruptIndexError, match=named):
                _answer(root)
        else:
            assert _answer(root)[0] == want, block
    path.write_bytes(original)
    assert read and len(read) < len(checked[name]) - header // SMALL_BLOCK - 1  # both kinds of block were tried


def test_a_search_misled_by_damage_elsewhere_is_caught(tmp_path):
    """Binary search over a sorted table whose middle is damaged: the search is misled, and
    checking the two neighbours of its answer names the damaged block."""
    values = np.arange(0, 4096, 2, dtype=np.uint64)
    path = tmp_path / "keys.npy"
    np.save(path, values)
    crcs = integrity.block_crcs(path, SMALL_BLOCK)
    damaged = values.copy()
    damaged[1024] = 10**6  # the first probe now sends a search for 2050 to the left half
    np.save(path, damaged)
    guard = integrity.FileGuard("keys.npy", path, damaged, crcs, SMALL_BLOCK)
    target = np.array([2050], np.uint64)
    found = np.searchsorted(damaged, target)
    assert int(found[0]) != 1025  # misled
    block = (len(path.read_bytes()) - damaged.nbytes + 1024 * 8) // SMALL_BLOCK
    with pytest.raises(CorruptIndexError, match=f"index damaged: keys.npy block {block};"):
        integrity.checked_insertion(guard, damaged, np.array([0]), np.array([len(damaged)]), target, found)


def test_a_plain_read_of_an_array_checks_its_whole_file_first(tmp_path, monkeypatch):
    """Code that reads ``store.ptr`` without a checked method still cannot read unchecked bytes:
    the attribute checks the whole file on first use (damage in its fourth block, which the open
    does not read: it reads the last entry only)."""
    root = _build(tmp_path, monkeypatch)
    path = next(root.glob("gen-*")) / "store-0" / "ptr.npy"
    data = bytearray(path.read_bytes())
    data[3 * SMALL_BLOCK + 5] ^= 0x01
    path.write_bytes(bytes(data))
    store = Index.open(root).store("terms")
    with pytest.raises(CorruptIndexError, match="index damaged: store-0/ptr.npy block 3;"):
        _ = store.ptr


def test_threads_checking_the_same_blocks_check_each_once(tmp_path):
    """Eight threads read overlapping spans of one guarded file: no error, every block checked,
    the count of checked blocks exact (each checked once, under the lock)."""
    from concurrent.futures import ThreadPoolExecutor

    values = np.arange(100_000, dtype=np.int64)
    path = tmp_path / "a.npy"
    np.save(path, values)
    crcs = integrity.block_crcs(path, SMALL_BLOCK)
    guard = integrity.FileGuard("a.npy", path, np.load(path, mmap_mode="r"), crcs, SMALL_BLOCK)
    rng = np.random.default_rng(3)
    spans = [np.sort(rng.integers(0, len(values), (2, 50)), axis=0) for _ in range(64)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda s: guard.spans(s[0], s[1] + 1), spans))
    guard.whole()
    assert guard.complete and guard.checked == len(crcs) and bool(guard.done.all())


def test_a_header_that_still_parses_is_caught_when_its_store_is_first_read(tmp_path, monkeypatch):
    """docs.npy's dtype turned from unsigned to signed 16 bits: numpy parses it, every block of
    postings is intact, yet large numbers would read negative. The header's block is checked when
    the store is loaded, on its first use: the open itself reads no store."""
    root = _build(tmp_path, monkeypatch)
    path = next(root.glob("gen-*")) / "store-0" / "docs.npy"
    data = path.read_bytes()
    assert b"'<u2'" in data[:128]
    path.write_bytes(data.replace(b"'<u2'", b"'<i2'", 1))
    index = Index.open(root)
    assert index.loaded_stores() == []
    for _ in range(2):  # and again on the next read: a store that failed to load is not kept
        with pytest.raises(CorruptIndexError, match="index damaged: store-0/docs.npy block 0;"):
            Searcher(index).search(QUERY)
