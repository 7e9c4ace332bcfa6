"""Cosine top-k with per-document norm classes (coderiv.index.cosine_bounds and the pruning that
uses them): the stored table is a true upper bound, and pruned rankings equal the full pass, on
one index, after updates, on shards, with and without --min-percent floors."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv import Index, Searcher
from coderiv.errors import CorruptIndexError
from coderiv.index import cosine_bounds
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.cosine_bounds import N_CLASSES, NORMS_FILE, class_limits, class_norms, class_of
from coderiv.index.shards import ShardedIndex
from coderiv.ranking import compiled_probes, kernel, topk
from coderiv.ranking.kernel import PreparedQuery, all_scores, top_k
from coderiv.ranking.measures import get_measure
from coderiv.ranking.sharded import ShardedMeasureSearcher
from coderiv.weights import cosine_weight
from tests.support.files import write_docs

PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COSINE = get_measure("cosine")
#: a Zipf-like vocabulary: a few words in most documents, many in few
VOCABULARY = [f"w{i}" for i in range(60)]
words = st.lists(st.integers(0, 59).map(lambda i: VOCABULARY[min(i, (i * i) // 40)]), min_size=1, max_size=50)
texts_strategy = st.lists(words.map(" ".join), min_size=3, max_size=25)


@contextmanager
def small_rounds() -> Iterator[None]:
    """Read a few postings a round, so that tiny collections go through every pruning step."""
    with mock.patch.object(topk, "FIRST_READ", 3), mock.patch.object(kernel, "_PROBE_VS_SCAN", 0.01), \
            mock.patch.object(kernel, "_COMPILED_PROBE_VS_SCAN", 0.01), mock.patch.object(topk, "RESCORE_VS_SCAN", 0.0):
        yield


def passes_kinds() -> list[type[kernel.NumpyPasses]]:
    """The numpy passes, and the compiled ones where numba is installed."""
    kinds: list[type[kernel.NumpyPasses]] = [kernel.NumpyPasses]
    if compiled_probes.available() and compiled_probes.load():
        kinds.append(kernel.CompiledPasses)
    return kinds


@contextmanager
def forced(kind: type[kernel.NumpyPasses]) -> Iterator[None]:
    """Take these passes whatever the process has loaded (numpy: as without numba)."""
    with mock.patch.object(topk, "_passes", kind):
        yield


@contextmanager
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="coderiv-cos-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def full_top(index: Index, prepared: PreparedQuery, k: int | None, floor: float) -> tuple[np.ndarray, np.ndarray]:
    scores = all_scores(index, prepared, COSINE)
    scores[scores < floor] = 0.0
    ranked = top_k(scores, k)
    return ranked, scores[ranked]


def assert_pruned_equals_full(index: Index, query: str, k: int | None, floor: float) -> None:
    """Pruned (rescored, and through the full pass in position order) top k: the full pass's
    documents and scores, bit for bit, with the numpy and the compiled passes."""
    prepared = Searcher(index).prepare(query)
    expected = full_top(index, prepared, k, floor)
    for kind in passes_kinds():
        for rescore_vs_scan in (0.0, 1e9):  # always rescore the near-top documents; always the full pass
            with small_rounds(), forced(kind), mock.patch.object(topk, "RESCORE_VS_SCAN", rescore_vs_scan):
                got = topk.pruned_top_k(index, prepared, COSINE, k, floor)
            assert got[0].tolist() == expected[0].tolist(), kind.__name__
            assert got[1].tolist() == expected[1].tolist(), kind.__name__  # floats compared exactly


def share_table(index: Index) -> np.ndarray:
    """‖d_c‖ / W_d recomputed the slow way, from every posting (class of each term by its f_t)."""
    store = index.terms
    f_t = np.diff(np.asarray(store.ptr))
    docs = np.asarray(store.docs[:]).astype(np.int64)
    x = cosine_weight(np.asarray(store.vals, np.float64), np.repeat(f_t, f_t).astype(np.float64), index.n_docs)
    row = np.repeat(class_of(class_limits(index.n_docs), f_t), f_t)
    shares = np.zeros((N_CLASSES, index.n_docs))
    for c in range(N_CLASSES):
        shares[c] = np.sqrt(np.bincount(docs[row == c], weights=x[row == c] ** 2, minlength=index.n_docs))
    return shares / np.asarray(index.doc_norms)


def test_a_hand_computed_table() -> None:
    """4 documents: kiwi in all (row 7, the commonest: f_t = 4 > N/2), mango in 2 (row 6: N/4 < 2 ≤ N/2),
    lemon in 1 (row 5). d0 = "kiwi kiwi mango": x_a = (1 + ln 2)·ln 2, x_b = ln 3, so its row-7 share is
    x_a / sqrt(x_a² + x_b²) and its row-6 share x_b / sqrt(x_a² + x_b²)."""
    with folder() as root:
        write_docs(root / "c", {"d0.txt": "kiwi kiwi mango", "d1.txt": "kiwi mango", "d2.txt": "kiwi lemon", "d3.txt": "kiwi"})
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        assert index.cosine_classes is not None
        table, limits = index.cosine_classes
        np.testing.assert_allclose(limits, 4 / 2.0 ** np.arange(8, 0, -1))
        x_a, x_b = (1 + np.log(2)) * np.log(2), np.log(3)
        norm = np.hypot(x_a, x_b)
        assert table[7, 0] == np.ceil(255 * x_a / norm) and table[6, 0] == np.ceil(255 * x_b / norm)
        assert table[7, 3] == 255 and not table[:7, 3].any()  # d3 is all kiwi: share 1
        x_c = np.log(5)
        assert table[5, 2] == np.ceil(255 * x_c / np.hypot(np.log(2), x_c))
        assert not table[:5].any()


@PROPERTY
@given(texts=texts_strategy)
def test_the_stored_table_bounds_every_share(texts: list[str]) -> None:
    with folder() as root:
        write_docs(root / "c", {f"d{i:02d}.txt": t for i, t in enumerate(texts)})
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        assert index.cosine_classes is not None
        table = index.cosine_classes[0].astype(np.float64)
        shares = share_table(index)
        assert np.all(table / 255 >= shares)
        assert np.all(table / 255 < shares + 1 / 255 + 1e-9)  # and it is the nearest such byte


@PROPERTY
@given(texts=texts_strategy, query=words.map(" ".join), k=st.sampled_from([1, 2, 5, None]),
       floor=st.sampled_from([0.0, 0.5, 5.0, 30.0]))
def test_pruned_cosine_equals_the_full_pass(texts: list[str], query: str, k: int | None, floor: float) -> None:
    with folder() as root:
        write_docs(root / "c", {f"d{i:02d}.txt": t for i, t in enumerate(texts)})
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        own = Searcher(index).scores(Searcher(index).prepare(query), "cosine")[1]
        assert_pruned_equals_full(index, query, k, floor * own / 100)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=texts_strategy, edits=texts_strategy, query=words.map(" ".join), k=st.sampled_from([1, 3]))
def test_after_an_update_the_table_is_a_fresh_build_s(texts: list[str], edits: list[str], query: str, k: int) -> None:
    """Documents changed, added and removed: the updated index's table equals a fresh build's,
    and its pruned answers the full pass's."""
    with folder() as root:
        write_docs(root / "c", {f"d{i:02d}.txt": t for i, t in enumerate(texts)})
        Index.update_from(root / "c", root / "i", workers=1)
        shutil.rmtree(root / "c")
        write_docs(root / "c", {f"d{2 * i:02d}.txt": t for i, t in enumerate(edits)})
        Index.update_from(root / "c", root / "i", workers=1)
        Index.update_from(root / "c", root / "fresh", workers=1)
        updated, fresh = Index.open(root / "i"), Index.open(root / "fresh")
        assert updated.cosine_classes is not None and fresh.cosine_classes is not None
        np.testing.assert_array_equal(updated.cosine_classes[0], fresh.cosine_classes[0])
        assert_pruned_equals_full(updated, query, k, 0.0)


