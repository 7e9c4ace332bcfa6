"""Quotations and bibliographies found in a query's text (coderiv.text.exclusions)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coderiv.text.exclusions import Span, bibliography_headings, bibliography_spans, merge_spans, quote_spans, word_bounds


def spans(text: str) -> list[str]:
    return [text[s.start : s.end] for s in quote_spans(text)]


@pytest.mark.parametrize(
    "quoted", ['"as he said"', "“as he said”", "„wie er sagte“", "„jak powiedział”", "«comme il a dit»", "»wie er sagte«"],
)
def test_quotation_marks(quoted: str) -> None:
    assert spans(f"Before {quoted} after.") == [quoted]


def test_quotes_do_not_cross_a_blank_line_and_may_cross_a_line_break() -> None:
    assert spans('He wrote "one\ntwo" here.') == ['"one\ntwo"']
    assert spans('A stray " mark.\n\nAnother " mark.') == []
    assert spans('"a" and "b"') == ['"a"', '"b"']


def test_markdown_and_rest_block_quotes() -> None:
    text = "Intro line.\n\n> quoted one\n> quoted two\n\nAfter.\n"
    assert spans(text) == ["> quoted one\n> quoted two"]
    rest = "Body paragraph.\n\n   An indented quotation\n   of two lines.\n\nBack to the body.\n"
    assert rest_spans(rest) == ["An indented quotation\n   of two lines.\n"]
    assert spans(rest) == []  # indentation is a quotation in reStructuredText only (Markdown: code)


@pytest.mark.parametrize("text", [
    "Example::\n\n   code block here\n\n   more code\n\nBody.\n",
    ".. code-block:: python\n\n   x = 1\n\n   y = 2\n\nBody.\n",
    ".. note::\n\n   Content of the note.\n",
    "- a list item\n\n  its second paragraph\n",
    "1. first item\n\n   continued\n",
])
def test_indented_code_directives_and_lists_are_not_quotes(text: str) -> None:
    assert rest_spans(text) == []


def rest_spans(text: str) -> list[str]:
    return [text[s.start : s.end] for s in quote_spans(text, rest=True)]


def test_quote_spans_carry_kind_and_reason() -> None:
    assert quote_spans('x "y" z') == [Span(2, 5, "quote", "quoted text")]


def test_bibliography_runs_to_the_end_or_the_next_section() -> None:
    text = "Body text.\n\nReferences\n\nSmith, J. (2001). A book.\n"
    (span,) = bibliography_spans(text)
    assert (text[span.start : span.end], span.kind, span.reason) == (text[12:], "bibliography", "bibliography (References)")
    md = "# Thesis\n\nBody.\n\n## 7. Bibliography:\n\nA. Author, Title.\n\n## Appendix A\n\nTables.\n"
    (span,) = bibliography_spans(md)
    assert md[span.start : span.end] == "## 7. Bibliography:\n\nA. Author, Title.\n\n"
    german = "Text.\n\nLiteraturverzeichnis\nMüller 2003\n\nAnhang\nTabelle 1\n"
    (span,) = bibliography_spans(german)
    assert german[span.start : span.end] == "Literaturverzeichnis\nMüller 2003\n\n"


def test_a_heading_word_inside_a_sentence_is_not_a_bibliography() -> None:
    assert bibliography_spans("The references in this chapter are old.\nLiterature review follows.\n") == []


def test_heading_list_holds_several_languages() -> None:
    headings = bibliography_headings()
    for name in ("references", "bibliography", "works cited", "literatur", "bibliographie", "referências"):
        assert name in headings


def test_merge_joins_overlapping_spans_of_one_kind() -> None:
    merged = merge_spans([Span(5, 9, "quote", "b"), Span(0, 6, "quote", "a"), Span(7, 12, "template", "t")])
    assert merged == [Span(0, 9, "quote", "a"), Span(7, 12, "template", "t")]


def test_word_bounds() -> None:
    starts, ends = word_bounds("Hello, wörld_2 x")
    assert list(zip(starts.tolist(), ends.tolist())) == [(0, 5), (7, 12), (13, 14), (15, 16)]


@given(st.text(alphabet='ab "“”«»„\n>', max_size=60))
def test_quote_spans_are_sorted_inside_the_text_and_disjoint(text: str) -> None:
    found = quote_spans(text)
    for span in found:
        assert 0 <= span.start < span.end <= len(text)
    for first, second in zip(found, found[1:]):
        assert first.end < second.start
