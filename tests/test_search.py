"""Ranking laws (property tests) and exact top-k pruning against the full pass."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index, Searcher
from coderiv.ranking.kernel import top_k
from coderiv.ranking.measures import MEASURES
from tests.support.files import write_docs
from tests.support.strategies import WORDS, collection, document

PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_FOLDERS: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _remove_example_folders():
    yield
    for folder in _FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)


def build(texts: list[str], names: list[str] | None = None) -> Index:
    """An index of the texts, in a fresh temporary folder (hypothesis runs many examples)."""
    root = Path(tempfile.mkdtemp(prefix="coderiv-prop-"))
    _FOLDERS.append(root)
    names = names or [f"d{i:02d}.txt" for i in range(len(texts))]
    write_docs(root / "c", dict(zip(names, texts)))
    Index.update_from(root / "c", root / "i", workers=1)
    return Index.open(root / "i")


@PROPERTY
@given(texts=collection, pick=st.integers(min_value=0))
def test_a_copy_of_the_query_scores_exactly_100_percent(texts, pick):
    index = build(texts)
    query = texts[pick % len(texts)]
    searcher = Searcher(index)
    prepared = searcher.prepare(query)
    copy = index.doc_numbers[f"d{pick % len(texts):02d}.txt"]
    for name in MEASURES:
        percents = searcher.percentages(prepared, name)
        if searcher.scores(prepared, name)[1] == 0:  # identity4: every query term in every doc
            assert name == "identity4" and not percents.any()
        else:
            assert percents[copy] == pytest.approx(100.0, rel=1e-12), name


@PROPERTY
@given(texts=collection, query=document)
def test_no_document_exceeds_100_percent_for_ideal_measures(texts, query):
    index = build(texts)
    searcher = Searcher(index)
    prepared = searcher.prepare(query)
    for name, measure in MEASURES.items():
        if measure.ideal:
            assert searcher.percentages(prepared, name).max(initial=0) <= 100.0 + 1e-9, name


@PROPERTY
@given(texts=collection, query=document, seed=st.integers(0, 10_000))
def test_scores_do_not_depend_on_the_order_of_the_collection(texts, query, seed):
    names = [f"d{i:02d}.txt" for i in range(len(texts))]
    order = np.random.default_rng(seed).permutation(len(texts))
    shuffled_names = [f"x{rank:02d}-{names[i]}" for rank, i in enumerate(order)]
    a = build(texts)
    b = build([texts[i] for i in order], shuffled_names)
    for name in MEASURES:
        pa = Searcher(a).percentages(Searcher(a).prepare(query), name)
        pb = Searcher(b).percentages(Searcher(b).prepare(query), name)
        by_original = {shuffled_names[r][4:]: pb[b.doc_numbers[shuffled_names[r]]] for r in range(len(texts))}
        assert [by_original[n] for n in names] == pytest.approx(list(pa), rel=1e-12), name


@PROPERTY
@given(texts=st.lists(document, min_size=5, max_size=30), query=document, k=st.integers(1, 8))
def test_pruned_top_k_equals_the_full_pass(texts, query, k):
    index = build(texts)
    searcher = Searcher(index)
    prepared = searcher.prepare(query)
    for name in MEASURES:
        pruned = searcher.rank(prepared, name, top=k, prune=True).matches
        full = searcher.rank(prepared, name, top=k, prune=False).matches
        assert [m.doc_id for m in pruned] == [m.doc_id for m in full], name
        assert [m.score for m in pruned] == pytest.approx([m.score for m in full], rel=1e-9), name


@PROPERTY
@given(texts=st.lists(document, min_size=5, max_size=30), query=document, floor=st.sampled_from([0.5, 5.0, 20.0, 60.0]))
def test_min_percent_keeps_exactly_the_documents_at_or_above_it(texts, query, floor):
    index = build(texts)
    searcher = Searcher(index)
    prepared = searcher.prepare(query)
    for name in MEASURES:
        percents = searcher.percentages(prepared, name)
        expected = sorted((-round(p, 9), d) for d, p in enumerate(percents) if p > 0 and p >= floor * (1 - 1e-12))
        for top in (None, 3):
            got = searcher.rank(prepared, name, top=top, min_percent=floor).matches
            want = expected if top is None else expected[:top]
            assert [m.doc_id for m in got] == [index.doc_ids[d] for _, d in want], name


def test_pruning_on_a_larger_collection_with_duplicates_and_ties():
    rng = np.random.default_rng(7)
    base = [" ".join(rng.choice(WORDS + [f"rare{i}" for i in range(40)], size=60)) for _ in range(60)]
    texts = base + base[:10]  # exact duplicates tie and must be ordered by id
    index = build(texts)
    searcher = Searcher(index)
    for query in base[:10]:
        prepared = searcher.prepare(query)
        for name in MEASURES:
            for k in (1, 2, 5, 20):
                pruned = searcher.rank(prepared, name, top=k, prune=True).matches
                full = searcher.rank(prepared, name, top=k, prune=False).matches
                assert [m.doc_id for m in pruned] == [m.doc_id for m in full]


def test_top_k_breaks_ties_by_document_number():
    scores = np.array([0.0, 2.0, 5.0, 2.0, 5.0, 1.0])
    assert list(top_k(scores, 3)) == [2, 4, 1]
    assert list(top_k(scores, None)) == [2, 4, 1, 3, 5]


def test_query_by_indexed_document_equals_query_by_its_text(tmp_path):
    texts = {"a.txt": "river bank river water flow", "b.txt": "river water mill", "c.txt": "bank loan interest"}
    write_docs(tmp_path / "c", texts)
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    searcher = Searcher(Index.open(tmp_path / "i"))
    for name in MEASURES:
        by_doc = searcher.rank(searcher.prepare_doc("a.txt"), name, top=None).matches
        by_text = searcher.rank(searcher.prepare(texts["a.txt"]), name, top=None).matches
        assert by_doc == by_text


@PROPERTY
@given(
    segments=st.lists(st.lists(st.integers(0, 50), max_size=30, unique=True).map(sorted), min_size=1, max_size=6),
    targets=st.lists(st.integers(0, 50), min_size=1, max_size=20),
)
def test_vectorized_segment_search_matches_a_plain_search(segments, targets):
    from coderiv.index.format.split_numbers import search_segments as _search_segments

    values = np.array([v for seg in segments for v in seg], np.int64)
    bounds = np.cumsum([0] + [len(seg) for seg in segments])
    pairs = [(s, t) for s in range(len(segments)) for t in targets]
    got = _search_segments(
        values,
        np.array([bounds[s] for s, _ in pairs]),
        np.array([bounds[s + 1] for s, _ in pairs]),
        np.array([t for _, t in pairs]),
    )
    expected = [bounds[s] + segments[s].index(t) if t in segments[s] else -1 for s, t in pairs]
    assert got.tolist() == expected


def test_percentages_by_document_carry_their_ids(tmp_path: Path) -> None:
    # identity5, N = 3 (apple f_t = 1, banana and cherry 2): d1 as the query has self-score
    # 3 + 1.5 = 4.5; d2 shares banana, f_d = 2 against f_q = 3: 1/(1 + ln 2) · 1.5 / 4.5 = 19.69%
    write_docs(tmp_path / "c", {"d1.txt": "apple banana apple", "d2.txt": "banana cherry", "d3.txt": "cherry cherry date"})
    Index.update_from(tmp_path / "c", tmp_path / "i", workers=1)
    searcher = Searcher(Index.open(tmp_path / "i"))
    every = searcher.by_document(searcher.prepare_doc("d1.txt"))
    assert list(every.doc_ids) == ["d1.txt", "d2.txt", "d3.txt"] and len(every) == 3
    expected = 100 / (1 + np.log(2)) / 3
    assert every.by_id() == {"d1.txt": pytest.approx(100.0), "d2.txt": pytest.approx(expected), "d3.txt": 0.0}
    assert every.ranked() == [("d1.txt", pytest.approx(100.0)), ("d2.txt", pytest.approx(expected))]
    assert every.ranked(min_percent=50) == [("d1.txt", pytest.approx(100.0))]
