"""coderiv's measures as whoosh WeightingModels give the core engine's scores."""

from __future__ import annotations

import math

import pytest
from whoosh import index as whoosh_index

from coderiv import Index, Searcher
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.whoosh_models import coderiv_schema, document_query, weighting_for
from coderiv.text.analysis import Analyzer
from tests.support.files import write_docs

TEXTS = {
    "a.txt": "river bank river water flow river delta",
    "b.txt": "river water mill wheel water",
    "c.txt": "bank loan interest rate bank",
    "d.txt": "delta flow water river bank mill",
}
QUERY = "river water river bank delta unknownword"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("whoosh")
    write_docs(root / "c", TEXTS)
    Index.update_from(root / "c", root / "i", workers=1)
    (root / "w").mkdir()
    ix = whoosh_index.create_in(str(root / "w"), coderiv_schema())
    writer = ix.writer()
    analyzer = Analyzer()
    for doc_id, text in TEXTS.items():
        writer.add_document(id=doc_id, content=text, length=len(analyzer.terms(text)))
    writer.commit()
    return Index.open(root / "i"), ix


@pytest.mark.parametrize("name", sorted(MEASURES))
def test_whoosh_scores_equal_core_scores(both, name):
    core, ix = both
    searcher = Searcher(core)
    scores, own = searcher.scores(searcher.prepare(QUERY), name)
    expected = {doc_id: scores[core.doc_numbers[doc_id]] for doc_id in TEXTS if scores[core.doc_numbers[doc_id]] > 0}
    weighting = weighting_for(name, QUERY)
    with ix.searcher(weighting=weighting) as whoosh_searcher:
        hits = whoosh_searcher.search(document_query(QUERY), limit=None)
        got = {hit["id"]: hit.score for hit in hits}
        assert weighting.self_score(whoosh_searcher) == pytest.approx(own, rel=1e-12)
    assert got.keys() == expected.keys()
    for doc_id, score in expected.items():
        assert got[doc_id] == pytest.approx(score, rel=1e-9), doc_id


def test_query_term_frequency_reaches_the_scorer(both):
    # "river" occurs twice in the query: identity5 must score with f_qt = 2 (whoosh's Term passes 1).
    # N = 4, f_t(river) = 3 (a, b, d). a.txt has river 3 times and 7 terms; f_q = 2, so
    # S(q, a) = L · (N/f_t) / (1 + |3 − 2|) = 1/(1 + ln(1 + 5)) · (4/3) / 2.
    _, ix = both
    weighting = weighting_for("identity5", "river river")
    with ix.searcher(weighting=weighting) as whoosh_searcher:
        hits = {hit["id"]: hit.score for hit in whoosh_searcher.search(document_query("river river"), limit=None)}
        own = weighting.self_score(whoosh_searcher)
    assert hits["a.txt"] == pytest.approx((4 / 3) / 2 / (1 + math.log(6)), rel=1e-12)
    # b.txt: river once in 5 terms: (4/3) / (1 + 1) · 1/(1 + ln 4); with f_qt = 1 it would be (4/3) · 1/(1 + ln 4)
    assert hits["b.txt"] == pytest.approx((4 / 3) / 2 / (1 + math.log(4)), rel=1e-12)
    # the self-score: d := q, f_dt = f_qt = 2, L = 1
    assert own == pytest.approx(4 / 3, rel=1e-12)
