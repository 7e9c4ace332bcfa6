"""The writer's one-sort paths for narrow keys give exactly the general paths' arrays (the merge's:
tests/test_writer.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index import combined_sort
from coderiv.index.combined_sort import group_narrow_run, sort_packed
from coderiv.index.compiled_writer import MergeBuffers, group_run
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
    """:func:`~coderiv.index.combined_sort.sort_pieces`, compiled and numpy, in buffers reused
    from a bigger call: :func:`~coderiv.index.combined_sort.sort_packed`'s arrays."""
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
