"""The eight measures of SPEC §3 against scores worked out by hand.

Collection (no stopwords involved): d1 = "apple banana apple", d2 = "banana cherry",
d3 = "cherry cherry date"; query q = "apple banana". So N = 3, f_t: apple 1, banana 2,
cherry 2, date 1; f_d1 = 3, f_d2 = 2, f_d3 = 3, f_q = 2; d3 shares no term (score 0).
"""

from __future__ import annotations

from math import log, sqrt

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv import Index, Searcher
from coderiv.errors import UnknownNameError
from coderiv.ranking.measures import MEASURES, get_measure
from tests.support.files import write_docs

L1 = 1 / (1 + log(1 + abs(3 - 2)))  # L(q, d1): |f_d1 − f_q| = 1
W_D1 = sqrt(((1 + log(2)) * log(4)) ** 2 + log(2.5) ** 2)  # apple: f=2, w=ln 4; banana: f=1, w=ln 2.5
W_D2 = sqrt(log(2.5) ** 2 + log(2.5) ** 2)  # banana and cherry, both f_t = 2

# measure: (S(q,d1), S(q,d2), S(q,q))
EXPECTED = {
    "inner": ((1 + log(2)) * log(4) + log(2.5), log(2.5), log(4) + log(2.5)),
    "normalized": (((1 + log(2)) * log(4) + log(2.5)) / sqrt(3), log(2.5) / sqrt(2), (log(4) + log(2.5)) / sqrt(2)),
    "cosine": (
        (log(4) * (1 + log(2)) * log(4) + log(2.5) * log(2.5)) / W_D1,
        log(2.5) * log(2.5) / W_D2,
        sqrt(log(4) ** 2 + log(2.5) ** 2),
    ),
    "identity1": (1 / (1 + 1) * (log(4) / 2 + log(2.5)), log(2.5), log(4) + log(2.5)),
    "identity2": (L1 * (log(4) / 2 + log(2.5)), log(2.5), log(4) + log(2.5)),
    "identity3": (L1 * (3 * log(4) / 2 + 2 * log(2.5)), 2 * log(2.5), 2 * log(4) + 2 * log(2.5)),
    "identity4": (L1 * (log(3) / 2 + log(1.5)), log(1.5), log(3) + log(1.5)),
    "identity5": (L1 * (3 / 2 + 1.5 / 1), 1.5, 3 + 1.5),
}


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    write_docs(root / "docs", {"d1.txt": "apple banana apple", "d2.txt": "banana cherry", "d3.txt": "cherry cherry date"})
    Index.update_from(root / "docs", root / "index", workers=1)
    return Index.open(root / "index")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scores_and_percentages_match_hand_computation(tiny_index, name):
    searcher = Searcher(tiny_index)
    scores, own = searcher.scores(searcher.prepare("apple banana"), name)
    d1, d2, self_score = EXPECTED[name]
    assert scores == pytest.approx([d1, d2, 0.0], rel=1e-12)
    assert own == pytest.approx(self_score, rel=1e-12)
    percents = searcher.percentages(searcher.prepare("apple banana"), name)
    assert percents == pytest.approx([100 * d1 / self_score, 100 * d2 / self_score, 0.0], rel=1e-12)


def test_identity5_percentages_by_hand(tiny_index):
    # d1: L1 · (3/1 / (1+|2−1|) + (3/2) / (1+0)) = 0.5906 · 3 = 1.7718; S(q,q) = 3 + 1.5 = 4.5
    result = Searcher(tiny_index).search("apple banana", "identity5", top=5)
    assert [(m.doc_id, round(m.percent, 2)) for m in result.matches] == [("d1.txt", 39.37), ("d2.txt", 33.33)]
    assert result.self_score == pytest.approx(4.5)


def test_query_words_absent_from_collection_lengthen_f_q(tiny_index):
    # "zebra" is in no document: it adds to f_q (3) but not to S(q,q) = 4.5
    searcher = Searcher(tiny_index)
    scores, own = searcher.scores(searcher.prepare("apple banana zebra"), "identity5")
    assert own == pytest.approx(4.5 * 1 / (1 + log(1)))
    # d1 now has f_d = f_q = 3: L = 1, score 3; d2: L = 1/(1 + ln 2), score 1.5 · L
    assert scores == pytest.approx([3.0, 1.5 / (1 + log(2)), 0.0])


def test_no_shared_term_gives_zero_self_score_and_a_note(tiny_index):
    result = Searcher(tiny_index).search("zebra quagga", "identity5")
    assert result.self_score == 0 and result.matches == []
    assert "no term of the query" in (result.note or "")


@settings(max_examples=30, deadline=None)
@given(query=st.lists(st.sampled_from(["apple", "banana", "cherry", "date", "zebra"]), min_size=1, max_size=8))
def test_an_ideal_measure_never_passes_100_percent(tiny_index, query):
    searcher = Searcher(tiny_index)
    prepared = searcher.prepare(" ".join(query))
    for name, measure in MEASURES.items():
        if measure.ideal:
            assert searcher.percentages(prepared, name).max(initial=0.0) <= 100.0 * (1 + 1e-12), name


def test_a_measure_flagged_not_ideal_does_pass_100_percent(tiny_index):
    # "cherry": d3 holds it twice; inner counts 1 + ln 2 against the query's 1
    searcher = Searcher(tiny_index)
    prepared = searcher.prepare("cherry")
    assert {name for name, m in MEASURES.items() if not m.ideal} == {"inner", "normalized"}
    assert searcher.percentages(prepared, "inner").max() == pytest.approx(100 * (1 + log(2)))
    # normalized: a query whose other words are absent (f_q = 4) against d3 (f_d = 3):
    # (1 + ln 2) · w / sqrt(3) over w / sqrt(4)
    longer = searcher.prepare("cherry zebra zebra zebra")
    assert searcher.percentages(longer, "normalized").max() == pytest.approx(100 * (1 + log(2)) * 2 / np.sqrt(3))


def test_descriptions_are_derived_from_the_formulas():
    assert MEASURES["identity5"].description == "L(q,d) · Σ (N/f_t) / (1 + |f_dt − f_qt|)"
    assert MEASURES["inner"].description == "Σ (1 + ln f_dt) · w_t"
    assert MEASURES["cosine"].description == "1/W_d · Σ x_qt · x_dt, x_yt = (1 + ln f_yt) · w_t"


def test_unknown_measure_lists_the_known_ones():
    with pytest.raises(UnknownNameError, match=r"measure must be one of \['cosine'.*got 'bm25'"):
        get_measure("bm25")


def test_identity3_term_part_never_exceeds_twice_f_qt_weight():
    # SPEC §3: (f_dt + f_qt)/(1 + |f_dt − f_qt|) ≤ 2·f_qt, which makes identity3 ideal
    f_dt, f_qt = np.meshgrid(np.arange(1, 60.0), np.arange(1, 60.0))
    term = get_measure("identity3").term(f_dt.ravel(), f_qt.ravel(), np.full(f_dt.size, 1.0), np.e - 1)
    assert np.all(term <= 2 * f_qt.ravel() + 1e-12)
