"""coderiv's measures as whoosh WeightingModels give the core engine's scores."""

from __future__ import annotations

import pytest
from whoosh import index as whoosh_index

from coderiv import Index, Searcher
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.whoosh_models import coderiv_schema, document_query, weighting_for
from coderiv.text.analysis import Analyzer
from conftest import write_docs

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
    # "river" occurs twice in the query: identity5 must see f_qt = 2 (whoosh's Term passes 1)
    _, ix = both
    weighting = weighting_for("identity5", "river river")
    assert weighting.query_counts == {"river": 2} and weighting.query_length == 2
