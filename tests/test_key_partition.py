"""A run's postings split by the top bits of their keys (coderiv.index.builder.key_partition): a stable
counting pass, the compiled loop and the numpy path giving the same arrays."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv.index.builder import key_partition
from coderiv.index.builder.compiled_writer import MergeBuffers
from coderiv.index.builder.key_partition import partition_run, shift_of, unit_bounds
from coderiv.keys import compiled_terms


@pytest.fixture(params=["numpy", "compiled"])
def loops(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The partition by the compiled loop (numba, when installed) or by numpy's argsort."""
    if request.param == "compiled":
        if not compiled_terms.available():
            pytest.skip("numba (coderiv[fast]) not installed")
        assert compiled_terms.load() and key_partition._KERNELS.load()
    else:
        monkeypatch.setattr(key_partition, "_KERNELS", key_partition._KERNELS.fresh())
        monkeypatch.setattr(compiled_terms, "loaded", lambda: False)
    return str(request.param)


def test_two_documents_by_hand(loops: str) -> None:
    """Keys up to 9 need 4 bits: shift 0, one partition per key value 0…9. Document 0 holds
    keys 2 and 7, document 1 keys 1, 7 and 9: partition order 1 (d1), 2 (d0), 7 (d0, then d1),
    9 (d1)."""
    split = partition_run(np.array([2, 7, 1, 7, 9], np.uint32), np.array([2, 3]), np.ones(5, np.int32), np.uint16)
    assert split is not None and (split.shift, split.top_key, split.top_val, split.vals) == (0, 9, 1, None)
    assert split.keys.tolist() == [1, 2, 7, 7, 9] and split.keys.dtype == np.uint16
    assert split.docs.tolist() == [1, 0, 0, 1, 1] and split.docs.dtype == np.uint16
    assert split.parts.tolist() == [0, 0, 1, 2, 2, 2, 2, 2, 4, 4, 5]


def test_wide_keys_and_varied_values_by_hand(loops: str) -> None:
    """Keys up to 2^32 − 1 are split by their top 16 bits (shift 16) and keep their low 16:
    2^16 + 5 is in partition 1 (kept as 5), 3 in 0, 2^32 − 1 in 65,535 (kept as 65,535); values
    that differ travel with their postings; the whole keys come back from the partitions."""
    keys = np.array([3, 2**16 + 5, 2**32 - 1, 4], np.uint64)
    split = partition_run(keys, np.array([3, 0, 1]), np.array([5, 6, 7, 8]), np.uint32)
    assert split is not None and (split.shift, split.top_key, split.top_val) == (16, 2**32 - 1, 8)
    assert split.keys.tolist() == [3, 4, 5, 65535] and split.docs.tolist() == [0, 2, 0, 0]
    assert split.vals is not None and split.vals.tolist() == [5, 8, 6, 7]
    assert split.parts.tolist()[:3] == [0, 2, 3] and split.parts[-2:].tolist() == [3, 4] and len(split.parts) == 65537
    whole = key_partition.full_keys(split.keys, 0, split.parts, split.shift)
    assert whole.tolist() == [3, 4, 2**16 + 5, 2**32 - 1] and whole.dtype == np.uint64
    assert key_partition.full_keys(split.keys[2:], 2, split.parts, split.shift).tolist() == [2**16 + 5, 2**32 - 1]


def test_keys_of_a_narrow_run_come_back_whole() -> None:
    """Keys below 2^20 (shift 4): partition p holds keys [16p, 16p + 16); the stored low 16 bits
    hold more than the 4 the shift leaves, and only those 4 are taken: 70,000 = 4,375 · 16 + 0."""
    keys = np.array([70_000, 17, 1, 2**20 - 1], np.uint64)
    split = partition_run(keys, np.array([4]), np.ones(4), np.uint16)
    assert split is not None and split.shift == 4
    assert split.keys.tolist() == [1, 17, 70_000 & 0xFFFF, 0xFFFF]
    assert key_partition.full_keys(split.keys, 0, split.parts, split.shift).tolist() == [1, 17, 70_000, 2**20 - 1]


def test_keys_past_32_bits_and_no_postings_are_not_partitioned(loops: str) -> None:
    assert partition_run(np.array([2**32], np.uint64), np.array([1]), np.ones(1), np.uint16) is None
    assert partition_run(np.empty(0, np.uint64), np.zeros(3, np.int64), np.empty(0), np.uint16) is None


