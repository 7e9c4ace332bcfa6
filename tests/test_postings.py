"""Document numbers in 2 bytes a posting (SplitNumbers): every read equals the plain array."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv.index.format import postings as postings_module
from coderiv.index.format.postings import Postings, from_forward
from coderiv.index.format.split_numbers import SplitNumbers, doc_runs

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Numbers around the 16-bit boundaries, so keys span several runs of high bits.
NUMBERS = st.one_of(st.integers(0, 40), st.integers(65_530, 65_545), st.integers(131_070, 131_075), st.integers(0, 2**32 - 1))
KEYS = st.lists(st.lists(NUMBERS, min_size=1, max_size=12, unique=True).map(sorted), min_size=1, max_size=8)


def _plain(keys: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    docs = np.array([d for key in keys for d in key], np.uint32)
    ptr = np.concatenate(([0], np.cumsum([len(key) for key in keys]))).astype(np.int64)
    return docs, ptr


@PROPERTY
@given(keys=KEYS, chunk=st.integers(1, 20), cuts=st.lists(st.integers(0, 100), min_size=2, max_size=8))
def test_every_read_of_split_numbers_equals_the_plain_array(keys, chunk, cuts):
    docs, ptr = _plain(keys)
    split = SplitNumbers.encode(docs)
    assert split.low.dtype == np.uint16 and len(split) == len(docs)
    # encoding a chunk at a time (as the writer does from a memory map) gives the same runs
    run_at, run_high = doc_runs(docs, chunk)
    np.testing.assert_array_equal(run_at, split.run_at)
    np.testing.assert_array_equal(run_high, split.run_high)
    np.testing.assert_array_equal(np.asarray(split), docs)
    bounds = sorted(c % (len(docs) + 1) for c in cuts)
    starts, ends = np.array(bounds[:-1]), np.array(bounds[1:])
    np.testing.assert_array_equal(split.ranges(starts, ends), np.concatenate([docs[a:b] for a, b in zip(starts, ends)]))
    assert split.ranges(starts, ends).dtype == np.uint32
    picks = np.array(cuts) % len(docs)
    np.testing.assert_array_equal(split.take(picks), docs[picks])
    np.testing.assert_array_equal(split[bounds[0] : bounds[-1]], docs[bounds[0] : bounds[-1]])


@PROPERTY
@given(keys=KEYS, targets=st.lists(NUMBERS, min_size=1, max_size=10))
def test_search_finds_a_document_within_a_key_exactly_where_a_plain_search_does(keys, targets):
    docs, ptr = _plain(keys)
    split = SplitNumbers.encode(docs)
    pairs = [(k, t) for k in range(len(keys)) for t in [*targets, keys[0][0]]]
    got = split.search(np.array([ptr[k] for k, _ in pairs]), np.array([ptr[k + 1] for k, _ in pairs]), np.array([t for _, t in pairs]))
    expected = [int(ptr[k]) + keys[k].index(t) if t in keys[k] else -1 for k, t in pairs]
    assert got.tolist() == expected
    owner = np.array([k for k, _ in pairs])  # bounds given once per key
    assert split.search(ptr[:-1], ptr[1:], np.array([t for _, t in pairs]), owner).tolist() == expected


def test_runs_start_where_the_high_bits_change_in_store_order_whatever_the_keys():
    docs, ptr = _plain([[3, 70_000, 70_001, 140_000], [5], [65_535, 65_536]])
    split = SplitNumbers.encode(docs)
    assert split.low.tolist() == [3, 70_000 - 65_536, 70_001 - 65_536, 140_000 - 131_072, 5, 65_535, 0]
    # high bits 0 1 1 2 | 0 | 0 1: the second key's posting continues the run at posting 4
    assert split.run_at.tolist() == [0, 1, 3, 4, 6, 7]
    assert split.run_high.tolist() == [0, 1, 2, 0, 1]
    # a key starting inside a run is searched and sliced within it
    assert split.search(ptr[1:2], ptr[2:3], np.array([5])).tolist() == [4]
    assert split.ranges(ptr[1:3], ptr[2:4]).tolist() == [5, 65_535, 65_536]


def test_a_collection_under_65_536_documents_has_one_run_whatever_its_keys():
    docs, ptr = _plain([[0, 7, 65_535], [1], [2, 3], [65_000]])
    split = SplitNumbers.encode(docs)
    assert split.run_at.tolist() == [0, 7] and split.run_high.tolist() == [0]


def test_saved_postings_load_memory_mapped_with_the_same_numbers(tmp_path):
    per_doc = [(np.array([1, 5], np.uint64), np.array([2, 1], np.int32))] * 70_000
    postings = from_forward(per_doc)
    postings.save(tmp_path / "s")
    loaded = Postings.load(tmp_path / "s", n_docs=70_000, split=True)
    assert loaded.docs.run_high.tolist() == [0, 1, 0, 1]
    assert loaded.docs.run_at.tolist() == [0, 65_536, 70_000, 135_536, 140_000]
    docs, vals, lengths = loaded.slices(np.array([1]))
    np.testing.assert_array_equal(docs, np.arange(70_000, dtype=np.uint32))
    assert lengths.tolist() == [70_000] and vals.tolist() == [1] * 70_000
    keys, values = loaded.doc_keys(69_999)
    assert keys.tolist() == [1, 5] and values.tolist() == [2, 1]


def test_keys_below_2_32_are_split_and_a_wider_key_is_absent():
    one = np.array([1], np.int32)
    store = from_forward([(np.array([1, 2**32 - 1], np.uint64), np.array([1, 1], np.int32)), (np.array([1], np.uint64), one)])
    assert store.is_split and store.keys.dtype == np.uint32  # read whole: decoded to 4 bytes a key
    # 2**32 + 1 would read as 1 in 4 bytes: it is absent, not key 1
    assert store.lookup(np.array([2**32 - 1, 1, 2**32 + 1, 5, 2**64 - 1], np.uint64)).tolist() == [1, 0, -1, -1, -1]
    assert store.keys_at(np.array([1])).dtype == np.uint64
    wide = from_forward([(np.array([1, 2**40], np.uint64), np.array([1, 1], np.int32))])
    assert not wide.is_split and wide.keys.dtype == np.uint64
    assert wide.lookup(np.array([2**40, 2], np.uint64)).tolist() == [1, -1]


def test_offsets_below_2_32_postings_read_as_4_bytes_and_as_int64(tmp_path):
    store = from_forward([(np.array([1, 5], np.uint64), np.array([2, 1], np.int32)), (np.array([5], np.uint64), np.array([3], np.int32))])
    store.save(tmp_path / "s")
    loaded = Postings.load(tmp_path / "s", n_docs=2, split=True)
    assert loaded.ptr.dtype == np.uint32 and loaded.ptr.tolist() == [0, 1, 3]
    starts, ends = loaded.pointers(np.array([1, 0]))
    assert starts.dtype == ends.dtype == np.int64 and starts.tolist() == [1, 0] and ends.tolist() == [3, 1]
    assert loaded.doc_freqs.dtype == np.int64 and loaded.doc_freqs.tolist() == [1, 2]


#: Ascending numbers (a split store's keys or offsets) across several runs of high bits.
SPREAD = st.one_of(st.integers(0, 70), st.integers(65_500, 65_600), st.integers(0, 2**32 - 1))
ASCENDING = st.lists(SPREAD, min_size=0, max_size=40, unique=True).map(sorted)


@PROPERTY
@given(numbers=ASCENDING, targets=st.lists(st.one_of(NUMBERS, st.integers(2**32, 2**33)), min_size=1, max_size=12))
def test_a_sorted_search_of_ascending_split_numbers_is_numpys(numbers, targets):
    plain = np.array(numbers, np.uint32)
    split = SplitNumbers.encode(plain)
    wanted = np.array(targets + numbers[:3], np.int64)
    for side in ("left", "right"):
        assert split.search_sorted(wanted, side).tolist() == np.searchsorted(plain.astype(np.int64), wanted, side).tolist()


@PROPERTY
@given(keys=st.lists(SPREAD, min_size=1, max_size=30, unique=True), wide=st.booleans(),
       cuts=st.lists(st.integers(0, 40), min_size=2, max_size=2))
def test_a_split_store_reads_as_the_plain_store_does(keys, wide, cuts):
    """Every read of a store's keys and offsets gives what the plain arrays give: lookups,
    offsets, the key holding a posting, steps of a pass."""
    rng = np.random.default_rng(len(keys))
    shift = np.uint64(1 << 32) if wide else np.uint64(0)  # keys over 32 bits stay plain
    per_doc = []
    for _ in range(5):
        chosen = np.unique(rng.choice(np.array(keys, np.uint64), rng.integers(1, len(keys) + 1))) + shift
        per_doc.append((chosen, np.ones(len(chosen), np.int32)))
    store = from_forward(per_doc)
    assert store.is_split != wide
    all_keys = np.unique(np.concatenate([k for k, _ in per_doc]))
    plain_ptr = np.concatenate(([0], np.cumsum([sum(int(k in set(d.tolist())) for d, _ in per_doc) for k in all_keys])))
    np.testing.assert_array_equal(store.keys, all_keys)
    np.testing.assert_array_equal(store.ptr, plain_ptr)
    a, b = sorted(c % (len(all_keys) + 1) for c in cuts)
    np.testing.assert_array_equal(store.keys_between(a, b), all_keys[a:b])
    np.testing.assert_array_equal(store.offsets_between(a, b + 1), plain_ptr[a : b + 1])
    postings = np.arange(int(plain_ptr[-1]))
    for whole in (0, 10**9):  # offsets decoded whole, then searched in the runs and low bits
        with mock.patch.object(postings_module, "DECODE_WHOLE", whole):
            np.testing.assert_array_equal(store.key_of(postings), np.searchsorted(plain_ptr, postings, "right") - 1)
    probe = np.concatenate((all_keys, all_keys + np.uint64(1), [np.uint64(2**40)]))
    expected = [int(np.searchsorted(all_keys, k)) if k in set(all_keys.tolist()) else -1 for k in probe.tolist()]
    assert store.lookup(probe).tolist() == expected


def test_a_split_store_s_files_and_their_numbers():
    """Keys 5, 70,000 and 70,001 (documents 0 and 1): keys take their low 16 bits and two runs
    (high bits 0 from key 0, 1 from key 1); offsets 0 1 2 4 are one run of high bits 0."""
    first, second = np.array([5, 70_000, 70_001], np.uint64), np.array([70_001], np.uint64)
    store = from_forward([(first, np.ones(3, np.int32)), (second, np.ones(1, np.int32))])
    keys, ptr = store.__dict__["_raw_keys"], store.__dict__["_raw_ptr"]
    assert keys.low.tolist() == [5, 70_000 - 65_536, 70_001 - 65_536] and keys.low.dtype == np.uint16
    assert keys.run_at.tolist() == [0, 1, 3] and keys.run_high.tolist() == [0, 1]
    assert ptr.low.tolist() == [0, 1, 2, 4] and ptr.run_at.tolist() == [0, 4] and ptr.run_high.tolist() == [0]
    assert store.n_keys == 3 and store.doc_freqs.tolist() == [1, 1, 2]
    assert store.lookup(np.array([70_001, 70_000, 5, 4_464], np.uint64)).tolist() == [2, 1, 0, -1]  # 4,464 = 70,000's low bits
