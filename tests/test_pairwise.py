"""Shingles, chunk similarity and Patricia/SiString similarity: paper 001's worked examples,
hand-counted values and the laws they obey."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.overlap.matching import normalize
from coderiv.overlap.pairwise import chunk_set, chunk_similarity, patricia, patricia_counter, shingle_set, shingles
from coderiv.text.analysis import Analyzer

ANALYZER = Analyzer()


def test_paper_001_shingle_example_two_thirds() -> None:
    p = ANALYZER.terms("uma rosa é uma rosa é uma rosa")
    c = ANALYZER.terms("uma rosa é uma rosa vermelha ou branca.")
    s = shingles(p, c, 4)
    # S(P) = {(uma rosa é uma), (rosa é uma rosa), (é uma rosa é)}: 3 distinct of 5 shingles.
    # S(C) has 5 distinct shingles; 2 of them are in S(P).
    assert (s.a, s.b, s.shared) == (3, 5, 2)
    assert s.a_in_b == pytest.approx(2 / 3)  # 66.7%
    assert s.b_in_a == pytest.approx(2 / 5)
    assert s.resemblance == pytest.approx(2 / (3 + 5 - 2))


def test_paper_001_patricia_example() -> None:
    p = normalize("uma rosa é uma rosa é uma rosa.")
    c = normalize("nunca uma rosa é uma rosa é uma violeta.")
    assert len(p) == 31
    # "uma rosa é uma rosa é uma " (26 > 15) counts; after the jump, "violeta." matches nothing.
    assert patricia_counter(c, p) == 26
    assert patricia(c, p) == pytest.approx(26 / 31)  # 83.9%


def test_patricia_ignores_matches_of_15_characters_or_less() -> None:
    suspicious = normalize("alpha beta gamma delta epsilon zeta")
    # "alpha beta gamma" is 16 characters: counted; "alpha beta gamm" + x is 15: not counted.
    assert patricia_counter(normalize("alpha beta gamma!"), suspicious) == 16
    assert patricia_counter(normalize("alpha beta gammx"), suspicious) == 0


def test_patricia_jumps_past_a_match() -> None:
    suspicious = normalize("one two three four five six seven eight")
    candidate = normalize("one two three four five six seven eight")
    # One match of the whole text (39 characters), not one per word start (39 + 35 + ...).
    assert patricia_counter(candidate, suspicious) == 39
    assert patricia(candidate, suspicious) == 1.0


def test_patricia_counts_two_separate_matches() -> None:
    suspicious = normalize("the first shared sentence. unrelated words here. the second shared sentence.")
    candidate = normalize("the first shared sentence. xx yy zz the second shared sentence.")
    # "the first shared sentence. " (27) and "the second shared sentence." (27).
    assert patricia_counter(candidate, suspicious) == 27 + 27


def test_shingles_of_a_short_document_are_one_shingle() -> None:
    assert len(shingle_set(["a", "b"], 4)) == 1
    assert len(shingle_set([], 4)) == 0
    assert shingles([], ["a"]).a_in_b == 0.0


def test_chunk_similarity_is_asymmetric() -> None:
    long = [f"w{i}" for i in range(30)]
    short = long[10:20]  # 6 chunks of 5 words, all inside the long document
    assert chunk_similarity(short, long) == 1.0
    assert chunk_similarity(long, short) == pytest.approx(6 / 26)  # 26 chunks in the long one
    assert chunk_set(short).dtype.kind == "u" and int(chunk_set(short).max()) < 2**32


def test_shingle_width_must_be_positive() -> None:
    with pytest.raises(ValueError):
        shingle_set(["a"], 0)


TERMS = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30)


@settings(max_examples=100, deadline=None)
@given(TERMS, TERMS, st.integers(1, 6))
def test_containment_at_least_resemblance(a: list[str], b: list[str], w: int) -> None:
    s = shingles(a, b, w)
    assert s.a_in_b >= s.resemblance and s.b_in_a >= s.resemblance
    assert 0.0 <= s.resemblance <= 1.0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=30), st.integers(1, 6))
def test_a_document_fully_contains_itself(a: list[str], w: int) -> None:
    s = shingles(a, a, w)
    assert s.a_in_b == s.b_in_a == s.resemblance == 1.0
    assert chunk_similarity(a, a) == 1.0
    text = " ".join(a) + " and some more words to be long enough"
    assert patricia(normalize(text), normalize(text)) == 1.0
