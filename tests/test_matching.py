"""Matching statistics: normalization, the papers' examples, hand-made passages with known
offsets, and agreement with a slow obvious implementation on random texts."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.overlap.matching import (
    coverage_percent,
    matching_statistics,
    matching_statistics_many,
    maximal_matches,
    normalize,
    self_covered,
    shared_passages,
)


def slow_ms(candidate: str, suspicious: str) -> list[int]:
    """ms(i) by brute force: every word start of the candidate against every one of the
    suspicious text, compared character by character."""
    c, s = normalize(candidate), normalize(suspicious)
    out = []
    for i in c.word_starts:
        best = 0
        for j in s.word_starts:
            n = 0
            while i + n < len(c.text) and j + n < len(s.text) and c.text[i + n] == s.text[j + n]:
                n += 1
            best = max(best, n)
        out.append(best)
    return out


def test_normalize_folds_case_collapses_whitespace_and_keeps_offsets() -> None:
    norm = normalize("  Hello\n\n  WORLD  foo_bar ")
    assert norm.text == "hello world foo_bar"
    # "hello" at 2..6, the run "\n\n  " keeps its first character (7), "world" at 11..15,
    # the run of two spaces keeps the first (16), "foo_bar" at 18..24, then the end is 26.
    assert norm.origin.tolist() == [2, 3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 26]
    assert norm.word_starts.tolist() == [0, 6, 12, 16]  # hello, world, foo, bar (_ is no word character)
    assert norm.span(6, 11) == (11, 16)  # "world" in the original


def test_normalize_empty_and_blank() -> None:
    assert normalize("").text == ""
    assert normalize(" \n\t ").text == ""
    assert len(normalize(" \n ").word_starts) == 0


def test_paper_001_longest_match_is_26_characters() -> None:
    # "uma rosa é uma rosa é uma " is 3+1+4+1+1+1+3+1+4+1+1+1+3+1 = 26 characters (é is one).
    ms = matching_statistics(
        normalize("nunca uma rosa é uma rosa é uma violeta."), normalize("uma rosa é uma rosa é uma rosa.")
    )
    assert ms.starts.tolist() == [0, 6, 10, 15, 17, 21, 26, 28, 32]
    assert ms.lengths.tolist() == [0, 26, 22, 17, 15, 11, 6, 4, 0]
    assert ms.sources[1] == 0


def test_paper_002_matching_statistics_are_word_starts_only() -> None:
    # Paper 002 §3: after "they went home " the next word start (5 characters on) matches 11 fewer.
    ms = matching_statistics(normalize("they went home before midnight"), normalize("xx they went home early"))
    assert ms.lengths[:3].tolist() == [15, 10, 5]  # "they went home ", "went home ", "home "


def test_hand_made_passage_offsets_in_both_documents() -> None:
    shared = "the quick brown fox jumps over the lazy dog near the river bank"  # 63 characters
    a = "Alpha beta gamma. " + shared + " Delta epsilon."
    b = "Zeta eta theta iota kappa. " + shared.upper() + "! lambda"
    (p,) = shared_passages(normalize(a), normalize(b), threshold=60)
    # A has " " after "bank", B has "!": the match stops there, at 63 characters.
    # "Alpha beta gamma. " is 18 characters, "Zeta eta theta iota kappa. " is 27.
    assert p.length == 63
    assert (p.a_start, p.a_end) == (18, 18 + 63)
    assert (p.b_start, p.b_end) == (27, 27 + 63)
    assert a[p.a_start : p.a_end] == shared
    assert b[p.b_start : p.b_end] == shared.upper()


def test_offsets_survive_collapsed_whitespace() -> None:
    words = "one two three four five six seven eight nine ten eleven twelve"
    a = "start " + words
    b = "other   " + words.replace(" ", "\n   ")
    (p,) = shared_passages(normalize(a), normalize(b), threshold=30)
    assert a[p.a_start : p.a_end] == p.text == words
    assert b[p.b_start : p.b_end] == words.replace(" ", "\n   ")


def test_threshold_keeps_only_long_passages() -> None:
    a = normalize("short common bit and then a much longer passage that both documents share verbatim here")
    b = normalize("short common xx and then a much longer passage that both documents share verbatim here")
    assert [p.length for p in shared_passages(a, b, 60)] == [len("and then a much longer passage that both documents share verbatim here")]
    assert [p.length for p in shared_passages(a, b, 10)] == [13, 70]  # "short common " too


def test_a_document_fully_contains_itself() -> None:
    text = "* A list item, then words: of some length to pass the sixty-character threshold."
    norm = normalize(text)
    passages = shared_passages(norm, norm)
    assert len(passages) == 1
    assert self_covered(norm) == len(norm) - 2  # everything from the first word start ("A")
    assert coverage_percent(norm, passages) == 100.0


def test_too_short_text_has_no_self_coverage() -> None:
    norm = normalize("tiny text")
    assert self_covered(norm) == 0
    assert coverage_percent(norm, shared_passages(norm, norm)) == 0.0


def test_empty_inputs() -> None:
    ms = matching_statistics(normalize("some words"), normalize(""))
    assert ms.lengths.tolist() == [0, 0]
    assert shared_passages(normalize(""), normalize("x y z")) == []


def test_maximal_matches_drop_contained_matches() -> None:
    ms = matching_statistics(normalize("aa bb cc dd zz"), normalize("aa bb cc dd yy"))
    # ms = 12, 9, 6, 3, 0: each later match is the tail of the first one.
    assert ms.lengths.tolist() == [12, 9, 6, 3, 0]
    assert maximal_matches(ms, 1).tolist() == [0]


def test_non_ascii_lengths_count_characters() -> None:
    ms = matching_statistics(normalize("ça été ÿ"), normalize("xx ça été z"))
    assert ms.lengths.tolist() == [7, 4, 0]  # "ça été " and "été " (é is one character)


WORDS = st.sampled_from(["a", "b", "ab", "ba", "aab", "é", "ü", "A", "b.", "a,"])
TEXTS = st.lists(WORDS, min_size=0, max_size=25).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(TEXTS, TEXTS)
def test_agrees_with_slow_implementation(candidate: str, suspicious: str) -> None:
    c, s = normalize(candidate), normalize(suspicious)
    ms = matching_statistics(c, s)
    assert ms.lengths.tolist() == slow_ms(candidate, suspicious)
    for start, length, source in zip(ms.starts, ms.lengths, ms.sources):
        if length:
            assert source in set(s.word_starts.tolist())
            assert s.text[source : source + length] == c.text[start : start + length]


@settings(max_examples=100, deadline=None)
@given(TEXTS, TEXTS, st.integers(1, 12))
def test_passages_are_exact_and_maximal(candidate: str, suspicious: str, threshold: int) -> None:
    c, s = normalize(candidate), normalize(suspicious)
    lengths = slow_ms(candidate, suspicious)
    ends = [int(i) + n for i, n in zip(c.word_starts, lengths)]
    expected = [
        (int(i), n) for k, (i, n) in enumerate(zip(c.word_starts, lengths))
        if n >= threshold and all(ends[k] > e for e in ends[:k])
    ]
    passages = shared_passages(c, s, threshold)
    assert [(int(np.searchsorted(c.origin, p.a_start)), p.length) for p in passages] == expected
    for p in passages:
        assert candidate[p.a_start : p.a_end].casefold() == suspicious[p.b_start : p.b_end].casefold()



@settings(max_examples=100, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=4), TEXTS)
def test_many_candidates_in_one_sort_agree_with_slow_implementation(candidates: list[str], suspicious: str) -> None:
    # Candidates that end alike and start alike must not run into each other across separators.
    many = matching_statistics_many([normalize(c) for c in candidates], normalize(suspicious))
    assert [ms.lengths.tolist() for ms in many] == [slow_ms(c, suspicious) for c in candidates]


def test_candidates_ending_like_the_suspicious_text_stop_at_their_end() -> None:
    # Without distinct separators "ab" + sep + "ab cd" would match "ab" + sep + "ab" + ...
    many = matching_statistics_many([normalize("ab"), normalize("ab cd")], normalize("ab"))
    assert [m.lengths.tolist() for m in many] == [[2], [2, 0]]


def test_overlapping_passages_cover_their_union() -> None:
    a, b = normalize("aa bb cc"), normalize("aa bb xx bb cc")
    passages = shared_passages(a, b, threshold=2)
    # "aa bb " (6) from B's start, then "bb cc" (5), found later in B, reaching further.
    assert [(p.a_start, p.a_end, p.b_start, p.b_end) for p in passages] == [(0, 6, 0, 6), (3, 8, 9, 14)]
    # Together they cover A's 8 characters once each, not 6 + 5 = 11.
    assert coverage_percent(a, passages, threshold=2) == 100.0
    assert coverage_percent(b, passages, side="b", threshold=2) == 100 * 11 / 14


def test_four_byte_characters_count_once() -> None:
    # 😀 is one character (four UTF-8 bytes); the match "x 😀 yy " is 7 characters long.
    ms = matching_statistics(normalize("x 😀 yy zz"), normalize("x 😀 yy ww"))
    assert ms.starts.tolist() == [0, 4, 7]  # 😀 is no word character
    assert ms.lengths.tolist() == [7, 3, 0]
