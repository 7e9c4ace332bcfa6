"""Which quotations and bibliographies a report leaves out (coderiv.text.exclusion_rules): only
those that look like one; hand-built texts with known offsets."""

from __future__ import annotations

import pytest

from coderiv.text.exclusion_rules import MAX_QUOTE_WORDS, cited_quotes, is_attributed, reference_entries


def quoted(text: str, rest: bool = False) -> list[str]:
    return [text[s.start : s.end] for s in cited_quotes(text, rest)]


def words(n: int, stem: str = "w") -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


@pytest.mark.parametrize("text", [
    'It is "a short quotation" (Smith 2004).',
    'It is "a short quotation" (Smith, 2004, p. 12).',
    'It is "a short quotation" [12].',
    'It is "a short quotation" [3, 5].',
    "As Smith (2004) writes, “a short quotation”.",
    'According to the report, "a short quotation".',
    'She said: "a short quotation".',
    "Il a écrit « a short quotation ».".replace("« ", "«").replace(" »", "»"),
    '"a short quotation" -- Smith',
])
def test_an_attributed_short_quotation_is_left_out(text: str) -> None:
    (found,) = quoted(text)
    assert "a short quotation" in found and found[0] in "\"“«" and found[-1] in "\"”»"


@pytest.mark.parametrize("text", [
    'A "scare quote" here.',
    'He was "tired". Then we left and nothing was cited at all.',
    '"a short quotation"\n\n(Smith 2004)',  # the citation is in another paragraph
    "Smith (2004) wrote a book. Much later, in another sentence, “a short quotation”.",
])
def test_an_unattributed_quotation_is_counted(text: str) -> None:
    assert quoted(text) == []


def test_a_long_quotation_is_counted_even_attributed() -> None:
    at_limit = f'As Smith (2004) writes, "{words(MAX_QUOTE_WORDS)}".'
    over = f'As Smith (2004) writes, "{words(MAX_QUOTE_WORDS + 1)}".'
    assert quoted(at_limit) == [f'"{words(MAX_QUOTE_WORDS)}"']
    assert quoted(over) == []


def test_block_quotes_allow_200_words_when_attributed() -> None:
    block = "\n".join(f"> {words(10, f'l{k}w')}" for k in range(20))  # 200 words
    assert quoted(f"As Smith (2004) puts it:\n\n{block}\n\nAfter.") == [block]
    longer = block + "\n> one more"
    assert quoted(f"As Smith (2004) puts it:\n\n{longer}\n\nAfter.") == []
    assert quoted(f"Intro.\n\n{block}\n\nAfter.") == []  # not attributed


def test_attribution_offsets() -> None:
    text = 'x "q" (Jones 1999) y'
    assert is_attributed(text, 2, 5)
    assert not is_attributed('x "q" and then a long sentence without any citation in it.', 2, 5)
    assert not is_attributed('Smith (2004) wrote it. Then: "q" here.', 29, 32)  # a sentence ends in between


ENTRIES = [
    "Smith, J. (2004). On words. Publisher.",
    "Jones, K. 1999. Other words. https://example.org/x",
    "Doe, A. (n.d.). Undated. Web.",
]


def bibliography(text: str) -> list[str]:
    return [text[s.start : s.end].strip() for s in reference_entries(text)]


def test_entries_that_look_like_references_at_the_end_are_left_out() -> None:
    text = "Body text.\n\nReferences\n\n" + "\n\n".join(ENTRIES) + "\n"
    assert bibliography(text) == ["References", *ENTRIES]


def test_entries_one_a_line_and_numbered() -> None:
    lines = "\n".join(f"[{k + 1}] {e}" for k, e in enumerate(ENTRIES))
    assert bibliography("Body.\n\nBibliography\n" + lines + "\n") == ["Bibliography", *[f"[{k + 1}] {e}" for k, e in enumerate(ENTRIES)]]
    plain = "\n".join(ENTRIES)  # no markers, each line with a year or n.d.
    assert bibliography("Body.\n\nReferences\n\n" + plain) == ["References", *ENTRIES]


def test_copied_text_under_a_references_heading_is_counted() -> None:
    copied = words(100)  # a paragraph, no year: not an entry
    text = f"Body.\n\nReferences\n\n{copied}\n\n{ENTRIES[0]}\n"
    assert bibliography(text) == ["References", ENTRIES[0]]
    long_with_year = words(81) + " 2004"
    assert bibliography(f"Body.\n\nReferences\n\n{long_with_year}\n") == []  # over 80 words


def test_a_references_section_not_at_the_end_is_counted() -> None:
    text = "# Intro\n\nBody.\n\n# References\n\n" + ENTRIES[0] + "\n\n# Method\n\nMore body.\n"
    assert bibliography(text) == []
    appendix = "Body.\n\nReferences\n\n" + ENTRIES[0] + "\n\nAppendix A\n\nTables."
    assert bibliography(appendix) == ["References", ENTRIES[0]]  # only an appendix follows: at the end
