"""Chunk ids of a whole batch (keys.batch_chunks, the compiled loop, the analysis workers' batch
path) are bit for bit the per-document ``ngram_ids`` / ``presence_keys``, and an index built
with them is the per-document path's, file for file (issue 27)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index.builder import analysis_workers
from coderiv.index.builder.analysis_workers import _Worker
from coderiv.index.index import Index
from coderiv.keys import batch_chunks, compiled_terms
from coderiv.keys.batch_terms import StopTable, ascii_term_sequences
from coderiv.keys.chunks import ngram_ids
from coderiv.keys.kinds import TERMS, StoreSpec, mix64, presence_keys, term_keys
from coderiv.text.analysis import AnalysisSettings, Analyzer, default_stoplist
from tests.support.batches import assert_batch_equals_one_by_one

STOPS = StopTable(default_stoplist())
#: documents as lists of terms: empty, shorter than n, long; repeated chunks within one
DOCUMENTS = st.lists(st.lists(st.sampled_from(["a", "b", "cat", "sat", "mat", "9", "x" * 30]), max_size=14), max_size=8)
NS = st.integers(1, 6)
BITS = st.sampled_from([1, 8, 31, 32, 33, 64])


def _batch(docs: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    keys = np.concatenate([np.empty(0, np.uint64), *(term_keys(d) for d in docs)])
    return keys, np.array([len(d) for d in docs], np.int64)


def test_hand_made_batch() -> None:
    """Two windows of the 3-term document, one id for the 1-term one, none for the empty one."""
    k = term_keys(["a", "b", "c", "x"]).tolist()
    m = 0x9E3779B97F4A7C15
    sums = [(k[0] * m + k[1]) % (1 << 64), (k[1] * m + k[2]) % (1 << 64), k[3]]
    want = (mix64(np.array(sums, np.uint64)) >> np.uint64(32)).tolist()
    keys, lengths = _batch([["a", "b", "c"], [], ["x"]])
    assert batch_chunks.numpy_ngram_ids(keys, lengths, 2, 32).tolist() == want
    assert batch_chunks.ids_per_document(lengths, 2).tolist() == [2, 0, 1]
    ids, counts = batch_chunks.chunk_keys(keys, lengths, 2, 32)
    assert counts.tolist() == [2, 0, 1]
    assert ids.tolist() == sorted(want[:2]) + want[2:]


@settings(max_examples=200, deadline=None)
@given(DOCUMENTS, NS, BITS)
def test_batch_ids_are_ngram_ids(docs: list[list[str]], n: int, bits: int) -> None:
    keys, lengths = _batch(docs)
    want = [ngram_ids(d, n, bits) for d in docs]
    got = batch_chunks.numpy_ngram_ids(keys, lengths, n, bits)
    assert got.dtype == np.uint64
    assert got.tolist() == np.concatenate([np.empty(0, np.uint64), *want]).tolist()
    ids, counts = batch_chunks.distinct_per_document(got, batch_chunks.ids_per_document(lengths, n), bits)
    distinct = [presence_keys(w)[0] for w in want]
    assert counts.tolist() == [len(d) for d in distinct]
    assert ids.tolist() == [x for d in distinct for x in d.tolist()]


def test_bad_parameters_are_refused() -> None:
    keys, lengths = _batch([["a"]])
    with pytest.raises(ValueError, match="n must be"):
        batch_chunks.chunk_keys(keys, lengths, 0, 32)
    with pytest.raises(ValueError, match="bits must be"):
        batch_chunks.chunk_keys(keys, lengths, 5, 65)


@pytest.mark.compiled
@settings(max_examples=200, deadline=None)
@given(DOCUMENTS, NS, BITS)
def test_compiled_loop_equals_numpy(docs: list[list[str]], n: int, bits: int) -> None:
    pytest.importorskip("numba")
    assert compiled_terms.load() and compiled_terms.load_chunks() and compiled_terms.chunks_loaded()
    keys, lengths = _batch(docs)
    got = compiled_terms.ngram_ids_of(keys, lengths, n, bits)
    assert got.dtype == np.uint64
    assert got.tolist() == batch_chunks.numpy_ngram_ids(keys, lengths, n, bits).tolist()


ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=200)
WORDY = st.lists(st.sampled_from(["The", "cat", "a", "OF", "x_y", " ", "\n", ".", "9"]), max_size=60).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(WORDY, ASCII), max_size=6), st.sampled_from([1, 3, 16, 1 << 18]))
def test_term_sequences_are_the_analysers_terms(texts: list[str], group_bytes: int) -> None:
    """Tiny groups cut texts into many pieces: each text's keys still come whole and in order."""
    counted, sequences = ascii_term_sequences(texts, STOPS, group_bytes)
    analyzer = Analyzer()
    for text, (keys, counts), sequence in zip(texts, counted, sequences, strict=True):
        terms = analyzer.terms(text)
        assert sequence.tolist() == term_keys(terms).tolist()
        assert int(counts.sum()) == len(terms) and sorted(set(sequence.tolist())) == keys.tolist()


