"""Posting values in one byte a posting (CountValues): every read equals the plain array, an
index with counts above 255 stores them aside and scores exactly as before, format 4 opens."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index, Searcher
from coderiv.errors import CorruptIndexError
from coderiv.index.format import counts
from coderiv.index.format.counts import OVER_VAL_FILE, CountValues
from coderiv.index.format.postings import Postings
from tests.support.files import write_docs

PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: Values around the escape (254, 255, 256) and some far above it.
VALUES = st.lists(st.one_of(st.integers(1, 4), st.integers(253, 258), st.integers(1, 70_000)), min_size=1, max_size=60)


@PROPERTY
@given(values=VALUES, cuts=st.lists(st.integers(0, 100), min_size=2, max_size=8))
def test_every_read_of_encoded_values_equals_the_plain_array(values, cuts):
    plain = np.array(values, np.int64)
    encoded = CountValues.encode(plain)
    assert encoded.low.dtype == np.uint8 and len(encoded) == len(plain)
    assert encoded.escaped == (plain.max() > 255)
    assert len(encoded.over_at) == (int(np.sum(plain >= 255)) if encoded.escaped else 0)
    np.testing.assert_array_equal(np.asarray(encoded), plain)
    bounds = sorted(c % (len(plain) + 1) for c in cuts)
    starts, ends = np.array(bounds[:-1]), np.array(bounds[1:])
    np.testing.assert_array_equal(encoded.ranges(starts, ends), np.concatenate([plain[a:b] for a, b in zip(starts, ends)]))
    picks = np.array(cuts) % len(plain)
    np.testing.assert_array_equal(encoded.take(picks), plain[picks])
    np.testing.assert_array_equal(encoded[bounds[0] : bounds[-1]], plain[bounds[0] : bounds[-1]])
    np.testing.assert_array_equal(encoded[::3], plain[::3])


@PROPERTY
@given(values=VALUES, chunk=st.integers(1, 7))
def test_re_encoding_a_file_a_chunk_at_a_time_equals_encoding_in_memory(tmp_path_factory, values, chunk):
    folder = tmp_path_factory.mktemp("vals")
    plain = np.array(values, np.int64)
    narrow = plain.astype(np.uint8) if plain.max() <= 255 else plain.astype(np.uint32)
    np.save(folder / "vals.npy", narrow)
    old_chunk = counts.ENCODE_CHUNK
    counts.ENCODE_CHUNK = chunk
    try:
        counts.encode_file(folder)
    finally:
        counts.ENCODE_CHUNK = old_chunk
    loaded = counts.load(folder, np.load(folder / "vals.npy", mmap_mode="r"))
    expected = CountValues.encode(plain)
    assert loaded.low.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(loaded.low), expected.low)
    np.testing.assert_array_equal(loaded.over_at, expected.over_at)
    np.testing.assert_array_equal(loaded.over_val, expected.over_val)
    np.testing.assert_array_equal(np.asarray(loaded), plain)


DOCS = {
    "many.txt": "alpha " * 300 + "beta gamma",
    "edge.txt": "alpha " * 255 + "beta",
    "some.txt": "alpha " * 256 + "gamma delta",
    "few.txt": "alpha alpha beta delta",
}


def _values_of(index: Index, doc_id: str) -> list[int]:
    keys, values = index.terms.doc_keys(index.doc_ids.index(doc_id))
    return sorted(values.tolist())


def test_counts_above_255_are_stored_aside_and_read_back_exactly(tmp_path):
    Index.update_from(write_docs(tmp_path / "c", DOCS), tmp_path / "i", workers=1)
    index = Index.open(tmp_path / "i")
    store = index.generation / "store-0"
    assert np.load(store / "vals.npy").dtype == np.uint8
    # alpha's postings, documents in id order (edge, few, many, some): 255, 2, 300, 256
    assert np.load(store / OVER_VAL_FILE).tolist() == [255, 300, 256]
    assert _values_of(index, "many.txt") == [1, 1, 300]
    assert _values_of(index, "edge.txt") == [1, 255]
    assert _values_of(index, "some.txt") == [1, 1, 256]
    assert _values_of(index, "few.txt") == [1, 1, 2]
    assert int(index.terms.maxvals.max()) == 300


def test_scores_with_escaped_counts_equal_those_of_plain_counts(tmp_path):
    """Every measure, pruned and full, reads the escaped values as the plain ones."""
    Index.update_from(write_docs(tmp_path / "c", DOCS), tmp_path / "i", workers=1)
    escaped = Index.open(tmp_path / "i")
    plain = Index.open(tmp_path / "i")
    store = plain.terms
    wide = CountValues(np.asarray(store.vals).astype(np.uint16))
    plain._stores["terms"] = Postings(store.n_docs, store.keys, store.ptr, store.docs, wide, store.maxvals)
    assert not plain.terms.vals.escaped and escaped.terms.vals.escaped
    query = "alpha " * 280 + "beta delta"
    for measure in ("identity5", "identity1", "cosine", "inner", "normalized"):
        for prune in (True, False):
            got = Searcher(escaped).rank(Searcher(escaped).prepare(query), measure, top=4, prune=prune)
            want = Searcher(plain).rank(Searcher(plain).prepare(query), measure, top=4, prune=prune)
            assert [(m.doc_id, m.percent) for m in got.matches] == [(m.doc_id, m.percent) for m in want.matches]
    searcher = Searcher(escaped)
    ranked = searcher.rank(searcher.prepare("alpha " * 300 + "beta gamma"), "identity5", top=4)
    assert ranked.matches[0].doc_id == "many.txt" and ranked.matches[0].percent == 100.0


def test_an_index_of_format_5_without_block_checksums_is_rebuilt(tmp_path):
    """Format 6 added the block checksums every read is checked against; an older index is
    refused with the rebuild message, and the next `coderiv index` rebuilds it alike."""
    Index.update_from(write_docs(tmp_path / "c", {"a.txt": "alpha beta " * 3, "b.txt": "beta gamma"}), tmp_path / "i", workers=1)
    generation = tmp_path / "i" / "gen-000001"
    searcher = Searcher(Index.open(tmp_path / "i"))
    before = searcher.rank(searcher.prepare("alpha beta gamma"), "identity5", top=2)
    manifest = json.loads((generation / "manifest.json").read_text("utf-8"))
    manifest["format_version"] = 5
    (generation / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    refused = "index format 5 is not this coderiv's format 8; rebuild the index with 'coderiv index --rebuild'"
    with pytest.raises(CorruptIndexError, match=refused):
        Index.open(tmp_path / "i")
    report = Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    assert report.rebuilt is not None
    searcher = Searcher(Index.open(tmp_path / "i"))
    after = searcher.rank(searcher.prepare("alpha beta gamma"), "identity5", top=2)
    assert [(m.doc_id, m.score) for m in after.matches] == [(m.doc_id, m.score) for m in before.matches]



def test_ranges_past_a_narrow_side_table_read_no_escapes():
    """The side table's positions are narrowed (uint8 here): a range starting past 255 used to
    be searched with its bounds wrapped around (300 → 44), giving negative counts and a
    traceback in `query --min-percent` when one large count sat among the first 256 postings."""
    values = np.ones(400, np.int64)
    values[10] = 300
    encoded = CountValues.encode(values)
    assert encoded.over_at.dtype == np.uint8
    got = encoded.ranges(np.array([300, 5]), np.array([310, 12]))
    assert got.tolist() == [1] * 10 + [1, 1, 1, 1, 1, 300, 1]