def test_rare_terms_outside_every_class_are_read_and_bounded() -> None:
    """600 documents: most words occur in fewer than N/256 of them, so they belong to no class
    (bounded by their per-term bound, read first); every query's pruned top k is the full pass's."""
    rng = np.random.default_rng(7)
    common = [f"c{i}" for i in range(12)]
    docs = {}
    for i in range(600):
        body = list(rng.choice(common, size=int(rng.integers(3, 30)))) + [f"r{int(j)}" for j in rng.integers(0, 900, 6)]
        docs[f"d{i:03d}.txt"] = " ".join(body)
    with folder() as root:
        write_docs(root / "c", docs)
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        assert index.cosine_classes is not None
        f_t = np.diff(np.asarray(index.terms.ptr))
        assert (class_of(index.cosine_classes[1], f_t) < 0).sum() > 100
        for query in list(docs.values())[:40:3] + ["c1 c2 r5 r6 r7", docs["d010.txt"] + " c3 c3 c3"]:
            for k, floor in ((10, 0.0), (3, 0.0), (None, 0.05), (5, 0.2)):
                assert_pruned_equals_full(index, query, k, floor)


def test_an_index_without_the_table_answers_with_per_term_bounds() -> None:
    """An index written before the table (its files and manifest entries absent) opens and gives
    the same answers through the per-term bounds."""
    docs = {f"d{i:02d}.txt": " ".join(VOCABULARY[(i * j) % 17] for j in range(5 + i)) for i in range(20)}
    with folder() as root:
        write_docs(root / "c", docs)
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        prepared = Searcher(index).prepare(docs["d07.txt"])
        with_table = topk.pruned_top_k(index, prepared, COSINE, 5)
        generation = index.generation
        manifest = json.loads((generation / "manifest.json").read_text("utf-8"))
        for name in (cosine_bounds.NORMS_FILE, cosine_bounds.LIMITS_FILE):
            (generation / name).unlink()
            del manifest["files"][name]
        (generation / "manifest.json").write_text(json.dumps(manifest), "utf-8")
        old = Index.open(root / "i")
        assert old.cosine_classes is None
        without = topk.pruned_top_k(old, Searcher(old).prepare(docs["d07.txt"]), COSINE, 5)
        assert with_table[0].tolist() == without[0].tolist()
        np.testing.assert_allclose(with_table[1], without[1], rtol=1e-12)


