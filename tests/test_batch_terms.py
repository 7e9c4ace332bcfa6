"""The whole-batch ASCII path gives the per-document path's keys and counts, exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index.builder import analysis_workers
from coderiv.index.builder.analysis_workers import AnalyzedEntry, _Worker
from coderiv.index.index import Index
from coderiv.keys import batch_terms
from coderiv.keys.batch_terms import StopTable, _inverse, ascii_term_counts
from coderiv.keys.kinds import TERMS, counted_keys, term_key, term_keys
from coderiv.text.analysis import AnalysisSettings, Analyzer, default_stoplist
from coderiv.text.collection import RawDocument
from tests.support.batches import assert_batch_equals_one_by_one

STOPS = StopTable(default_stoplist())
#: ASCII built from words, stopwords in every case, separators, underscores and digits
WORDY = st.lists(
    st.sampled_from(["The", "the", "THE", "a", "cat", "Cat", "x_y", "_", "9", "a1", "of", "OF", " ", "\n", ".", "--", "its", "it's", "zz"]),
    max_size=60,
).map("".join)
ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=200)


def reference(text: str, stop: bool = True) -> tuple[np.ndarray, np.ndarray]:
    return counted_keys(Analyzer(AnalysisSettings(stop=stop)).counts(text).term_counts(), term_key)


def assert_same(got: list[tuple[np.ndarray, np.ndarray]], texts: list[str], stop: bool = True) -> None:
    for (keys, counts), text in zip(got, texts, strict=True):
        want_keys, want_counts = reference(text, stop)
        assert keys.dtype == np.uint64 and counts.dtype == np.int32
        assert keys.tolist() == want_keys.tolist() and counts.tolist() == want_counts.tolist()


def test_hand_counted() -> None:
    (keys, counts), = ascii_term_counts(["The cat_CAT sat; the 2 cats.  cat"], STOPS)
    want = dict(zip(term_keys(["cat", "sat", "2", "cats"]).tolist(), [3, 1, 1, 1]))
    assert dict(zip(keys.tolist(), counts.tolist())) == want


def test_inverse_of_the_multiplier() -> None:
    assert 0x100000001B3 * _inverse(0x100000001B3) % (1 << 64) == 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(WORDY, ASCII), max_size=6), st.sampled_from([1, 3, 16, 1 << 18]), st.booleans())
def test_equals_the_per_document_path(texts: list[str], group_bytes: int, stop: bool) -> None:
    # tiny groups cut texts into many pieces and words across group boundaries
    assert_same(ascii_term_counts(texts, STOPS if stop else None, group_bytes), texts, stop)


def test_long_words_and_long_texts_in_pieces() -> None:
    texts = ["y" * 1000 + " the " + "y" * 1000, "ab " * 5000 + "THE", "", "z" * 200, "q" * 130 + ".", "w" * 64 + " a"]
    assert_same(ascii_term_counts(texts, STOPS, group_bytes=64), texts)


def test_a_word_of_megabytes_takes_the_per_document_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_terms, "LONGEST_WORD", 100)
    with pytest.raises(batch_terms.LongWordError):
        ascii_term_counts(["x" * 1000], STOPS, group_bytes=16)
    worker = _Worker(Analyzer(), [TERMS])
    docs = [RawDocument("long.txt", b"the " + b"x" * 1000 + b" cat"), RawDocument("short.txt", b"a cat")]
    entries = worker.run_batch(docs)
    assert [e.length for e in entries if isinstance(e, AnalyzedEntry)] == [2, 1]
    assert entries[0].stores["terms"][0].tolist() == sorted(term_keys(["x" * 1000, "cat"]).tolist())


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=80), WORDY, st.text(alphabet="aé É_ \nßİ.", max_size=60)), min_size=1, max_size=5),
       st.sampled_from([1, 5, 2048]))
def test_worker_batch_equals_one_by_one_on_any_unicode(texts: list[str], piece_chars: int) -> None:
    """ASCII texts and the ASCII pieces of other texts take the batch path, the other pieces
    the exact per-word path; a batch gives what analysing each document alone gives."""
    worker = _Worker(Analyzer(), [TERMS])
    worker.piece_chars = piece_chars
    assert_batch_equals_one_by_one(worker, texts)


def _arrays(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.npy"))}


def test_index_bytes_identical_to_the_per_document_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "docs"
    source.mkdir()
    words = ["alpha", "Beta", "gamma", "the", "of", "déjà", "vu", "x_1", "42"]
    rng = np.random.default_rng(7)
    for i in range(40):
        (source / f"{i:03d}.txt").write_text(" ".join(rng.choice(words, 50 + i).tolist()).replace("déjà", "deja" if i % 3 else "déjà"))
    Index.update_from(source, tmp_path / "batch", workers=1)
    monkeypatch.setattr(analysis_workers._Worker, "run_batch", lambda self, docs: [self.run(d) for d in docs])
    Index.update_from(source, tmp_path / "alone", workers=1)
    batch, alone = _arrays(tmp_path / "batch"), _arrays(tmp_path / "alone")
    assert batch and batch == alone
