"""Comparing two texts with every method, both ways."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.errors import UnknownNameError
from coderiv.overlap.compare import COMPARE_METHODS, DEFAULT_MAX_PASSAGE_PAIRS, compare_texts
from coderiv.overlap.matching import coverage_percent, normalize, shared_passages
from coderiv.overlap.pairwise import patricia, shingles
from coderiv.text.analysis import AnalysisSettings, Analyzer

ROSA = "uma rosa é uma rosa é uma rosa."
NUNCA = "nunca uma rosa é uma rosa é uma violeta."


def rows(a: str, b: str, **kw: object) -> dict[str, tuple[float, float]]:
    result = compare_texts(a, b, **kw)  # type: ignore[arg-type]
    return {r.method: (r.a_in_b, r.b_in_a) for r in result.rows}


def test_paper_examples_through_compare() -> None:
    got = rows(ROSA, NUNCA, methods=["patricia"])
    # A = ROSA is the suspicious document: 26 of its 31 characters; B = NUNCA: 26 of 40.
    assert got["patricia"] == pytest.approx((100 * 26 / 31, 100 * 26 / 40))
    got = rows("uma rosa é uma rosa é uma rosa", "uma rosa é uma rosa vermelha ou branca.", methods=["containment", "shingles"])
    assert got["containment w=4"] == pytest.approx((200 / 3, 40.0))
    assert got["shingles w=4"] == pytest.approx((100 / 3, 100 / 3))


def test_a_copy_is_100_percent_by_every_method() -> None:
    text = "A long enough paragraph of words, " * 10
    got = rows(text, text)
    assert set(got) == {"shingles w=4", "containment w=4", "chunks n=5", "patricia", "matching ≥60", "aligned", "passages"}
    # a phrase repeated 10 times has no seed (an n-gram in a text more than 8 times is
    # boilerplate to the alignment, docs/alignment.md "Limits"): aligned finds nothing in it
    assert got.pop("aligned") == (0.0, 0.0)
    for a_in_b, b_in_a in got.values():
        assert a_in_b == pytest.approx(100.0) and b_in_a == pytest.approx(100.0)
    varied = " ".join(f"word{i} of the paragraph" for i in range(30))
    assert rows(varied, varied, methods=["aligned"])["aligned"] == pytest.approx((100.0, 100.0))


def test_passages_and_matching_both_ways() -> None:
    shared = "this exact sentence is copied word for word from one file into the other one"
    a = shared  # 76 characters, all of them shared
    b = "A preface of other words that only B has got. " + shared + " And an end."
    result = compare_texts(a, b, methods=["matching"])
    (p,) = result.passages
    assert (p.a_start, p.a_end) == (0, len(shared))
    assert b[p.b_start : p.b_end] == shared
    (row,) = result.rows
    assert row.a_in_b == pytest.approx(100.0)
    # B (46 + 76 + 12 = 134 characters, first word start at 0) has the 76 shared ones covered.
    assert len(b) == 134
    assert row.b_in_a == pytest.approx(100 * len(shared) / len(b))


def test_analysis_settings_change_shingles() -> None:
    a, b = "the cat sat on the mat", "a cat sat on a mat"
    stopped = rows(a, b, methods=["containment"], width=3)
    unstopped = rows(a, b, methods=["containment"], width=3, analyzer=Analyzer(AnalysisSettings(stop=False)))
    assert stopped["containment w=3"] == (100.0, 100.0)  # both are "cat sat mat"
    assert unstopped["containment w=3"] == (25.0, 25.0)  # 1 of 4 shingles: "cat sat on"


def test_unknown_method() -> None:
    with pytest.raises(UnknownNameError, match="method must be one of"):
        compare_texts("a", "b", methods=["bogus"])
    assert "matching" in COMPARE_METHODS


WEB = (
    "Flask is a lightweight web application framework. It is designed to make getting started "
    "quick and easy, with the ability to scale up to complex applications. It began as a simple "
    "wrapper around Werkzeug and Jinja and has become one of the most popular Python web "
    "application frameworks. Flask offers suggestions, but does not enforce any dependencies or "
    "project layout. It is up to the developer to choose the tools and libraries they want to "
    "use. There are many extensions provided by the community that make adding new "
    "functionality easy. A simple example: install the package, write a view function that "
    "returns a greeting, and run the development server on your machine."
)
DATABASE = (
    "The Engine is the starting point for any SQLAlchemy application. It is home base for the "
    "actual database and its DBAPI, delivered to the application through a connection pool and "
    "a Dialect, which describes how to talk to a specific kind of database and DBAPI "
    "combination. A connection is acquired from the pool, a transaction begins, statements are "
    "executed and rows are fetched; when the block ends the transaction is committed or rolled "
    "back and the connection returns to the pool. Connection pooling keeps connections open "
    "across requests so that each new statement does not pay for a fresh network handshake with "
    "the server."
)


def test_unrelated_texts_have_no_passages() -> None:
    # Two unrelated texts (a web framework's README, a database driver's docs) share a few
    # common words (application, simple, server, new, ...) and nothing else: every method says
    # 0%. Passage scoring used to see only the other text's vocabulary and said 100% here.
    got = rows(WEB, DATABASE)
    assert got["passages"] == (0.0, 0.0)
    assert got["shingles w=4"] == (0.0, 0.0) and got["chunks n=5"] == (0.0, 0.0)


def test_passage_count_is_the_number_of_passages_split() -> None:
    from coderiv.overlap.compare import passage_count, passage_pairs
    from coderiv.ranking.passage_windows import split_passages

    for n in range(0, 400):
        for size, step in ((50, 25), (7, 3), (5, 5)):
            assert passage_count(n, size, step) == len(split_passages(["w"] * n, size, step)), (n, size, step)
    # 100 terms: passages at 0, 25, 50; 60 terms: at 0 and 10; 5 passages, scored 5 x 5 times
    assert (passage_count(100), passage_count(60), passage_pairs(100, 60)) == (3, 2, 25)


def test_passages_past_the_limit_left_out_of_all_and_refused_by_name() -> None:
    from coderiv.errors import InputError

    a = " ".join(f"alpha{i}" for i in range(100))  # 3 passages
    b = " ".join(f"alpha{i}" for i in range(60))  # 2 passages: 25 passage pairs
    full = compare_texts(a, b)
    assert [r.method for r in full.rows][-1] == "passages" and full.notes == []
    assert compare_texts(a, b, max_passage_pairs=25).rows == full.rows  # at the limit: computed
    cut = compare_texts(a, b, max_passage_pairs=24)
    assert cut.rows == full.rows[:-1] and cut.passages == full.passages
    assert cut.notes == [
        "passages: these texts make 25 passage pairs, more than the limit of 24 (its cost grows with the "
        "square of the texts' length); raise --max-passage-pairs to compute it"
    ]
    assert cut.to_dict()["notes"] == cut.notes and "notes" not in full.to_dict()
    with pytest.raises(InputError, match="25 passage pairs, more than the limit of 24"):
        compare_texts(a, b, methods=["passages"], max_passage_pairs=24)
    assert compare_texts(a, b, methods=["chunks"], max_passage_pairs=1).rows == full.rows[2:3]


def _counting_postings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the postings ``passages`` reads (what :func:`passage_postings` predicts)."""
    from coderiv.ranking import passage_windows

    read: list[int] = []
    real = passage_windows.store_contributions

    def counted(*args: Any, **kwargs: Any) -> Any:
        docs, contributions = real(*args, **kwargs)
        read.append(len(docs))
        return docs, contributions

    monkeypatch.setattr(passage_windows, "store_contributions", counted)
    return read


