"""Passage matching (SPEC §7): splitting, and partial copies found where whole documents blur."""

from __future__ import annotations

from pathlib import Path

import pytest

from coderiv.errors import UnknownNameError
from coderiv.evaluation.methods import get_method
from coderiv.index.index import Index
from coderiv.ranking.passage_windows import passage_matrix, passage_scores, split_passages
from conftest import write_docs

QUERY = [f"q{i}" for i in range(100)]


def other(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def test_split_passages_50_by_25() -> None:
    passages = split_passages(QUERY)
    # 100 words: passages at 0, 25 and 50 (the last ends exactly at the end).
    assert [p[0] for p in passages] == ["q0", "q25", "q50"]
    assert all(len(p) == 50 for p in passages)


def test_split_passages_last_one_reaches_the_end() -> None:
    assert split_passages(list("abcdefg"), 4, 2) == [list("abcd"), list("cdef"), list("defg")]
    assert split_passages(list("abc"), 4, 2) == [list("abc")]
    assert split_passages([], 4, 2) == []
    with pytest.raises(ValueError):
        split_passages(list("abc"), 4, 5)


def test_a_copy_matches_every_passage() -> None:
    (score,) = passage_scores(QUERY, [QUERY])
    assert (score.matched, score.query_passages, score.percent) == (3, 3, 100.0)


def test_partial_copy_is_found() -> None:
    # D = 50 other words + the query's first 50 words + 50 other words; E shares nothing.
    d = other("x", 50) + QUERY[:50] + other("y", 50)
    e = other("z", 120)
    scores = passage_scores(QUERY, [d, e])
    # Query passage 0 (q0..q49) equals D's passage at 50: 100%. Passage 1 (q25..q74) has
    # q50..q74 nowhere in the collection, so its self-score counts q25..q49 only, all of which
    # D's passage at 75 holds: 100% too. Passage 2 (q50..q99) is absent: self-score 0, 0%.
    assert [(s.matched, s.query_passages) for s in scores] == [(2, 3), (0, 3)]
    assert scores[0].percent == pytest.approx(200 / 3)
    matrix, owners = passage_matrix(QUERY, [d, e])
    assert owners.tolist() == [0] * 5 + [1] * 4  # D: 150 words, 5 passages; E: 120 words, 4
    assert matrix[0, 2] == pytest.approx(100.0) and matrix[2].max() == 0.0


def test_threshold_decides_a_match() -> None:
    d = other("x", 50) + QUERY[:50] + other("y", 50)
    assert passage_scores(QUERY, [d], threshold=100.0)[0].matched == 2
    assert passage_scores(QUERY, [d], threshold=100.1)[0].matched == 0


def test_passages_evaluation_method(tmp_path: Path) -> None:
    words = [f"w{i}" for i in range(100)]
    docs = {
        "query.txt": " ".join(words),
        "part.txt": " ".join(other("x", 50) + words[:50] + other("y", 50)),  # as D above
        "none.txt": " ".join(other("z", 120)),
    }
    Index.update_from(write_docs(tmp_path / "docs", docs), tmp_path / "idx")
    index = Index.open(tmp_path / "idx")
    pct = get_method("passages")(index)("query.txt")
    by_id = dict(zip(index.doc_ids, pct.tolist()))
    # N = 3 + 5 + 4 = 12 passages. Query passage 0 (w0..w49) equals part.txt's passage at 50:
    # 100%. Passage 1 (w25..w74) now has every term in the collection: its self-score is
    # Σ N/f_t = 25 · 12/4 (w25..w49: in 2 query and 2 part.txt passages) + 25 · 12/2 (w50..w74)
    # = 225; part.txt's passage at 75 shares w25..w49: 75, i.e. 33% < 50%. Passage 2: no match.
    assert by_id["query.txt"] == pytest.approx(100.0)
    assert by_id["none.txt"] == 0.0
    assert by_id["part.txt"] == pytest.approx(100 * 1 / 3)
    with pytest.raises(UnknownNameError):
        get_method("passages:bogus")
