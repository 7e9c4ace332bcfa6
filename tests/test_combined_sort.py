"""The writer's one-sort paths for narrow keys give exactly the general paths' arrays (the merge's:
tests/test_writer.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index.builder import combined_sort
from coderiv.index.builder.combined_sort import group_narrow_run, sort_packed
from coderiv.index.builder.compiled_writer import MergeBuffers, group_run
from coderiv.keys import compiled_terms

#: keys below 41, below 2^32 (chunk ids), or of up to 64 bits (terms)
TOPS = st.sampled_from([40, (1 << 32) - 1, (1 << 64) - 1])
#: a run: per document its distinct keys, values constant or not, the first document's number
RUNS = TOPS.flatmap(lambda top: st.tuples(
    st.lists(st.sets(st.integers(0, top), max_size=12), min_size=1, max_size=9),
    st.sampled_from([None, 1, 3]),
    st.integers(0, 5),
))


def test_hand_made_run() -> None:
    """Documents 7 and 8: keys {5, 2} and {2}; values 1, 4, 2: key 2 has documents 7, 8."""
    keys = np.array([2, 5, 2], np.uint64)
    vals = np.array([1, 4, 2], np.uint32)
    unique, counts, docs, out_vals, maxima = group_narrow_run(keys, np.array([2, 1]), 7, vals) or ()
    assert unique.tolist() == [2, 5] and counts.tolist() == [2, 1]
    assert docs.tolist() == [7, 8, 7] and out_vals.tolist() == [1, 2, 4] and maxima.tolist() == [2, 4]


@settings(max_examples=300, deadline=None)
@given(RUNS)
def test_run_grouped_as_the_general_path(run: tuple[list[set[int]], int | None, int]) -> None:
    documents, constant, first = run
    keys = np.array([k for doc in documents for k in sorted(doc)], np.uint64)
    counts = np.array([len(doc) for doc in documents], np.int64)
    rng = np.random.default_rng(len(keys))
    vals = np.full(len(keys), constant, np.uint32) if constant else rng.integers(1, 300, len(keys)).astype(np.uint32)
    got = group_narrow_run(keys, counts, first, vals)
    want = group_run(keys, counts, first, vals, compiled=False)
    if not len(keys) or int(keys.max()).bit_length() > 48:
        assert got is None
        return
    assert got is not None
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()




def test_packed_postings_too_wide_are_left_to_the_general_paths() -> None:
    one = np.ones(1, np.uint32)
    assert sort_packed(np.array([2**40], np.uint64), np.array([2**20], np.uint32), np.array([5], np.uint32)) is not None
    assert sort_packed(np.array([2**40], np.uint64), np.array([2**24], np.uint32), np.array([2**5], np.uint32)) is None
    assert sort_packed(np.empty(0, np.uint64), np.empty(0, np.uint32), np.empty(0, np.uint32)) is None
    assert group_narrow_run(np.array([2**50], np.uint64), np.ones(1, np.int64), 0, one) is None


#: postings (key, document, value) with no (key, document) twice: keys of up to 32 bits, documents past 65,536
POSTINGS = st.sets(st.tuples(st.integers(0, 2**32 - 1) | st.integers(0, 9), st.integers(0, 200_000) | st.integers(0, 5)), max_size=40)


@pytest.mark.compiled
@settings(max_examples=200, deadline=None)
@given(POSTINGS, st.sampled_from([None, 1, 7]), st.booleans())
def test_compiled_unpacking_equals_numpy(pairs: set[tuple[int, int]], constant: int | None, runs: bool) -> None:
    pytest.importorskip("numba")
    assert compiled_terms.load()
    if not pairs:
        return
    keys = np.array([k for k, _ in pairs], np.uint64)
    docs = np.array([d for _, d in pairs], np.uint32)
    vals = np.full(len(keys), constant, np.uint32) if constant else (docs % np.uint32(300) + np.uint32(1))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(combined_sort, "_KERNELS", combined_sort._KERNELS.fresh())  # not loaded: numpy passes
        patch.setattr(compiled_terms, "loaded", lambda: False)
        want = sort_packed(keys, docs, vals, runs)
    got = sort_packed(keys, docs, vals, runs)
    assert combined_sort._KERNELS.loaded() and got is not None and want is not None
    for a, b in zip(got, want, strict=True):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    order = sorted(pairs)  # by (key, document)
    assert got[2].tolist() == [d for _, d in order]
    assert got[0].tolist() == sorted({k for k, _ in pairs})
    if runs:  # a run starts at each key's first posting and where its document >> 16 changes
        starts = [i for i, (k, d) in enumerate(order) if i == 0 or order[i - 1][0] != k or order[i - 1][1] >> 16 != d >> 16]
        assert got[5].tolist() == starts and got[6].tolist() == [order[i][1] >> 16 for i in starts]


def _pieces(pairs: set[tuple[int, int]], cuts: list[int], wide: bool) -> list[combined_sort.Piece]:
    """The postings in pieces at ``cuts`` (any order within a piece), documents stored less each
    piece's base, in 2 or 4 bytes."""
    ordered = sorted(pairs, key=lambda pair: (pair[0] * 7919 + pair[1]) % 1009)  # not sorted
    bounds = [0, *sorted(c % (len(ordered) + 1) for c in cuts), len(ordered)]
    pieces = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        part = ordered[a:b]
        base = min((d for _, d in part), default=0)
        docs = np.array([d - base for _, d in part], np.uint32 if wide else np.uint16)
        pieces.append((np.array([k for k, _ in part], np.uint32), docs, base))
    return pieces


