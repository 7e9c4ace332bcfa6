"""Passage matching (SPEC §7): splitting, and partial copies found where whole documents blur."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from coderiv.errors import UnknownNameError
from coderiv.evaluation.methods import get_method
from coderiv.index.index import Index
from coderiv.ranking.passage_windows import PassageIndex, passage_scores, split_passages
from tests.support.files import write_docs

QUERY = [f"q{i}" for i in range(100)]


def other(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def passage_matrix(query: Sequence[str], documents: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
    """The percentage of every query passage (rows) against every passage of ``documents``
    (columns), with the statistics of passage_scores (the query's passages among them), and
    the document of each column."""
    index = PassageIndex([query, *documents])
    theirs = index.owners > 0
    return np.vstack([row[theirs] for row in index.rows(query)]), index.owners[theirs] - 1


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
    # The query's passages join the statistics: N = 3 + 5 + 4 = 12 passages (the same numbers
    # as the evaluation method below, where the query is indexed). Query passage 0 (q0..q49)
    # equals D's passage at 50: 100%. Passage 1 (q25..q74) has self-score Σ N/f_t =
    # 25 · 12/4 + 25 · 12/2 = 225 and D's passage at 75 shares q25..q49 only: 75, 33% < 50%.
    # Passage 2 (q50..q99) is in no document: 0%.
    assert [(s.matched, s.query_passages) for s in scores] == [(1, 3), (0, 3)]
    assert scores[0].percent == pytest.approx(100 / 3)
    matrix, owners = passage_matrix(QUERY, [d, e])
    assert owners.tolist() == [0] * 5 + [1] * 4  # D: 150 words, 5 passages; E: 120 words, 4
    assert matrix.shape == (3, 9)
    assert matrix[0, 2] == pytest.approx(100.0) and matrix[1, 3] == pytest.approx(100 / 3)
    assert matrix[2].max() == 0.0


def test_unrelated_documents_sharing_two_words_do_not_match() -> None:
    # One passage each, sharing only "common" and "shared". Statistics over both documents:
    # N = 2, f_t = 2 for the two shared words and 1 for the 96 others. The query passage's
    # identity5 self-score is 48 · 2/1 + 2 · 2/2 = 98; against B (same length, L = 1) it is
    # 2 · 2/2 = 2: 2.04%, no match. (With B's vocabulary alone, the self-score was the two shared
    # words' 1 + 1 = 2 and B matched at 100%.)
    a = other("a", 48) + ["common", "shared"]
    b = ["common", "shared"] + other("b", 48)
    matrix, _ = passage_matrix(a, [b])
    assert matrix.tolist() == [[pytest.approx(100 * 2 / 98)]]
    assert [(s.matched, s.percent) for s in passage_scores(a, [b])] == [(0, 0.0)]
    assert [(s.matched, s.percent) for s in passage_scores(b, [a])] == [(0, 0.0)]


def test_threshold_decides_a_match() -> None:
    d = other("x", 50) + QUERY[:50] + other("y", 50)
    # N = 3 + 5 = 8. Passage 0 matches D's passage at 50 at 100%. Passage 1 (q25..q74): self-score
    # 25 · 8/4 + 25 · 8/2 = 150; D's passage at 75 holds q25..q49: 50, i.e. 33.3%.
    assert passage_scores(QUERY, [d], threshold=100.0)[0].matched == 1
    assert passage_scores(QUERY, [d], threshold=100.1)[0].matched == 0
    assert passage_scores(QUERY, [d], threshold=100 / 3 - 1e-9)[0].matched == 2
    assert passage_scores(QUERY, [d], threshold=34.0)[0].matched == 1


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


def test_a_query_from_outside_the_collection_joins_the_statistics(tmp_path: Path) -> None:
    from coderiv.ranking.passage_windows import PassageSearcher

    # The collection of the test above without query.txt; the query is given as text. Its
    # passages join the statistics, so the numbers are those of the indexed query above:
    # N = 5 + 4 + 3 = 12, part.txt matches passage 0 only: 1 of 3, 33.3%. (With the
    # collection's passages alone, passage 1's self-score counted only w25..w49, which part.txt
    # holds: 2 of 3.)
    words = [f"w{i}" for i in range(100)]
    docs = {"part.txt": " ".join(other("x", 50) + words[:50] + other("y", 50)), "none.txt": " ".join(other("z", 120))}
    Index.update_from(write_docs(tmp_path / "docs", docs), tmp_path / "idx")
    index = Index.open(tmp_path / "idx")
    searcher = PassageSearcher(index)
    prepared = searcher.prepare(" ".join(words))
    by_id = dict(zip(index.doc_ids, searcher.percentages(prepared).tolist()))
    assert by_id == {"none.txt": 0.0, "part.txt": pytest.approx(100 / 3)}
    assert not prepared.indexed
    result = searcher.rank(prepared, top=5, label="q")
    assert [(m.doc_id, m.score) for m in result.matches] == [("part.txt", 1.0)]
    # an indexed document as the query is already in the statistics: part.txt matches itself
    assert searcher.percentages(searcher.prepare_doc("part.txt")).tolist()[index.number("part.txt")] == 100.0
