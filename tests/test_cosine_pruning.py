"""Cosine top-k (coderiv.ranking.topk) returns the full pass's documents and scores bit
for bit, whichever way it goes: pruned then rescored in the full pass's order, or the full pass
in position order through the compiled or the numpy loops."""

from __future__ import annotations

from collections.abc import Iterator
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index, Searcher
from coderiv.ranking import compiled_probes, kernel, topk
from coderiv.ranking.kernel import PreparedQuery, all_scores, top_k
from coderiv.ranking.measures import get_measure
from tests.support.files import built_index as built

COSINE = get_measure("cosine")
PROPERTY = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: a Zipf-like vocabulary; "kiwi" up to 300 times in a document (counts past 255 escape)
VOCABULARY = [f"w{i}" for i in range(80)]
document = st.tuples(
    st.lists(st.integers(0, 79).map(lambda i: VOCABULARY[(i * i) // 80]), min_size=1, max_size=60),
    st.sampled_from([0, 0, 0, 1, 256, 300]),
).map(lambda words_kiwis: " ".join(words_kiwis[0] + ["kiwi"] * words_kiwis[1]))


def exhaustive(index: Index, prepared: PreparedQuery, k: int | None, floor: float) -> tuple[list[int], list[float]]:
    scores = all_scores(index, prepared, COSINE)
    scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked.tolist(), scores[ranked].tolist()


def ways(index: Index, prepared: PreparedQuery, kind: type[kernel.NumpyPasses], k: int | None,
         floor: float) -> Iterator[tuple[str, tuple[list[int], list[float]], int]]:
    """(way, answer, probe calls) of the cosine top k forced each way through ``kind``'s passes."""
    probes = 0
    original = kind.probe

    def counted(self: kernel.NumpyPasses, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
        nonlocal probes
        probes += 1
        return original(self, docs, terms)

    for way, rescore_vs_scan in (("pruned, rescored", 0.0), ("full pass", 1e9)):
        probes = 0
        with mock.patch.object(topk, "_passes", kind), mock.patch.object(kind, "probe", counted), \
                mock.patch.object(topk, "FIRST_READ", 3), mock.patch.object(topk, "RESCORE_VS_SCAN", rescore_vs_scan), \
                mock.patch.object(kernel, "_PROBE_VS_SCAN", 0.01), mock.patch.object(kernel, "_COMPILED_PROBE_VS_SCAN", 0.01):
            ranked, scores = topk.pruned_top_k(index, prepared, COSINE, k, floor)
        yield way, (ranked.tolist(), scores.tolist()), probes


def check(texts: list[str], query: str, k: int | None, percent: float, kind: type[kernel.NumpyPasses]) -> None:
    with built(texts) as index:
        assert index.cosine_classes is not None
        prepared = Searcher(index).prepare(query)
        own = Searcher(index).scores(prepared, "cosine")[1]
        floor = own * percent / 100
        expected = exhaustive(index, prepared, k, floor)
        for way, got, probes in ways(index, prepared, kind, k, floor):
            assert got == expected, f"{kind.__name__}, {way}"  # ids, and scores compared as floats: every bit
            if way == "full pass" and k is not None:
                assert probes == 0  # one read of every term, in position order (with a floor and
                # no k, pruning runs first: how many documents it keeps decides)


@PROPERTY
@given(texts=st.lists(document, min_size=4, max_size=30), query=document, k=st.sampled_from([1, 3, 10, None]),
       percent=st.sampled_from([0.0, 5.0, 40.0]))
def test_numpy_passes_give_the_full_pass_bits(texts: list[str], query: str, k: int | None, percent: float) -> None:
    check(texts, query, k, percent, kernel.NumpyPasses)


@pytest.mark.compiled
@PROPERTY
@given(texts=st.lists(document, min_size=4, max_size=30), query=document, k=st.sampled_from([1, 3, 10, None]),
       percent=st.sampled_from([0.0, 5.0, 40.0]))
def test_compiled_passes_give_the_full_pass_bits(texts: list[str], query: str, k: int | None, percent: float) -> None:
    if not (compiled_probes.available() and compiled_probes.load()):
        pytest.skip("numba (coderiv[fast]) is not installed")
    check(texts, query, k, percent, kernel.CompiledPasses)


def test_the_pruned_way_rescores_only_the_documents_near_the_top() -> None:
    """60 documents, top 2: the pruned way probes the two best (and those within 1e-9 of the
    second) in every query term; the rest are never rescored."""
    texts = [" ".join(VOCABULARY[(i * j) % 37] for j in range(3 + i % 17)) for i in range(60)]
    with built(texts) as index:
        prepared = Searcher(index).prepare(texts[7])
        calls: list[tuple[int, int]] = []
        original = kernel.NumpyPasses.probe

        def logged(self: kernel.NumpyPasses, docs: np.ndarray, terms: np.ndarray) -> np.ndarray:
            calls.append((len(docs), len(terms)))
            return original(self, docs, terms)

        with mock.patch.object(topk, "_passes", kernel.NumpyPasses), mock.patch.object(kernel.NumpyPasses, "probe", logged), \
                mock.patch.object(topk, "RESCORE_VS_SCAN", 0.0):
            ranked, scores = topk.pruned_top_k(index, prepared, COSINE, 2)
        assert (ranked.tolist(), scores.tolist()) == exhaustive(index, prepared, 2, 0.0)
        n_terms = len(prepared.positions)
        assert calls[-1][1] == n_terms and 2 <= calls[-1][0] < 60  # the last probe: the rescoring


def test_a_thesis_length_query_on_a_small_collection_takes_the_full_pass() -> None:
    """k · terms · RESCORE_VS_SCAN ≥ half the query's postings: one read of every term, no probe."""
    texts = [" ".join(VOCABULARY[(i + j) % 80] for j in range(40)) for i in range(30)]
    with built(texts) as index:
        prepared = Searcher(index).prepare(" ".join(VOCABULARY))
        postings = int(prepared.f_t.sum())
        assert 10 * len(prepared.positions) * topk.RESCORE_VS_SCAN >= kernel._SCAN_SHARE * postings
        with mock.patch.object(topk, "_passes", kernel.NumpyPasses), \
                mock.patch.object(kernel.NumpyPasses, "probe", side_effect=AssertionError("probed")):
            ranked, scores = topk.pruned_top_k(index, prepared, COSINE, 10)
        assert (ranked.tolist(), scores.tolist()) == exhaustive(index, prepared, 10, 0.0)


def test_scans_at_once_when_rescoring_would_cost_a_share_of_a_read() -> None:
    """k · terms · RESCORE_VS_SCAN (128) against a share of the query's postings: ½ for numpy's
    passes, 1/16 for the compiled ones (whose read is ~16 times cheaper)."""
    assert topk.RESCORE_VS_SCAN == 128.0
    assert (kernel._SCAN_SHARE, kernel._COMPILED_SCAN_SHARE) == (0.5, 1 / 16)
    assert topk.scans_at_once(2, 0.0, np.array([3000, 5192]), 1 / 16)  # 2·2·128 = 512 ≥ 8192/16
    assert not topk.scans_at_once(2, 0.0, np.array([3000, 5192]), 0.5)  # 512 < 4096
    assert not topk.scans_at_once(1, 0.0, np.array([2049]), 1 / 16)  # 128 < 2049/16
    assert topk.scans_at_once(1, 0.0, np.array([2048]), 1 / 16)  # 128 ≥ 2048/16
    assert topk.scans_at_once(1, 0.0, np.array([256]), 0.5)  # 128 ≥ 256/2
    assert topk.scans_at_once(None, 0.0, np.array([10**9]), 1 / 16)  # every document wanted
    assert not topk.scans_at_once(None, 0.3, np.array([1]), 1 / 16)  # a floor prunes


def test_a_query_that_scans_at_once_computes_no_bounds() -> None:
    """The full pass at once needs neither the per-term bounds nor a probe."""
    texts = [" ".join(VOCABULARY[(i + j) % 80] for j in range(40)) for i in range(30)]
    with built(texts) as index:
        prepared = Searcher(index).prepare(" ".join(VOCABULARY))
        for kind in passes_kinds():
            with mock.patch.object(topk, "_passes", kind), mock.patch.object(kind, "probe", side_effect=AssertionError("probed")), \
                    mock.patch.object(type(COSINE), "final_bound", side_effect=AssertionError("bounded")):
                ranked, scores = topk.pruned_top_k(index, prepared, COSINE, 10)
            assert (ranked.tolist(), scores.tolist()) == exhaustive(index, prepared, 10, 0.0), kind.__name__


def passes_kinds() -> list[type[kernel.NumpyPasses]]:
    """The numpy passes, and the compiled ones where numba is installed."""
    kinds: list[type[kernel.NumpyPasses]] = [kernel.NumpyPasses]
    if compiled_probes.available() and compiled_probes.load():
        kinds.append(kernel.CompiledPasses)
    return kinds


@PROPERTY
@given(texts=st.lists(document, min_size=2, max_size=20), query=document, picks=st.data())
def test_sums_are_a_read_into_zeros_bit_for_bit(texts: list[str], query: str, picks: st.DataObject) -> None:
    """Passes.sums(terms) (the full pass's sums) equals reading the same terms into zeros, for
    any subset of the query's terms, through numpy's passes and the compiled ones alike."""
    with built(texts) as index:
        prepared = Searcher(index).prepare(query)
        n_terms = len(prepared.positions)
        if not n_terms:
            return
        terms = np.array(sorted(picks.draw(st.sets(st.integers(0, n_terms - 1), min_size=1))), np.int64)
        answers = []
        for kind in passes_kinds():
            passes = kind(index, prepared, COSINE)
            read = np.zeros(index.n_docs)
            passes.read(terms, read)
            sums = passes.sums(terms)
            assert sums.tobytes() == read.tobytes(), kind.__name__
            answers.append(sums.tobytes())
        assert len(set(answers)) == 1  # the compiled loops' bits are numpy's