def test_shifts_and_unit_bounds() -> None:
    """A unit of keys [u·2^S, (u + 1)·2^S) is whole partitions of a run with a shift s ≤ S."""
    assert [shift_of(k) for k in (0, 65535, 65536, 2**32 - 1)] == [0, 0, 1, 16]
    parts = np.array([0, 1, 1, 4, 6, 9])  # 5 partitions (shift 1: keys below 10)
    assert unit_bounds(parts, 1, 1, 5).tolist() == [0, 1, 1, 4, 6, 9]
    assert unit_bounds(parts, 1, 2, 3).tolist() == [0, 1, 6, 9]  # units of 2 partitions, the last cut short
    assert unit_bounds(parts, 1, 3, 2).tolist() == [0, 6, 9]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # the fixture only picks the loops
@given(
    sizes=st.lists(st.integers(0, 30), max_size=30),
    top=st.sampled_from([1, 50, 65535, 65536, 70_000, 2**20 + 3, 2**32 - 1]),
    varied=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_partition_is_a_stable_sort_by_the_top_bits(loops: str, sizes: list[int], top: int, varied: bool, seed: int) -> None:
    """Every run (empty documents, keys shared or not, any width below 2^32): the postings in
    the order of a stable sort by ``key >> shift``, kept as their low 16 bits and whole again
    from the partitions, the bounds of every partition."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, top, sum(sizes), dtype=np.uint64, endpoint=True)
    vals = rng.integers(1, 9, len(keys)) if varied else np.ones(len(keys), np.int64)
    split = partition_run(keys, np.array(sizes, np.int64), vals, np.uint16)
    if not len(keys):
        assert split is None
        return
    assert split is not None
    shift = shift_of(int(keys.max()))
    order = np.argsort(keys >> np.uint64(shift), kind="stable")
    docs = np.repeat(np.arange(len(sizes)), sizes)
    assert split.shift == shift and split.top_key == int(keys.max())
    assert np.array_equal(split.keys, keys[order] & np.uint64(0xFFFF)) and np.array_equal(split.docs, docs[order])
    assert np.array_equal(key_partition.full_keys(split.keys, 0, split.parts, shift), keys[order])
    if varied and vals.min() != vals.max():
        assert split.vals is not None and np.array_equal(split.vals, vals[order])
    else:
        assert split.vals is None and split.top_val == int(vals.max())
    part = keys[order] >> np.uint64(shift)
    assert len(split.parts) == (int(keys.max()) >> shift) + 2
    for p in {0, int(part[0]), int(part[-1]), len(split.parts) - 2}:
        assert np.array_equal(np.flatnonzero(part == p), np.arange(split.parts[p], split.parts[p + 1]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # the fixture only picks the loops
@given(
    batches=st.lists(st.lists(st.integers(0, 6), max_size=6), min_size=1, max_size=5),
    varied=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_pieces_partition_as_their_concatenation(loops: str, batches: list[list[int]], varied: bool, seed: int) -> None:
    """A run's batches given as they are (documents without postings, batches without any, keys
    in 4 or 8 bytes, values in 1 byte), into buffers that held a bigger run: the partition of
    the batches joined, the documents numbered on from batch to batch."""
    rng = np.random.default_rng(seed)
    pieces = []
    for number, sizes in enumerate(batches):
        keys = rng.integers(0, 2**32 - 1, sum(sizes), dtype=np.uint64, endpoint=True)
        vals = rng.integers(1, 4, len(keys)) if varied else np.ones(len(keys))
        pieces.append((np.array(sizes, np.int64), keys.astype(np.uint64 if number % 2 else np.uint32), vals.astype(np.uint8)))
    joined = partition_run(*(np.concatenate([p[i] for p in pieces]) for i in (1, 0, 2)), np.uint16)
    buffers = MergeBuffers()  # reused: a bigger run was partitioned in them before
    bigger = (np.array([40]), rng.integers(0, 2**32, 40, dtype=np.uint64), rng.integers(1, 4, 40))
    key_partition.partition_pieces([bigger], np.uint16, buffers)
    got = key_partition.partition_pieces(pieces, np.uint16, buffers)
    if joined is None:
        assert got is None and not sum(map(sum, batches))
        return
    assert got is not None and got.n_docs == joined.n_docs == sum(len(b) for b in batches)
    for name in ("keys", "docs", "parts"):
        assert np.array_equal(getattr(got, name), getattr(joined, name)), name
    assert (got.vals is None) == (joined.vals is None) and (got.vals is None or np.array_equal(got.vals, joined.vals))
    assert (got.shift, got.top_key, got.top_val) == (joined.shift, joined.top_key, joined.top_val)