#: One paragraph of 40 distinct terms (no stop words): any 50-term passage of it repeated holds all 40.
PARAGRAPH = " ".join(f"term{i}" for i in range(40))


def test_passage_postings_are_the_postings_passages_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from coderiv.overlap.compare import passage_count, passage_postings
    from coderiv.text.analysis import Analyzer

    read = _counting_postings(monkeypatch)
    a, b = " ".join([PARAGRAPH] * 20), " ".join([PARAGRAPH] * 20)  # 800 terms: 31 passages each
    terms = Analyzer().terms(a)
    assert (len(terms), passage_count(800)) == (800, 31)
    # every term is in all 62 passages of A and B: 40 terms x 62^2
    assert passage_postings(terms, terms) == 40 * 62 * 62 == 153_760
    assert rows(a, b)["passages"] == (100.0, 100.0)
    assert sum(read) == 153_760  # the work done is the work counted
    read.clear()
    prose_a, prose_b = "the cat sat on the mat and looked at the dog", "a dog barked at the cat on the mat"
    rows(prose_a, prose_b)
    assert sum(read) == passage_postings(Analyzer().terms(prose_a), Analyzer().terms(prose_b))


def test_a_paragraph_repeated_trips_the_postings_limit_before_any_work(monkeypatch: pytest.MonkeyPatch) -> None:
    from coderiv.errors import InputError
    from coderiv.overlap.compare import passage_pairs

    read = _counting_postings(monkeypatch)
    repeated = " ".join([PARAGRAPH] * 2000)  # 80,000 terms: 3,199 passages each, 6,398 in all
    assert passage_pairs(80_000, 80_000) == 6398**2 < DEFAULT_MAX_PASSAGE_PAIRS  # the pair limit lets it through
    with pytest.raises(InputError) as refused:
        compare_texts(repeated, repeated, methods=["passages"])
    assert str(refused.value) == (
        f"passages: these texts make {40 * 6398**2:,} passage postings to read, more than the limit of 500,000,000 "
        "(text repeated puts every term in every passage); raise --max-passage-postings to compute it")
    assert read == []  # refused before any posting was read
    left_out = compare_texts(repeated, repeated, methods=["all"])
    assert "passages" not in [r.method for r in left_out.rows] and left_out.notes == [str(refused.value)]
    assert read == []
    five_hundred = " ".join([PARAGRAPH] * 500)  # 40 x 1,598^2 = 102 M postings: within the limit
    assert compare_texts(five_hundred, five_hundred, methods=["passages"]).rows[0].a_in_b == 100.0
    assert sum(read) == 40 * 1598**2


