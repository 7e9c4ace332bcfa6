"""The plagiarism generator (SPEC §9): hand-counted shares, reproducibility, bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coderiv.errors import InputError
from coderiv.evaluation.generate import generate_from_texts
from coderiv.text.collection import iter_collection
from coderiv.text.extract import document_text
from tests.support.files import write_docs


def paragraph(doc: str, k: int) -> str:
    return " ".join(f"{doc}p{k}w{i}" for i in range(20))  # 20 distinct words: one unit each


def generate_cases(folder: Path, count: int, **options: Any) -> Iterator[dict[str, Any]]:
    """``coderiv generate``'s cases from the documents of ``folder``, read by their text."""
    texts = {doc.doc_id: document_text(doc.data, doc.doc_id) for doc in iter_collection(folder)}
    return generate_from_texts(sorted(texts), lambda ids: {i: texts[i] for i in ids}, count, **options)


def collection(tmp_path: Path, n_docs: int = 5) -> Path:
    docs = {f"d{j}.txt": "\n\n".join(paragraph(f"d{j}", k) for k in range(4)) for j in range(n_docs)}
    return write_docs(tmp_path / "docs", docs)


def test_shares_counted_by_hand(tmp_path: Path) -> None:
    (case,) = generate_cases(collection(tmp_path), 1, n_sources=3, own_share=0.4, seed=1)
    # Every donor: 4 paragraphs x 20 words = 80 words. The own document gives up to half of
    # its words: 2 paragraphs, 40 words; the case is then 40 / 0.4 = 100 words and each of the
    # 3 sources gives 100 x 0.6 / 3 = 20 words: one paragraph, 20/80 = 25% of it.
    own, *sources = case["sources"]
    assert (own["role"], own["words_used"], own["expected_percent"], own["share_of_plagiarized_percent"]) == ("own", 40, 50.0, 40.0)
    for s in sources:
        assert (s["role"], s["words_used"], s["expected_percent"], s["share_of_plagiarized_percent"]) == ("source", 20, 25.0, 20.0)
        assert (s["doc_words"], s["paragraphs_in_doc"], s["paragraphs_used"]) == (80, 4, 1)
    assert case["words"] == 100
    assert len({s["doc_id"] for s in case["sources"]}) == 4
    # The text is exactly the chosen paragraphs, each from its donor.
    pieces = case["text"].strip().split("\n\n")
    assert len(pieces) == 5
    for donor in case["sources"]:
        prefix = donor["doc_id"].removesuffix(".txt") + "p"
        assert sum(p.startswith(prefix) for p in pieces) == donor["paragraphs_used"]


def test_same_seed_same_cases(tmp_path: Path) -> None:
    folder = collection(tmp_path)
    first = list(generate_cases(folder, 3, seed=7))
    again = list(generate_cases(folder, 3, seed=7))
    other = list(generate_cases(folder, 3, seed=8))
    assert json.dumps(first) == json.dumps(again)
    assert json.dumps(first) != json.dumps(other)
    assert [c["case_id"] for c in first] == ["G001", "G002", "G003"]


def test_too_few_documents(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="only 3 documents"):
        list(generate_cases(collection(tmp_path, 3), 1, n_sources=3))


def test_bad_share(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="own share"):
        list(generate_cases(collection(tmp_path), 1, own_share=1.0))


def test_short_paragraphs_are_copied_with_the_ones_after_them() -> None:
    """Rendered reStructuredText makes a paragraph of every heading and list item; a case copies
    units of at least MIN_UNIT_WORDS (20) words: a heading with its text, a list with its items."""
    from coderiv.evaluation.generate import MIN_UNIT_WORDS, as_donor
    from coderiv.text.analysis import Analyzer

    words = [f"w{i}" for i in range(100)]
    heading, body = "Installing it", " ".join(words[:35])  # 2 and 35 words
    items = [" ".join(words[35 + 3 * k: 38 + 3 * k]) for k in range(7)]  # 7 items of 3 words: 21
    tail = "the end"  # 2 words: joined to the unit before it
    donor = as_donor("d.rst", "\n\n".join([heading, body, *items, tail]), Analyzer())
    assert donor is not None and MIN_UNIT_WORDS == 20
    assert donor.paragraphs == [heading + "\n\n" + body, "\n\n".join([*items, tail])]
    assert donor.words == [37, 23]


def test_only_the_documents_drawn_are_read() -> None:
    from coderiv.evaluation.generate import generate_from_texts

    text = "\n\n".join(paragraph("d", k) for k in range(4))
    asked: list[str] = []

    def texts(ids: list[str]) -> dict[str, str]:
        asked.extend(ids)
        return {doc_id: text.replace("d", doc_id) for doc_id in ids}

    ids = [f"doc{i:03d}" for i in range(1000)]
    cases = list(generate_from_texts(ids, texts, 2, n_sources=3, seed=5))
    # 2 cases of 4 donors: one batch of max(16, 8 · 5/4) documents, not the 1,000
    assert len(cases) == 2 and len(asked) == 16
    donors = [s["doc_id"] for case in cases for s in case["sources"]]
    assert len(set(donors)) == 8  # without replacement while the collection lasts