def test_a_damaged_table_is_refused() -> None:
    docs = {f"d{i}.txt": f"a b c{i}" for i in range(5)}
    with folder() as root:
        write_docs(root / "c", docs)
        Index.update_from(root / "c", root / "i", workers=1)
        path = Index.open(root / "i").generation / NORMS_FILE
        data = bytearray(path.read_bytes())
        data[-1] ^= 0xFF
        path.write_bytes(bytes(data))
        with pytest.raises(CorruptIndexError, match=f"index damaged: {NORMS_FILE} block 0; rebuild with coderiv index"):
            _ = Index.open(root / "i").cosine_classes  # (its one block holds the header: checked at open)


def test_shards_use_the_collection_s_statistics_and_prune_exactly() -> None:
    """Each shard's table is computed with the collection's f_t and N, so it equals the rows of
    one index's table for the shard's documents; sharded pruned answers equal the full pass."""
    rng = np.random.default_rng(3)
    docs = {f"d{i:02d}.txt": " ".join(VOCABULARY[min(int(j), int(j) ** 2 // 40)] for j in rng.integers(0, 60, int(rng.integers(3, 40))))
            for i in range(40)}
    with folder() as root:
        write_docs(root / "c", docs)
        Index.update_from(root / "c", root / "one", workers=1)
        build_sharded(root / "c", root / "many", 3, workers=1)
        one, sharded = Index.open(root / "one"), ShardedIndex.open(root / "many")
        assert one.cosine_classes is not None
        for shard in sharded.shards.values():
            assert shard.cosine_classes is not None
            rows = [one.doc_numbers[d] for d in shard.doc_ids]
            np.testing.assert_array_equal(shard.cosine_classes[0], one.cosine_classes[0][:, rows])
        for query in ("w0 w1 w2 w5 w9", docs["d04.txt"], docs["d17.txt"]):
            full = Searcher(one).rank(Searcher(one).prepare(query), "cosine", top=4, prune=False)
            for kind in passes_kinds():
                with small_rounds(), forced(kind):
                    pruned = ShardedMeasureSearcher(sharded, "cosine").rank(ShardedMeasureSearcher(sharded, "cosine").prepare(query), 4)
                assert [m.doc_id for m in pruned.matches] == [m.doc_id for m in full.matches]
                assert [m.score for m in pruned.matches] == pytest.approx([m.score for m in full.matches], rel=1e-9)


def test_class_norms_reads_a_large_store_in_key_ranges() -> None:
    """Any chunk size gives the same table (the writer reads 16M postings at a time)."""
    with folder() as root:
        write_docs(root / "c", {f"d{i:02d}.txt": " ".join(VOCABULARY[(i + j) % 23] for j in range(i + 3)) for i in range(30)})
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        whole = class_norms(index.terms, index.n_docs, np.asarray(index.doc_norms))
        pieces = class_norms(index.terms, index.n_docs, np.asarray(index.doc_norms), chunk=5)
        np.testing.assert_array_equal(whole[0], pieces[0])
        np.testing.assert_array_equal(whole[1], pieces[1])


def test_counts_past_255_are_probed_exactly() -> None:
    """A word 300 times in one document (its count kept in the side table of large values):
    probed and read postings give the full pass's scores."""
    docs = {f"d{i:02d}.txt": " ".join(["kiwi"] * (300 if i == 3 else i + 1) + ["mango", f"w{i}"]) for i in range(30)}
    with folder() as root:
        write_docs(root / "c", docs)
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        for query in ("kiwi mango", docs["d03.txt"], docs["d10.txt"]):
            for k in (1, 3, None):
                assert_pruned_equals_full(index, query, k, 0.0 if k else 0.01)


def test_without_numba_cosine_prunes_with_numpy() -> None:
    """numba missing (and nothing loaded): the numpy passes answer, whatever the work done."""
    docs = {f"d{i:02d}.txt": " ".join(VOCABULARY[(i * j) % 23] for j in range(4 + i)) for i in range(30)}
    with folder() as root, mock.patch.object(compiled_probes, "_KERNELS", compiled_probes._KERNELS.fresh()), \
            mock.patch.object(compiled_probes, "_SPENT", 10 * compiled_probes.LOAD_AFTER_SECONDS), \
            mock.patch.object(compiled_probes, "available", lambda: False):
        write_docs(root / "c", docs)
        Index.update_from(root / "c", root / "i", workers=1)
        index = Index.open(root / "i")
        prepared = Searcher(index).prepare(docs["d12.txt"])
        passes = topk._passes(index, prepared, COSINE)
        assert type(passes) is kernel.NumpyPasses
        got = topk.pruned_top_k(index, prepared, COSINE, 5)
        assert got[0].tolist() == full_top(index, prepared, 5, 0.0)[0].tolist()
        assert not compiled_probes.loaded()
