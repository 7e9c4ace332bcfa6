"""The plagiarism generator (SPEC §9): hand-counted shares, reproducibility, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coderiv.errors import InputError
from coderiv.evaluation.generate import generate_cases
from coderiv.text.collection import iter_collection
from tests.support.files import write_docs


def paragraph(doc: str, k: int) -> str:
    return " ".join(f"{doc}p{k}w{i}" for i in range(15))  # 15 distinct words


def collection(tmp_path: Path, n_docs: int = 5) -> Path:
    docs = {f"d{j}.txt": "\n\n".join(paragraph(f"d{j}", k) for k in range(4)) for j in range(n_docs)}
    return write_docs(tmp_path / "docs", docs)


def test_shares_counted_by_hand(tmp_path: Path) -> None:
    (case,) = generate_cases(iter_collection(collection(tmp_path)), 1, n_sources=3, own_share=0.4, seed=1)
    # Every donor: 4 paragraphs x 15 words = 60 words. The own document gives up to half of
    # its words: 2 paragraphs, 30 words; the case is then 30 / 0.4 = 75 words and each of the
    # 3 sources gives 75 x 0.6 / 3 = 15 words: one paragraph, 15/60 = 25% of it.
    own, *sources = case["sources"]
    assert (own["role"], own["words_used"], own["expected_percent"], own["share_of_plagiarized_percent"]) == ("own", 30, 50.0, 40.0)
    for s in sources:
        assert (s["role"], s["words_used"], s["expected_percent"], s["share_of_plagiarized_percent"]) == ("source", 15, 25.0, 20.0)
        assert (s["doc_words"], s["paragraphs_in_doc"], s["paragraphs_used"]) == (60, 4, 1)
    assert case["words"] == 75
    assert len({s["doc_id"] for s in case["sources"]}) == 4
    # The text is exactly the chosen paragraphs, each from its donor.
    pieces = case["text"].strip().split("\n\n")
    assert len(pieces) == 5
    for donor in case["sources"]:
        prefix = donor["doc_id"].removesuffix(".txt") + "p"
        assert sum(p.startswith(prefix) for p in pieces) == donor["paragraphs_used"]


def test_same_seed_same_cases(tmp_path: Path) -> None:
    folder = collection(tmp_path)
    first = list(generate_cases(iter_collection(folder), 3, seed=7))
    again = list(generate_cases(iter_collection(folder), 3, seed=7))
    other = list(generate_cases(iter_collection(folder), 3, seed=8))
    assert json.dumps(first) == json.dumps(again)
    assert json.dumps(first) != json.dumps(other)
    assert [c["case_id"] for c in first] == ["G001", "G002", "G003"]


def test_too_few_documents(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="only 3 documents"):
        list(generate_cases(iter_collection(collection(tmp_path, 3)), 1, n_sources=3))


def test_bad_share(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="own share"):
        list(generate_cases(iter_collection(collection(tmp_path)), 1, own_share=1.0))
