"""Text analysis (SPEC §1) and text extraction."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.errors import AnalysisMismatchError, UnknownNameError
from coderiv.text.analysis import (
    WORD_RE,
    AnalysisSettings,
    Analyzer,
    default_stoplist,
    split_paragraphs,
    text_pieces,
)
from coderiv.text.extract import decode, html_to_text, looks_binary, visible_text


def test_words_are_runs_of_letters_and_digits_case_folded():
    analyzer = Analyzer(AnalysisSettings(stop=False))
    assert analyzer.terms("Straße_42 naïve-Café, x2!") == ["strasse", "42", "naïve", "café", "x2"]


def test_stopping_drops_stoplist_words_only():
    assert "the" in default_stoplist() and "rose" not in default_stoplist()
    assert Analyzer().terms("The rose is a rose") == ["rose", "rose"]
    assert Analyzer(AnalysisSettings(stop=False)).terms("The rose is a rose") == ["the", "rose", "is", "a", "rose"]


def test_stemming_uses_snowball():
    analyzer = Analyzer(AnalysisSettings(stop=True, stem=True))
    assert analyzer.terms("Running runners ran") == ["run", "runner", "ran"]


def test_unknown_stemming_language_is_refused():
    with pytest.raises(UnknownNameError, match="klingon"):
        AnalysisSettings(stem=True, language="klingon")


def test_settings_round_trip_and_mismatch():
    settings = AnalysisSettings(stop=False, stem=True, language="german")
    assert AnalysisSettings.from_dict(settings.to_dict()) == settings
    tampered = {**settings.to_dict(), "stoplist": "0000"}
    with pytest.raises(AnalysisMismatchError):
        AnalysisSettings.from_dict(tampered)


def test_sentences_and_paragraphs_in_term_positions():
    text = "Alpha beta. Gamma delta! Epsilon?\n\nZeta eta.\n \nTheta"
    doc = Analyzer(AnalysisSettings(stop=False)).analyze(text)
    assert doc.terms == ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    assert doc.sentence_starts == [0, 2, 4, 5, 7]
    assert doc.paragraph_starts == [0, 5, 7]
    assert split_paragraphs("a\n\nb\n  \n\nc") == ["a", "b", "c"]


def test_html_reduces_to_visible_text():
    page = (
        "<!DOCTYPE html><html><head><title>T</title><style>p {x: 1}</style></head><body>"
        "<script>var hidden = 1;</script><!-- comment --><p>Fish &amp; chips</p><p>caf&eacute;</p></body></html>"
    )
    text = html_to_text(page)
    assert "hidden" not in text and "comment" not in text and "x: 1" not in text
    assert Analyzer(AnalysisSettings(stop=False)).terms(text) == ["fish", "chips", "café"]
    assert visible_text(page.encode(), "page.txt").text == text  # detected by its start too


def test_undecodable_bytes_are_replaced_and_reported():
    decoded = decode(b"caf\xe9 ok")
    assert decoded.lossy and decoded.text == "caf\ufffd ok"
    assert not decode("café".encode()).lossy
    assert decode(b"\xef\xbb\xbfhello").text == "hello"


def test_binary_detection():
    assert looks_binary(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert not looks_binary(b"plain text\n")
    assert not looks_binary(b"")


@given(st.text(max_size=200))
def test_fast_word_split_equals_the_definition(text):
    # words are maximal runs of letters and digits: \w without the underscore (SPEC §1)
    assert Analyzer(AnalysisSettings(stop=False)).words(text) == WORD_RE.findall(text.casefold())


@given(st.text(alphabet="ab cd the and Running runs ran_x.\n", max_size=300), st.booleans(), st.booleans())
def test_counts_only_analysis_equals_counting_the_terms(text, stop, stem):
    analyzer = Analyzer(AnalysisSettings(stop=stop, stem=stem))
    fast = analyzer.counts(text)
    terms = analyzer.terms(text)
    assert fast.term_counts() == Counter(terms) and fast.length == len(terms)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "B", "ß", "İ", "ﬁ", "Σ", "_", " ", "\n", "\t", "1", "é", "\u0301", "."]), max_size=120),
       st.integers(min_value=1, max_value=8))
def test_text_pieces_keep_every_word(text: str, size: int) -> None:
    """Pieces cut after a space or newline join back to the text, and their words (after case
    folding, which can lengthen a character) are the text's words, in order."""
    pieces = list(text_pieces(text, size))
    assert "".join(pieces) == text
    analyzer = Analyzer()
    assert [w for p in pieces for w in analyzer.words(p)] == analyzer.words(text)