def test_pieces_by_hand() -> None:
    """Keys 9 (documents 3, 1) and 4 (document 70,000) in two pieces: key 4 first."""
    buffers = MergeBuffers()
    pieces = [(np.array([9, 4], np.uint32), np.array([3, 70_000], np.uint32), 0), (np.array([9], np.uint32), np.array([0], np.uint16), 1)]
    got = combined_sort.sort_pieces(pieces, 70_000, 1, buffers)
    assert got is not None
    unique, counts, docs, vals, maxima, _, _ = got
    assert unique.tolist() == [4, 9] and unique.dtype == np.uint32 and counts.tolist() == [1, 2]
    assert docs.tolist() == [70_000, 1, 3] and vals.tolist() == [1, 1, 1] and maxima.tolist() == [1, 1]
    assert combined_sort.sort_pieces(pieces, 2**32, 1, buffers) is None  # documents past 32 bits


@pytest.mark.compiled
@settings(max_examples=150, deadline=None)
@given(POSTINGS.filter(bool), st.lists(st.integers(0, 50), max_size=4), st.booleans(), st.sampled_from([1, 3]))
def test_pieces_sort_as_the_packed_sort(pairs: set[tuple[int, int]], cuts: list[int], wide: bool, value: int) -> None:
    """:func:`~coderiv.index.builder.combined_sort.sort_pieces`, compiled and numpy, in buffers reused
    from a bigger call: :func:`~coderiv.index.builder.combined_sort.sort_packed`'s arrays."""
    pytest.importorskip("numba")
    if not wide and max(d for _, d in pairs) - min(d for _, d in pairs) >= 1 << 16:
        wide = True  # a piece's documents less its base must fit in 2 bytes
    keys = np.array([k for k, _ in pairs], np.uint64)
    docs = np.array([d for _, d in pairs], np.uint32)
    want = sort_packed(keys, docs, np.full(len(keys), value, np.uint32))
    assert want is not None
    pieces, top = _pieces(pairs, cuts, wide), max(d for _, d in pairs)
    buffers = MergeBuffers()
    big = [(np.arange(100, dtype=np.uint32), np.arange(100, dtype=np.uint32), 5)]
    for compiled in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            if compiled:
                assert compiled_terms.load()
            else:
                patch.setattr(combined_sort, "_KERNELS", combined_sort._KERNELS.fresh())
                patch.setattr(compiled_terms, "loaded", lambda: False)
            combined_sort.sort_pieces(big, 104, value, buffers)  # the buffers hold other postings before
            got = combined_sort.sort_pieces(pieces, top, value, buffers)
        assert got is not None
        for a, b in zip(got[:5], want[:5], strict=True):
            assert a.tolist() == b.tolist()
        assert got[0].dtype == np.uint32 and got[2].dtype == np.uint32