READY = [TERMS, StoreSpec.create("chunks", n=5), StoreSpec.create("chunks", n=2, bits=40)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=80), WORDY, st.text(alphabet="aé É_ \nßİ.cat", max_size=60)), min_size=1, max_size=5),
       st.sampled_from([1, 5, 2048]))
def test_worker_batch_equals_one_by_one(texts: list[str], piece_chars: int) -> None:
    """Terms and chunk stores of a batch (ASCII pieces by the batch path, others by the
    analyser, joined in text order) equal each document analysed alone."""
    worker = _Worker(Analyzer(), READY)
    assert worker.batch_terms
    worker.piece_chars = piece_chars
    assert_batch_equals_one_by_one(worker, texts)


def test_stemming_keeps_the_per_document_path() -> None:
    assert not _Worker(Analyzer(AnalysisSettings(stem=True)), READY).batch_terms


def test_report_ready_index_identical_to_the_per_document_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "docs"
    source.mkdir()
    words = ["alpha", "Beta", "gamma", "the", "of", "déjà", "vu", "x_1", "42"]
    rng = np.random.default_rng(11)
    for i in range(40):
        count = [0, 1, 3, 4][i] if i < 4 else 30 + 7 * i  # an empty, then documents shorter than 5 terms
        text = " ".join(rng.choice(words, count).tolist())
        (source / f"{i:03d}.txt").write_text(text if i % 3 else text.replace("déjà", "deja"))
    stores = [StoreSpec.create("chunks", n=5)]
    Index.update_from(source, tmp_path / "batch", stores=stores, workers=1)
    monkeypatch.setattr(analysis_workers._Worker, "run_batch", lambda self, docs: [self.run(d) for d in docs])
    Index.update_from(source, tmp_path / "alone", stores=stores, workers=1)
    batch = {str(p.relative_to(tmp_path / "batch")): p.read_bytes() for p in sorted((tmp_path / "batch").rglob("*.npy"))}
    alone = {str(p.relative_to(tmp_path / "alone")): p.read_bytes() for p in sorted((tmp_path / "alone").rglob("*.npy"))}
    assert any("store-1" in name for name in batch) and batch == alone
    assert Index.open(tmp_path / "batch").info()["documents"] == 39  # the empty one is skipped


@pytest.mark.compiled
@settings(max_examples=200, deadline=None)
@given(DOCUMENTS, NS, st.sampled_from([1, 8, 31, 32]))
def test_compiled_chunk_keys_equal_numpy(docs: list[list[str]], n: int, bits: int) -> None:
    """Ids rolled from window to window, sorted document by document and their repeats dropped
    (:func:`~coderiv.keys.compiled_terms.chunk_keys_of`): each document's distinct sorted ids
    of the numpy path, in uint32."""
    pytest.importorskip("numba")
    assert compiled_terms.load() and compiled_terms.load_chunks()
    keys, lengths = _batch(docs)
    want = batch_chunks.distinct_per_document(
        batch_chunks.numpy_ngram_ids(keys, lengths, n, bits), batch_chunks.ids_per_document(lengths, n), bits
    )
    got = batch_chunks.chunk_keys(keys, lengths, n, bits)
    assert got[0].dtype == want[0].dtype == np.uint32 and got[1].dtype == np.int64
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    distinct = [presence_keys(ngram_ids(d, n, bits))[0] for d in docs]
    assert got[0].tolist() == [x for d in distinct for x in d.tolist()]
