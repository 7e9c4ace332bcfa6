"""The compiled word loop (numba, ``coderiv[fast]``) gives the numpy passes' words and keys
exactly, and term counts and whole indexes do not depend on which one ran."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.index.index import Index
from coderiv.keys import batch_terms, compiled_terms
from coderiv.keys.batch_terms import StopTable, ascii_term_counts, numpy_word_keys
from coderiv.text.analysis import default_stoplist

pytestmark = pytest.mark.compiled  # numba compiles (or loads) the word loop: the compiled tier

pytest.importorskip("numba")

STOPS = StopTable(default_stoplist())
ASCII_BYTES = st.binary(max_size=400).map(lambda b: bytes(x & 0x7F for x in b))
WORDY = st.lists(
    st.sampled_from([b"The", b"the", b"a", b"cat", b"x_y", b"9", b" ", b"\n", b".", b"of", b"zz" * 40]), max_size=60
).map(b"".join)


def setup_module() -> None:
    assert compiled_terms.load()


def _compiled(data: bytes) -> list[list[int]]:
    return [a.tolist() for a in compiled_terms.word_keys(np.frombuffer(data, np.uint8), batch_terms._FOLD)]


def test_hand_made_words() -> None:
    starts, lengths, keys = _compiled(b"  The cat_9.")
    assert (starts, lengths) == ([2, 6, 10], [3, 3, 1])
    assert keys == batch_terms.term_keys(["the", "cat", "9"]).tolist()
    assert _compiled(b"") == [[], [], []] and _compiled(b" .;") == [[], [], []]


@settings(max_examples=300, deadline=None)
@given(st.one_of(ASCII_BYTES, WORDY))
def test_compiled_loop_equals_the_numpy_passes(data: bytes) -> None:
    assert _compiled(data) == [a.tolist() for a in numpy_word_keys(data)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(ASCII_BYTES, WORDY), max_size=5), st.sampled_from([3, 16, 1 << 18]), st.booleans())
def test_term_counts_do_not_depend_on_the_loop(texts: list[bytes], group_bytes: int, stop: bool) -> None:
    stops = STOPS if stop else None
    fast = ascii_term_counts(texts, stops, group_bytes)
    compiled_terms._KERNELS, kernels = compiled_terms._KERNELS.fresh(), compiled_terms._KERNELS  # not loaded
    try:
        slow = ascii_term_counts([t.decode("ascii") for t in texts], stops, group_bytes)
    finally:
        compiled_terms._KERNELS = kernels
    assert [(k.tolist(), c.tolist(), c.dtype) for k, c in fast] == [(k.tolist(), c.tolist(), c.dtype) for k, c in slow]


def _generation_files(root: Path) -> dict[str, bytes]:
    generation = root / (root / "CURRENT").read_text().strip()
    return {str(p.relative_to(generation)): p.read_bytes() for p in sorted(generation.rglob("*.npy"))}


def test_index_is_byte_identical_with_and_without_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection large enough for the indexing parent to load the loop (a full first
    batch, a source over LOAD_BYTES), built with 2 workers that inherit it, and built with
    numpy alone; a small source does not load it."""
    source = tmp_path / "docs"
    source.mkdir()
    rng = np.random.default_rng(3)
    words = np.array(["alpha", "Beta", "the", "of", "gamma", "x_1", "42", "déjà", "delta", "EPSILON"])
    for i in range(600):
        (source / f"{i:04d}.txt").write_text(" ".join(rng.choice(words, 30 + i % 50).tolist()))
    monkeypatch.setattr(compiled_terms, "LOAD_BYTES", 1 << 16)
    monkeypatch.setattr(compiled_terms, "_KERNELS", compiled_terms._KERNELS.fresh())
    with monkeypatch.context() as refused:
        refused.setattr(compiled_terms, "load", lambda: False)  # load() refuses: numpy alone
        Index.update_from(source, tmp_path / "numpy", workers=2)
    Index.update_from(source, tmp_path / "compiled", workers=2)
    assert compiled_terms.loaded()
    numpy_files, compiled_files = _generation_files(tmp_path / "numpy"), _generation_files(tmp_path / "compiled")
    assert numpy_files and numpy_files == compiled_files
    monkeypatch.setattr(compiled_terms, "LOAD_BYTES", 64 << 20)
    monkeypatch.setattr(compiled_terms, "_KERNELS", compiled_terms._KERNELS.fresh())
    Index.update_from(source, tmp_path / "small", workers=1)
    assert not compiled_terms.loaded() and _generation_files(tmp_path / "small") == numpy_files