def _unit_slices(
    pairs: set[tuple[int, int]], n_slices: int, unit_shift: int, wide: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The postings as partitioned segments' slices would hold them: documents cut into
    ``n_slices`` ascending ranges, each slice's postings by unit (``key >> unit_shift``) then
    document, keys unsorted within a unit; (keys, documents less each slice's base, bases,
    where, first unit)."""
    docs_sorted = sorted({d for _, d in pairs})
    cuts = [docs_sorted[len(docs_sorted) * i // n_slices] for i in range(1, n_slices)] + [1 << 40]
    unit_lo = min(k for k, _ in pairs) >> unit_shift
    n_units = (max(k for k, _ in pairs) >> unit_shift) - unit_lo + 1
    keys, docs, bases, where = [], [], [], []
    lower = 0
    for upper in cuts:
        part = [(k, d) for k, d in pairs if lower <= d < upper]
        base = min((d for _, d in part), default=0)
        part.sort(key=lambda kd: (kd[0] >> unit_shift, kd[1], (kd[0] * 7919) % 1009))  # by unit, then document
        starts = [len(keys) + sum(1 for k, _ in part if (k >> unit_shift) - unit_lo < u) for u in range(n_units + 1)]
        keys += [k for k, _ in part]
        docs += [d - base for _, d in part]
        bases.append(base)
        where.append(starts)
        lower = upper
    doc_type = np.uint32 if wide else np.uint16
    return np.array(keys, np.uint32), np.array(docs, doc_type), np.array(bases, np.int64), np.array(where, np.int64), unit_lo


def test_units_by_hand() -> None:
    """Units of 2^4 keys: slice 0 (documents 3, 5) holds keys 17, 18 (unit 1) and 33 (unit 2),
    slice 1 (document 9) key 17 (unit 1): sorted 17 (3, 9), 18 (5), 33 (3)."""
    assert compiled_terms.load()
    keys = np.array([18, 17, 33, 17], np.uint32)
    docs = np.array([2, 0, 0, 0], np.uint16)  # less the slices' bases 3 and 9
    where = np.array([[0, 2, 3], [3, 4, 4]], np.int64)
    got = combined_sort.sort_units(keys, docs, np.array([3, 9]), where, 4, 1, 9, 1, MergeBuffers())
    assert got is not None
    unique, counts, out_docs, vals, maxima, _, _ = got
    assert unique.tolist() == [17, 18, 33] and counts.tolist() == [2, 1, 1]
    assert out_docs.tolist() == [3, 9, 5, 3] and vals.tolist() == [1, 1, 1, 1] and maxima.tolist() == [1, 1, 1]


@pytest.mark.compiled
@settings(max_examples=200, deadline=None)
@given(POSTINGS.filter(bool), st.integers(1, 3), st.sampled_from([0, 3, 20]), st.booleans(), st.sampled_from([1, 3]))
def test_units_sort_as_the_packed_sort(pairs: set[tuple[int, int]], n_slices: int, unit_shift: int, wide: bool, value: int) -> None:
    """:func:`~coderiv.index.builder.combined_sort.sort_units` (radix passes, or insertion for a few)
    gives :func:`~coderiv.index.builder.combined_sort.sort_packed`'s arrays, in buffers reused from a
    bigger call; units of 1, 8 or 2^20 keys."""
    pytest.importorskip("numba")
    assert compiled_terms.load()
    pairs = {(k, d) for k, d in pairs if (k >> unit_shift) - (min(k for k, _ in pairs) >> unit_shift) < 5000}  # a few units
    keys, docs, bases, where, unit_lo = _unit_slices(pairs, n_slices, unit_shift, wide or max(d for _, d in pairs) >= 1 << 16)
    per_slice = where[:, -1] - where[:, 0]
    whole_docs = docs.astype(np.uint32) + np.repeat(bases, per_slice).astype(np.uint32)
    want = sort_packed(keys.astype(np.uint64), whole_docs, np.full(len(keys), value, np.uint32))
    assert want is not None
    buffers = MergeBuffers()
    many = np.arange(300, dtype=np.uint32)
    combined_sort.sort_units(many, many, np.zeros(1, np.int64), np.array([[0, 300]], np.int64), 20, 0, 299, value, buffers)
    got = combined_sort.sort_units(keys, docs, bases, where, unit_shift, unit_lo, max(d for _, d in pairs), value, buffers)
    assert got is not None
    for a, b in zip(got[:5], want[:5], strict=True):
        assert a.tolist() == b.tolist()


@pytest.mark.compiled
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(60, 3000), st.integers(1, 4), st.sampled_from([3, 11, 20]))
def test_units_of_many_postings_sort_as_the_packed_sort(seed: int, size: int, n_slices: int, unit_shift: int) -> None:
    """Units past :data:`~coderiv.index.builder.combined_sort.INSERTION_SORT_BELOW` postings take the
    radix passes (one, two or two of :data:`~coderiv.index.builder.combined_sort.DIGIT_BITS` bits)."""
    rng = np.random.default_rng(seed)
    top = (3 << unit_shift) - 1  # three units
    pairs = set(zip(rng.integers(0, top + 1, size).tolist(), rng.integers(0, 70_000, size).tolist()))
    test_units_sort_as_the_packed_sort.hypothesis.inner_test(pairs, n_slices, unit_shift, True, 1)  # type: ignore[attr-defined]


def test_one_value_sorts_give_their_value_without_memory_and_large_values_still_escape(tmp_path: Path) -> None:
    """A sort of one value gives its values and maxima as read-only broadcasts; written by the
    merge with a value past one byte (300), they are escaped as any store's: the byte 255 in
    ``vals``, the positions and 300 aside (the broadcast is not written into)."""
    from coderiv.index.builder.files import NpyWriter
    from coderiv.index.builder.merge import append_key_range

    keys, docs = np.array([7, 3, 7], np.uint32), np.array([1, 4, 0], np.uint16)
    got = combined_sort.sort_pieces([(keys, docs, 0)], 4, 300, MergeBuffers())
    assert got is not None
    unique, counts, sorted_docs, vals, maxima = got[:5]
    assert (unique.tolist(), counts.tolist(), sorted_docs.tolist()) == ([3, 7], [1, 2], [4, 0, 1])
    assert vals.tolist() == [300] * 3 and maxima.tolist() == [300] * 2
    assert not vals.flags.writeable and vals.strides == (0,)
    files = {name: NpyWriter(tmp_path / f"{name}.npy", np.dtype(dtype)) for name, dtype in
             [("keys", np.uint32), ("ptr", np.int64), ("docs", np.uint16), ("maxvals", np.uint32), ("vals", np.uint8),
              ("doc_run_at", np.int64), ("doc_run_high", np.uint16)]}
    over: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    counts64 = counts.astype(np.int64)
    written, high = append_key_range(unique, counts64, maxima, sorted_docs, vals, np.zeros(1, np.int64),
                                      np.zeros(1, np.uint16), 10, -1, files, over)  # type: ignore[arg-type]
    for writer in files.values():
        writer.close()
    assert (written, high) == (13, 0)
    assert np.load(tmp_path / "vals.npy").tolist() == [255] * 3 and np.load(tmp_path / "ptr.npy").tolist() == [11, 13]
    assert np.concatenate(over[0]).tolist() == [10, 11, 12] and np.concatenate(over[1]).tolist() == [300] * 3
    assert vals.tolist() == [300] * 3