# Texts made of a few words, so that long exact passages and repeats are common.
_words = st.lists(st.sampled_from(["rosa", "uma", "é", "violeta", "Nunca,", "word\n", "ab"]), min_size=0, max_size=60)


@settings(max_examples=60, deadline=None)
@given(_words.map(" ".join), _words.map(" ".join), st.integers(5, 40))
def test_rows_equal_each_measure_computed_on_its_own(a: str, b: str, threshold: int) -> None:
    """compare shares one suffix sort per direction and one shingle count between methods: every
    row and passage equals the measure computed alone, as before that sharing."""
    result = compare_texts(a, b, methods=["all"], threshold=threshold)
    got = {r.method: (r.a_in_b, r.b_in_a) for r in result.rows}
    analyzer = Analyzer()
    ta, tb = analyzer.terms(a), analyzer.terms(b)
    na, nb = normalize(a), normalize(b)
    s = shingles(ta, tb, 4)
    assert got["shingles w=4"] == (100 * s.resemblance, 100 * s.resemblance)
    assert got["containment w=4"] == (100 * s.a_in_b, 100 * s.b_in_a)
    assert got["patricia"] == (100 * patricia(nb, na), 100 * patricia(na, nb))
    assert result.passages == shared_passages(na, nb, threshold)
    assert got[f"matching ≥{threshold}"] == (
        coverage_percent(na, shared_passages(na, nb, threshold), "a", threshold),
        coverage_percent(nb, shared_passages(nb, na, threshold), "a", threshold),
    )
