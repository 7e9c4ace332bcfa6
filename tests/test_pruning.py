"""Exact top-k pruning (coderiv.ranking.topk) answers the full pass's top k with either
implementation of its inner loops — numpy, as without ``coderiv[fast]``, and the compiled loops
of coderiv.ranking.compiled_probes — for every measure, through both ways of finishing the
surviving candidates (probing them, or streaming the remaining postings); and both give the
very same scores, bit for bit."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index, Searcher
from coderiv.ranking import compiled_probes, kernel, topk
from coderiv.ranking.kernel import all_scores, top_k
from coderiv.ranking.measures import MEASURES, get_measure
from tests.support.files import built_index as built
from tests.support.strategies import document

PROPERTY = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def kinds() -> list[type[kernel.NumpyPasses]]:
    found: list[type[kernel.NumpyPasses]] = [kernel.NumpyPasses]
    if compiled_probes.available() and compiled_probes.load():
        found.append(kernel.CompiledPasses)
    return found


def check(index: Index, query: str, k: int | None, percent: float) -> None:
    prepared = Searcher(index).prepare(query)
    for name in MEASURES.names():
        measure = get_measure(name)
        scores = all_scores(index, prepared, measure)
        own = float(scores.max()) if len(scores) else 0.0
        floor = own * percent / 100
        scores[scores < floor] = 0.0
        expected = top_k(scores, k)
        answers = set()
        for kind in kinds():
            for search_vs_scan in (0.0, 1e9):  # always stream / always probe the candidates
                with mock.patch.object(topk, "_passes", kind), mock.patch.object(topk, "_SEARCH_VS_SCAN", search_vs_scan), \
                        mock.patch.object(topk, "FIRST_READ", 3), mock.patch.object(kernel, "_PROBE_VS_SCAN", 0.01), \
                        mock.patch.object(kernel, "_COMPILED_PROBE_VS_SCAN", 0.01), \
                        mock.patch.object(topk, "RESCORE_VS_SCAN", 0.0):  # cosine: prune, then rescore
                    ranked, got = topk.pruned_top_k(index, prepared, measure, k, floor)
                label = f"{name} {kind.__name__} {search_vs_scan}"
                assert ranked.tolist() == expected.tolist(), label
                np.testing.assert_allclose(got, scores[expected], rtol=1e-12, err_msg=label)
                answers.add((kind is kernel.CompiledPasses, search_vs_scan, tuple(got.tolist())))
        # the compiled loops add in numpy's order: the very same bits, loaded or not
        for search_vs_scan in (0.0, 1e9):
            assert len({bits for _, way, bits in answers if way == search_vs_scan}) == 1, name


@PROPERTY
@given(texts=st.lists(document, min_size=5, max_size=25), query=document, k=st.sampled_from([1, 3, 8, None]),
       percent=st.sampled_from([0.0, 20.0, 60.0]))
def test_both_loops_give_the_full_pass_top_k_for_every_measure(texts: list[str], query: str, k: int | None, percent: float) -> None:
    if k is None and percent == 0.0:
        percent = 5.0
    with built(texts) as index:
        check(index, query, k, percent)


def test_a_larger_collection_with_duplicates() -> None:
    """120 documents of 40 words among 60 (Zipf-like), 10 duplicated: the rounds read part of
    the postings, then probe or stream the rest."""
    rng = np.random.default_rng(11)
    vocabulary = [f"w{i}" for i in range(60)]
    weights = 1 / np.arange(1, 61)
    base = [" ".join(rng.choice(vocabulary, size=40, p=weights / weights.sum())) for _ in range(110)]
    with built(base + base[:10]) as index:
        for query in base[:6]:
            for k in (1, 5, 20):
                check(index, query, k, 0.0)
        check(index, base[7], None, 30.0)


def test_pruned_queries_count_their_numpy_time_towards_loading() -> None:
    """Without the loops, each pruned query adds its CPU time to the rent-or-buy account."""
    with built(["a b c", "a b", "b c d", "a d e e"]) as index, \
            mock.patch.object(compiled_probes, "_KERNELS", compiled_probes._KERNELS.fresh()), \
            mock.patch.object(compiled_probes, "_SPENT", 0.0), \
            mock.patch.object(compiled_probes, "available", lambda: False):
        searcher = Searcher(index)
        searcher.rank(searcher.prepare("a b"), "identity5", top=2)
        first = compiled_probes._SPENT
        assert first > 0
        searcher.rank(searcher.prepare("a b c"), "identity5", top=2)
        assert compiled_probes._SPENT > first
        assert not compiled_probes.loaded()


