"""Every 1-to-n method behind one protocol, chosen by name from a registry."""

from __future__ import annotations

import pytest

from coderiv import Index, Searcher, StoreSpec
from coderiv.errors import CoderivError, UnknownNameError
from coderiv.overlap.verify import VerifiedSearcher
from coderiv.ranking.fingerprint_search import FingerprintSearcher
from coderiv.ranking.passage_windows import PassageSearcher
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.search import MeasureSearcher
from coderiv.ranking.searchers import QueryOptions, make_searcher, rank_queries
from tests.support.files import write_docs

DOCS = {
    "a.txt": "apple banana cherry date elder fig grape",
    "b.txt": "apple banana cherry date elder fig grape honeydew",
    "c.txt": "kiwi lemon mango nectarine",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    root = tmp_path_factory.mktemp("searchers")
    write_docs(root / "c", DOCS)
    stores = [StoreSpec.create("terms"), StoreSpec.create("fingerprint", strategy="full", g=1)]
    Index.update_from(root / "c", root / "i", stores=stores, workers=1)
    return Index.open(root / "i")


def test_every_searcher_implements_the_protocol(index: Index) -> None:
    searchers = [
        MeasureSearcher(index, "cosine"), FingerprintSearcher(index), PassageSearcher(index),
        VerifiedSearcher(index, MeasureSearcher(index)),
    ]
    assert all(isinstance(s, DocumentSearcher) for s in searchers)
    assert [(s.method, s.unit) for s in searchers] == [
        ("cosine", "terms"), ("fingerprint:g=1,strategy=full", "minutiae"), ("passages", "passages"),
        ("verified:identity5,top=20", "candidates"),
    ]


def test_a_measure_searcher_ranks_as_the_searcher_does(index: Index) -> None:
    bound = MeasureSearcher(index, "identity5")
    got = bound.rank(bound.prepare(DOCS["a.txt"]), top=3)
    want = Searcher(index).search(DOCS["a.txt"], "identity5", top=3)
    assert [(m.doc_id, m.percent) for m in got.matches] == [(m.doc_id, m.percent) for m in want.matches]
    assert got.matches[0].doc_id == "a.txt" and got.matches[0].percent == pytest.approx(100.0)


def test_fingerprint_percentages_count_shared_minutiae(index: Index) -> None:
    # g = 1: every word is a minutia; a.txt's 7 words are all in b.txt, none in c.txt
    searcher = make_searcher(index, "fingerprint")
    assert searcher.percentages(searcher.prepare_doc("a.txt")).tolist() == pytest.approx([100.0, 100.0, 0.0])
    # b.txt has 8 minutiae, 7 of them in a.txt
    assert searcher.percentages(searcher.prepare_doc("b.txt")).tolist() == pytest.approx([87.5, 100.0, 0.0])


def test_choosing_a_searcher_refuses_bad_options(index: Index) -> None:
    with pytest.raises(UnknownNameError, match=r"query method must be one of \['containment', 'fingerprint', 'ranking'.*got 'bm25'"):
        make_searcher(index, "bm25")
    with pytest.raises(CoderivError, match="--strategy and --full-query apply to --method fingerprint"):
        make_searcher(index, "ranking", QueryOptions(full_query=True))


def test_rank_queries_runs_texts_then_indexed_documents(index: Index) -> None:
    searcher = make_searcher(index)
    results = rank_queries(index, searcher, [("q", DOCS["c.txt"])], ["a.txt"], top=1)
    assert [(r.query, r.matches[0].doc_id) for r in results] == [("q", "c.txt"), ("a.txt", "a.txt")]
    with pytest.raises(CoderivError, match=r"^empty has no words after analysis"):
        rank_queries(index, searcher, [("empty", "the of and")], [])
    with pytest.raises(CoderivError, match=r"no document 'zzz.txt' in the index"):
        rank_queries(index, searcher, [], ["zzz.txt"])
