"""n-to-n pairs (SPEC §8): hand-worked similarities, boilerplate, incremental = full, Dask, groups, CLI."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from coderiv import Index
from coderiv.cli.main import main
from coderiv.pairs.counting import aggregate, count_block
from coderiv.pairs.eligibility import default_max_df, key_ranges
from coderiv.pairs.groups import find_groups
from coderiv.pairs.methods import METHODS
from coderiv.pairs.row_ranking import row_ranges
from coderiv.pairs.run import compute_pairs, run_pairs
from coderiv.pairs.table import PairTable, StalePairsError
from coderiv.ranking.search import Searcher
from tests.support.files import write_docs
from tests.support.pairs import build, edit_docs, random_docs, rows_by_id

# -- the kernel ------------------------------------------------------------------------------

def test_count_block_counts_shared_keys():
    # key 0 in documents 0, 1, 2; key 1 in documents 1, 2 → (0,1): 1, (0,2): 1, (1,2): 2
    codes, sums = count_block(np.array([3, 2]), np.array([0, 1, 2, 1, 2], np.uint32), None, n_docs=3)
    assert codes.tolist() == [0 * 3 + 1, 0 * 3 + 2, 1 * 3 + 2]
    assert sums.tolist() == [1, 1, 2]


def test_count_block_rows_keep_pairs_touching_them():
    rows = np.array([False, False, True])
    codes, sums = count_block(np.array([3, 2]), np.array([0, 1, 2, 1, 2], np.uint32), None, 3, rows=rows)
    assert codes.tolist() == [2, 5] and sums.tolist() == [1, 2]  # (0,2) and (1,2); (0,1) left out


def test_aggregate_sums_equal_codes():
    codes, sums = aggregate(np.array([5, 3, 5, 5], np.uint64), np.array([1, 2, 3, 4]))
    assert codes.tolist() == [3, 5] and sums.tolist() == [2, 8]


def test_row_ranges_cut_rows_by_entries():
    # cumulative entries 3, 3, 8, 10, 14: a range ends with the row that reaches each 5 entries
    assert row_ranges(np.array([3, 0, 5, 2, 4]), budget=5) == [(0, 3), (3, 5)]
    assert row_ranges(np.array([0, 0]), budget=5) == [(0, 2)]


def test_key_ranges_cover_every_key_once():
    from coderiv.index.format.postings import from_forward

    store = from_forward([(np.array([1, 2, 3], np.uint64), np.ones(3, np.int32)), (np.array([2, 5], np.uint64), np.ones(2, np.int32))])
    # keys 1, 2, 3, 5 hold 1, 2, 1, 1 postings (ptr 0 1 3 4 5); steps of 2 postings cut at keys 0, 1, 3
    assert list(key_ranges(store, step=2)) == [(0, 1), (1, 3), (3, 4)]
    assert list(key_ranges(store, step=100)) == [(0, 4)]


def test_default_max_df_is_the_larger_of_100_and_one_percent():
    assert default_max_df(3380) == 100
    assert default_max_df(100_000) == 1000
    assert default_max_df(1_200_000) == 12_000


# -- the methods, worked by hand -----------------------------------------------------------------

def test_chunk_similarity_is_asymmetric(tmp_path):
    # A: 6 words → 2 five-word chunks; B: the first 5 words → 1 chunk, shared: B ⊂ A
    index = build(tmp_path / "c", {
        "a.txt": "alpha bravo charlie delta echo foxtrot",
        "b.txt": "alpha bravo charlie delta echo",
        "c.txt": "golf hotel india juliet kilo",
    }, tmp_path)
    table, report = compute_pairs(index, "chunks")
    assert report.mode == "full" and report.shared_pairs == 1
    assert table.similar("b.txt") == [(1, 100.0, "a.txt")]  # 1 / 1 chunk
    assert table.similar("a.txt") == [(1, 50.0, "b.txt")]  # 1 / 2 chunks
    assert table.similar("c.txt") == []


def test_resemblance_of_four_word_shingles(tmp_path):
    # A has shingles {abcd, bcde, cdef}, B {abcd, bcde}: |∩| = 2, |∪| = 3
    index = build(tmp_path / "c", {
        "a.txt": "alpha bravo charlie delta echo foxtrot",
        "b.txt": "alpha bravo charlie delta echo",
    }, tmp_path)
    table, _ = compute_pairs(index, "resemblance")
    assert table.similar("a.txt")[0][1] == pytest.approx(100 * 2 / 3)
    assert table.similar("b.txt")[0][1] == pytest.approx(100 * 2 / 3)


def test_identity5_worked_by_hand(tmp_path):
    # N = 3, f_t(apple) = f_t(banana) = 2. A = {apple:1, banana:1} (f_d 2), B = {apple:1, banana:2} (f_d 3)
    # S(A,B) = L · [(3/2)/(1+0) + (3/2)/(1+1)] = 2.25 / (1 + ln 2); S(A,A) = 3/2 + 3/2 = 3
    index = build(tmp_path / "c", {"a.txt": "apple banana", "b.txt": "apple banana banana", "c.txt": "cherry"}, tmp_path)
    table, _ = compute_pairs(index, "identity5")
    expected = 100 * 2.25 / (1 + math.log(2)) / 3  # = 44.30…%; S(B,B) = 3 too, so B→A is the same
    assert table.similar("a.txt")[0][1:] == (pytest.approx(expected, rel=1e-9), "b.txt")
    assert table.similar("b.txt")[0][1:] == (pytest.approx(expected, rel=1e-9), "a.txt")
    assert expected == pytest.approx(44.30, abs=0.01)


def test_identity5_rows_equal_one_to_n_ranking(tmp_path):
    index = build(tmp_path / "c", random_docs(random.Random(3), 14), tmp_path)
    table, _ = compute_pairs(index, "identity5", top=5)  # M = 100 > N: nothing skipped, exact identity5
    searcher = Searcher(index)
    for doc_id in index.doc_ids:
        result = searcher.rank(searcher.prepare_doc(doc_id), "identity5", top=None)
        expected = [(m.doc_id, m.percent) for m in result.matches if m.doc_id != doc_id][:5]
        got = [(other, pct) for _, pct, other in table.similar(doc_id)]
        assert [e[0] for e in expected] == [g[0] for g in got]
        np.testing.assert_allclose([e[1] for e in expected], [g[1] for g in got], rtol=1e-9)


def _brute_force(index: Index, method: str, top: int, max_df: int) -> dict[str, list[tuple[str, float]]]:
    """All N² pairs of the set methods, skipping keys in more than max_df documents."""
    store = index.store(METHODS[method].store.name)
    f = dict(zip(np.asarray(store.keys).tolist(), store.doc_freqs.tolist()))
    sets = [{k for k in store.doc_keys(d)[0].tolist() if f[k] <= max_df} for d in range(index.n_docs)]
    rows = {}
    for a, keys_a in enumerate(sets):
        found = []
        for b, keys_b in enumerate(sets):
            shared = len(keys_a & keys_b)
            if a != b and shared:
                pct = 100 * shared / (len(keys_a) if method == "chunks" else len(keys_a | keys_b))
                found.append((-pct, b))
        rows[index.doc_ids[a]] = [(index.doc_ids[b], -neg) for neg, b in sorted(found)[:top]]
    return rows


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), method=st.sampled_from(["chunks", "resemblance"]), max_df=st.integers(2, 5))
def test_set_methods_equal_brute_force(tmp_path_factory, monkeypatch, seed, method, max_df):
    from coderiv.pairs import budget, eligibility, row_ranking

    monkeypatch.setattr(row_ranking, "ROW_ENTRIES", 7)  # rows ranked in several ranges
    monkeypatch.setattr(eligibility, "POSTINGS_STEP", 30)  # whole-store passes in several steps
    # the scipy product's ranges (the compiled loop of a full run holds no range of entries)
    monkeypatch.setattr("coderiv.pairs.compiled.load", lambda: False)
    monkeypatch.setattr(budget, "MIN_RANGE_PAIRS", 1)  # the budget is all for pairs here
    monkeypatch.setattr("coderiv.pairs.run.fixed_bytes", lambda *args: 0)
    tmp = tmp_path_factory.mktemp("bf")
    index = build(tmp / "c", random_docs(random.Random(seed), 12, vocab=12, length=20), tmp)
    table, _ = compute_pairs(index, method, top=3, max_df=max_df)
    got = rows_by_id(table)
    want = _brute_force(index, method, 3, max_df)
    assert got.keys() == want.keys()
    for doc_id in got:
        assert [o for o, _ in got[doc_id]] == [o for o, _ in want[doc_id]]
        np.testing.assert_allclose([p for _, p in got[doc_id]], [p for _, p in want[doc_id]])


# -- boilerplate ---------------------------------------------------------------------------------

def test_boilerplate_keys_are_skipped_and_reported(tmp_path):
    header = "licensed apache license version two"  # one 5-word chunk, in all four documents
    docs = {f"d{i}.txt": f"{header}\n\nunique{i} words{i} here{i} only{i} text{i} more{i}" for i in range(4)}
    docs["copy.txt"] = docs["d0.txt"]
    index = build(tmp_path / "c", docs, tmp_path)
    table, report = compute_pairs(index, "chunks", max_df=3)
    assert report.max_df == 3
    assert report.skipped_keys == 1 and report.skipped_postings == 5  # the header chunk, 5 documents
    # the header links no one; the copy is still 100% (the skipped chunk leaves the sizes too)
    assert table.similar("d1.txt") == []
    assert table.similar("copy.txt") == [(1, 100.0, "d0.txt")]
    assert table.manifest["skipped_keys"] == 1


# -- incremental runs ----------------------------------------------------------------------------

@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), method=st.sampled_from(sorted(METHODS)), max_df=st.sampled_from([None, 3, 4]))
def test_incremental_run_equals_full_recomputation(tmp_path_factory, monkeypatch, seed, method, max_df):
    from coderiv.pairs import eligibility, row_ranking

    monkeypatch.setattr(row_ranking, "ROW_ENTRIES", 5)  # rows merged in several ranges
    monkeypatch.setattr(eligibility, "POSTINGS_STEP", 50)  # whole-store passes in several steps
    tmp = tmp_path_factory.mktemp("inc")
    rng = random.Random(seed)
    index = build(tmp / "c", random_docs(rng, 16, vocab=15, length=20), tmp)
    first = run_pairs(index, method, top=3, max_df=max_df)
    assert first.mode == "full"
    edit_docs(tmp / "c", rng)
    Index.update_from(tmp / "c", tmp / "idx", workers=1)
    index = Index.open(tmp / "idx")
    report = run_pairs(index, method, top=3, max_df=max_df)
    assert report.mode == "incremental"
    incremental = PairTable.open(index, method)
    full, _ = compute_pairs(index, method, top=3, max_df=max_df)
    assert rows_by_id(incremental) == rows_by_id(full)  # bit-identical percentages


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), method=st.sampled_from(sorted(METHODS)), budget=st.integers(1, 40))
def test_a_memory_budget_computes_rows_by_document_range_with_identical_results(
    tmp_path_factory, monkeypatch, seed, method, budget
):
    from coderiv.pairs import budget as memory
    from coderiv.pairs import counting, eligibility

    monkeypatch.setattr(eligibility, "POSTINGS_STEP", 30)  # whole-store passes in several steps
    # the scipy product's ranges (the compiled loop of a full run holds no range of entries)
    monkeypatch.setattr("coderiv.pairs.compiled.load", lambda: False)
    monkeypatch.setattr(memory, "MIN_RANGE_PAIRS", 1)  # the budget is all for pairs here
    monkeypatch.setattr("coderiv.pairs.run.fixed_bytes", lambda *args: 0)
    ranges: list[list[tuple[int, int]]] = []
    # set methods cut product rows (product_ranges), identity5 the block path's document ranges
    spied = "product_ranges" if METHODS[method].measure is None else "document_ranges"
    original = counting.product_ranges if spied == "product_ranges" else memory.document_ranges
    monkeypatch.setattr(f"coderiv.pairs.run.{spied}", lambda *args, **kw: ranges.append(original(*args, **kw)) or ranges[-1])
    tmp = tmp_path_factory.mktemp("mem")
    rng = random.Random(seed)
    index = build(tmp / "c", random_docs(rng, 16, vocab=15, length=20), tmp)
    whole, whole_report = compute_pairs(index, method, top=3)
    assert ranges[-1] == [(0, index.n_docs)]  # the default budget holds this collection
    assume(whole_report.shared_pairs > budget)  # a budget that holds every pair needs no ranges
    ranged, report = compute_pairs(index, method, top=3, memory=budget * memory.BYTES_PER_PAIR)
    assert len(ranges[-1]) > 1 and ranges[-1][0][0] == 0 and ranges[-1][-1][1] == index.n_docs
    assert report.shared_pairs == whole_report.shared_pairs > 0
    for name in ("row_ptr", "targets", "values", "truncated"):
        assert np.array_equal(whole.arrays[name], ranged.arrays[name]), name
    # an incremental run under the budget equals a full one
    run_pairs(index, method, top=3, memory=budget * memory.BYTES_PER_PAIR)
    edit_docs(tmp / "c", rng)
    Index.update_from(tmp / "c", tmp / "idx", workers=1)
    index = Index.open(tmp / "idx")
    assert run_pairs(index, method, top=3, memory=budget * memory.BYTES_PER_PAIR).mode == "incremental"
    full, _ = compute_pairs(index, method, top=3)
    assert rows_by_id(PairTable.open(index, method)) == rows_by_id(full)


def test_incremental_run_recomputes_only_touched_rows(tmp_path):
    rng = random.Random(7)
    docs = {f"d{i:02d}.txt": " ".join(f"t{rng.randrange(10_000)}" for _ in range(40)) for i in range(20)}
    docs["d00v.txt"] = docs["d00.txt"] + " appended words"
    index = build(tmp_path / "c", docs, tmp_path)
    run_pairs(index, "chunks", top=5)
    write_docs(tmp_path / "c", {"new.txt": docs["d05.txt"]})
    Index.update_from(tmp_path / "c", tmp_path / "idx", workers=1)
    index = Index.open(tmp_path / "idx")
    report = run_pairs(index, "chunks", top=5)
    # only new.txt is recomputed; d05.txt's row gets the pair from the other direction
    assert (report.mode, report.recomputed_rows) == ("incremental", 1)
    table = PairTable.open(index, "chunks")
    assert table.similar("d05.txt") == [(1, 100.0, "new.txt")]
    assert table.similar("new.txt") == [(1, 100.0, "d05.txt")]
    assert run_pairs(index, "chunks", top=5).mode == "unchanged"


def test_truncated_row_that_loses_its_entry_is_recomputed(tmp_path):
    words = [f"t{i}" for i in range(40)]
    docs = {
        "x.txt": " ".join(words),
        "y.txt": " ".join(words[:30] + ["y1", "y2"]),  # x → y: 26 of 36 chunks
        "z.txt": " ".join(words[:15] + ["z1", "z2"]),  # x → z: 11 of 36 chunks
    }
    index = build(tmp_path / "c", docs, tmp_path)
    run_pairs(index, "chunks", top=1)
    assert PairTable.open(index, "chunks").similar("x.txt") == [(1, pytest.approx(100 * 26 / 36), "y.txt")]
    (tmp_path / "c" / "y.txt").unlink()
    Index.update_from(tmp_path / "c", tmp_path / "idx", workers=1)
    index = Index.open(tmp_path / "idx")
    report = run_pairs(index, "chunks", top=1)
    # x's row held only y (top 1 of 2 candidates): its 2nd best was never stored, so x is recomputed;
    # z's row (x, tied with y at 11 of 13 chunks and first by id) just loses nothing
    assert (report.mode, report.recomputed_rows) == ("incremental", 1)
    assert PairTable.open(index, "chunks").similar("x.txt") == [(1, pytest.approx(100 * 11 / 36), "z.txt")]
    assert PairTable.open(index, "chunks").similar("z.txt") == [(1, pytest.approx(100 * 11 / 13), "x.txt")]


def test_changed_parameters_force_a_full_run(tmp_path):
    index = build(tmp_path / "c", random_docs(random.Random(1), 8), tmp_path)
    run_pairs(index, "chunks", top=3)
    assert run_pairs(index, "chunks", top=4).mode == "full"
    assert run_pairs(index, "chunks", top=4, max_df=5).mode == "full"
    assert run_pairs(index, "chunks", top=4, max_df=5).mode == "unchanged"
    write_docs(tmp_path / "c", {"more.txt": "quite another text altogether"})
    Index.update_from(tmp_path / "c", tmp_path / "idx", workers=1)
    index = Index.open(tmp_path / "idx")
    index.manifest["format_version"] = 0  # as if the index had been rebuilt by another format
    assert run_pairs(index, "chunks", top=4, max_df=5).mode == "full"


def test_stale_table_is_detected(tmp_path):
    index = build(tmp_path / "c", random_docs(random.Random(2), 8), tmp_path)
    run_pairs(index, "chunks", top=3)
    write_docs(tmp_path / "c", {"extra.txt": "something else entirely new"})
    Index.update_from(tmp_path / "c", tmp_path / "idx", workers=1)
    with pytest.raises(StalePairsError, match="older version of the index"):
        PairTable.open(Index.open(tmp_path / "idx"), "chunks")


# -- Dask ----------------------------------------------------------------------------------------

@pytest.mark.cluster
def test_dask_local_cluster_gives_identical_table(tmp_path, monkeypatch):
    from coderiv.pairs import counting
    from coderiv.pairs.dask_backend import dask_client, dask_engine

    monkeypatch.setattr(counting, "BLOCK_PAIRS", 40)  # many small blocks, spread over both workers
    index = build(tmp_path / "c", random_docs(random.Random(5), 30, vocab=20), tmp_path)
    for method in sorted(METHODS):
        single, single_report = compute_pairs(index, method, top=4)  # the set methods' sparse product
        _, blocks_report = compute_pairs(index, method, top=4, engine=lambda tasks: counting.serial_engine(tasks))
        with dask_client("local", workers=2, processes=False) as client:
            assert len(client.nthreads()) == 2
            distributed, report = compute_pairs(index, method, top=4, engine=dask_engine(client))
        assert report.blocks == blocks_report.blocks > 2  # the same blocks as one process's block path
        assert report.shared_pairs == single_report.shared_pairs > 0
        for name in ("row_ptr", "targets", "values"):
            assert np.array_equal(single.arrays[name], distributed.arrays[name])


# -- groups --------------------------------------------------------------------------------------

def test_groups_are_connected_components_largest_first(tmp_path):
    rng = random.Random(11)
    base = [[f"t{rng.randrange(10_000)}" for _ in range(50)] for _ in range(3)]
    docs = {
        "a1.txt": " ".join(base[0]),  # 46 chunks
        "a2.txt": " ".join(base[0] + ["zebra", "quokka"]),  # a1 + 2 chunks: a1 → a2 = 46/46
        "a3.txt": " ".join(base[0][:45] + ["new1", "new2", "new3", "new4", "new5"]),  # 41 of 46 shared
        "b1.txt": " ".join(base[1]),
        "b2.txt": " ".join(base[1][:25]),  # b2 → b1 = 100%, b1 → b2 = 21/46 = 45.7%
        "c1.txt": " ".join(base[2]),
    }
    index = build(tmp_path / "c", docs, tmp_path)
    run_pairs(index, "chunks", top=10)
    table = PairTable.open(index, "chunks")
    assert table.similar("a3.txt")[0][1] == pytest.approx(100 * 41 / 46)  # 89.1%
    assert table.similar("b1.txt")[0][1] == pytest.approx(100 * 21 / 46)
    # by default both ways must reach --min: a2 → a1 = 46/48 = 95.8% and a1 ↔ a3 89.1% hold,
    # b1 → b2 (45.7%) does not, so the excerpt b2 stays apart from b1
    groups = find_groups(table, 85)
    assert [g.doc_ids for g in groups] == [["a1.txt", "a2.txt", "a3.txt"]]
    assert [g.number for g in groups] == [1]
    assert [g.doc_ids for g in find_groups(table, 90)] == [["a1.txt", "a2.txt"]]
    # one way (groups --one-way): a link in either direction joins two documents
    assert [g.doc_ids for g in find_groups(table, 90, mutual=False)] == [["a1.txt", "a2.txt"], ["b1.txt", "b2.txt"]]
    groups = find_groups(table, 85, mutual=False)
    assert [g.doc_ids for g in groups] == [["a1.txt", "a2.txt", "a3.txt"], ["b1.txt", "b2.txt"]]
    assert [g.number for g in groups] == [1, 2]


def test_groups_default_to_mutual_links_on_the_command_line_and_the_web(tmp_path, runner):
    """Issue 28 item 6: an excerpt wholly inside a long page (one way 100%, the other 45.7%)
    is not a version of it: the default groups leave it out, ``--one-way`` keeps the old chain."""
    rng = random.Random(11)
    base = [f"t{rng.randrange(10_000)}" for _ in range(50)]
    docs = {"b1.txt": " ".join(base), "b2.txt": " ".join(base[:25]), "b3.txt": " ".join(base + ["zebra"])}
    index = build(tmp_path / "c", docs, tmp_path)
    run_pairs(index, "chunks", top=10)
    idx = str(index.root)
    default = runner.invoke(main, ["groups", "--min", "90", "--index", idx, "--format", "tsv"])
    assert default.output.splitlines() == ["group\tsize\tdoc_id", "1\t2\tb1.txt", "1\t2\tb3.txt"]
    one_way = runner.invoke(main, ["groups", "--min", "90", "--one-way", "--index", idx])
    assert one_way.output.splitlines()[0] == "1 groups of documents similar at 90% or more, one way or the other (chunks)"
    assert [line.split()[-1] for line in one_way.output.splitlines()[3:]] == ["b1.txt", "b2.txt", "b3.txt"]
    from coderiv.web.snapshot import Snapshot

    snapshot = Snapshot.open(index.root)
    assert [g.doc_ids for g in snapshot.groups("chunks", 90)] == [["b1.txt", "b3.txt"]]
    assert [g.doc_ids for g in snapshot.groups("chunks", 90, mutual=False)] == [["b1.txt", "b2.txt", "b3.txt"]]


# -- the command line ------------------------------------------------------------------------------

def test_cli_pairs_similar_groups_info(tmp_path, runner):
    docs = {"a.txt": "alpha bravo charlie delta echo foxtrot", "b.txt": "alpha bravo charlie delta echo", "c.txt": "golf hotel"}
    write_docs(tmp_path / "c", docs)
    idx = str(tmp_path / "idx")
    assert runner.invoke(main, ["index", str(tmp_path / "c"), "--index", idx, "-q"]).exit_code == 0
    result = runner.invoke(main, ["pairs", "--index", idx, "-q"])
    assert result.exit_code == 0, result.output
    assert "full run, 3 of 3 rows" in result.output
    result = runner.invoke(main, ["similar", "b.txt", "--index", idx, "--format", "tsv"])
    assert result.output.splitlines() == ["doc_id\trank\tpercent\tsimilar_id", "b.txt\t1\t100.0000\ta.txt"]
    exported = json.loads(runner.invoke(main, ["similar", "--all", "--index", idx, "--format", "json"]).output)
    assert [r["doc_id"] for r in exported["results"]] == ["a.txt", "b.txt", "c.txt"]
    assert exported["results"][0]["similar"] == [{"rank": 1, "percent": 50.0, "doc_id": "b.txt"}]
    result = runner.invoke(main, ["groups", "--min", "50", "--index", idx, "--format", "tsv"])
    assert result.output.splitlines()[1:] == ["1\t2\ta.txt", "1\t2\tb.txt"]
    info = runner.invoke(main, ["info", "--index", idx]).output
    assert "pairs chunks" in info and "up to date" in info and "0 keys in more than 100 documents" in info
    # the table says which way the asymmetric percentage goes, and says so when a row is empty
    result = runner.invoke(main, ["similar", "a.txt", "c.txt", "--index", idx])
    assert result.output.splitlines() == [
        "chunks: percent = how much of doc_id is in similar_id: the share of doc_id's distinct 5-word chunks "
        "also in similar_id (asymmetric: similar_id's own row has the other direction)",
        "doc_id  rank  percent  similar_id",
        "------  ----  -------  ----------",
        "a.txt      1    50.0%  b.txt",
        "c.txt: no similar document in the chunks pair table (it shares no key with another document outside boilerplate)",
    ]
    assert exported["reading"].startswith("percent = how much of doc_id is in similar_id")


def test_cli_errors_are_one_line(tmp_path, runner):
    write_docs(tmp_path / "c", {"a.txt": "alpha bravo charlie delta echo", "b.txt": "golf hotel india"})
    idx = str(tmp_path / "idx")
    runner.invoke(main, ["index", str(tmp_path / "c"), "--index", idx, "-q"])
    result = runner.invoke(main, ["similar", "a.txt", "--index", idx])
    assert result.exit_code == 1 and "no pair table for method 'chunks'" in result.output
    runner.invoke(main, ["pairs", "--index", idx, "-q"])
    result = runner.invoke(main, ["similar", "nope.txt", "--index", idx])
    assert result.exit_code == 1 and "no document 'nope.txt'" in result.output
    result = runner.invoke(main, ["pairs", "--workers", "2", "--index", idx])
    assert result.exit_code == 1 and "use it with --dask local" in result.output
    result = runner.invoke(main, ["pairs", "--method", "cosine", "--index", idx])
    assert result.exit_code == 2 and "Invalid value for '--method'" in result.output
    result = runner.invoke(main, ["groups", "--min", "0", "--index", idx])
    assert result.exit_code == 1 and "--min must be a percentage" in result.output
    write_docs(tmp_path / "c", {"z.txt": "zulu yankee xray"})
    runner.invoke(main, ["index", str(tmp_path / "c"), "--index", idx, "-q"])
    result = runner.invoke(main, ["similar", "a.txt", "--index", idx])
    assert result.exit_code == 1 and "run 'coderiv pairs --method chunks'" in result.output
    info = json.loads(runner.invoke(main, ["info", "--index", idx, "--format", "json"]).output)
    assert [(t["method"], t["state"]) for t in info["pair_tables"]] == [("chunks", "stale")]
    assert "Traceback" not in result.output


@pytest.mark.cluster
def test_cli_dask_local_cluster_matches_single_process(tmp_path, runner):
    write_docs(tmp_path / "c", random_docs(random.Random(9), 10))
    idx = str(tmp_path / "idx")
    runner.invoke(main, ["index", str(tmp_path / "c"), "--index", idx, "-q"])
    assert runner.invoke(main, ["pairs", "--index", idx, "-q"]).exit_code == 0
    single = runner.invoke(main, ["similar", "--all", "--index", idx, "--format", "tsv"]).output
    result = runner.invoke(main, ["pairs", "--index", idx, "-q", "--full", "--dask", "local", "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert "full run, 10 of 10 rows" in result.output
    assert runner.invoke(main, ["similar", "--all", "--index", idx, "--format", "tsv"]).output == single
    assert len(single.splitlines()) > 1


def test_component_labels_match_a_breadth_first_search():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from coderiv.pairs.groups import component_labels

    @settings(max_examples=200, deadline=None)
    @given(st.integers(1, 30).flatmap(lambda n: st.tuples(
        st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40))))
    def check(case):
        n, links = case
        neighbours = {i: set() for i in range(n)}
        for a, b in links:
            neighbours[a].add(b)
            neighbours[b].add(a)
        expected = []
        for node in range(n):  # smallest node reachable from node
            seen, todo = {node}, [node]
            while todo:
                for other in neighbours[todo.pop()] - seen:
                    seen.add(other)
                    todo.append(other)
            expected.append(min(seen))
        src = np.array([a for a, _ in links], np.int64)
        dst = np.array([b for _, b in links], np.int64)
        assert component_labels(n, src, dst).tolist() == expected

    check()
    # a chain linked from its far end: 4-3, 3-2, 2-1, 1-0 all end at 0
    assert component_labels(6, np.array([4, 3, 2, 1]), np.array([3, 2, 1, 0])).tolist() == [0, 0, 0, 0, 0, 5]


def test_key_freqs_are_the_stores_document_frequencies_in_int32(tmp_path, monkeypatch):
    from coderiv.pairs import eligibility

    monkeypatch.setattr(eligibility, "POSTINGS_STEP", 7)  # computed in several steps
    index = build(tmp_path / "c", random_docs(random.Random(3), 12, vocab=30, length=25), tmp_path)
    store = index.store(METHODS["resemblance"].store.name)
    f = eligibility.key_freqs(store)
    assert f.dtype == np.int32 and f.tolist() == store.doc_freqs.tolist()


def test_the_budget_left_for_shared_pairs_is_memory_minus_fixed_costs_with_a_floor():
    from coderiv.pairs import budget as pairs

    assert pairs.range_pairs(1000 * pairs.BYTES_PER_PAIR + 5_000, 5_000) == max(pairs.MIN_RANGE_PAIRS, 1000)
    assert pairs.range_pairs(100 << 30, 4 << 30) == (96 << 30) // pairs.BYTES_PER_PAIR
    assert pairs.range_pairs(1 << 30, 2 << 30) == pairs.MIN_RANGE_PAIRS  # fixed costs past the budget


def test_row_builder_writes_consecutive_csr_rows_in_place():
    from coderiv.pairs.row_ranking import RowBuilder

    built = RowBuilder(5, 2)
    built.add((np.array([0, 2, 3]), np.array([4, 1, 0], np.uint32), np.array([50.0, 20.0, 90.0]), np.array([True, False])))
    built.add((np.array([0, 0, 2, 2]), np.array([3, 2], np.uint32), np.array([10.0, 5.0]), np.array([False, True, False])))
    row_ptr, targets, values, truncated = built.result()
    assert row_ptr.tolist() == [0, 2, 3, 3, 5, 5]
    assert targets.tolist() == [4, 1, 0, 3, 2] and values.tolist() == [50.0, 20.0, 90.0, 10.0, 5.0]
    assert truncated.tolist() == [True, False, False, True, False]


def test_a_pair_method_carries_its_kind_as_data_not_in_its_name():
    """How a shared count becomes a percentage is the method's ``kind``: a resemblance method
    under another name reads as resemblance; a kind that does not fit the measure is refused."""
    from dataclasses import replace

    from coderiv.keys.kinds import TERMS
    from coderiv.pairs.methods import CONTAINMENT, RESEMBLANCE, SELF_SCORE, PairMethod
    from coderiv.pairs.row_ranking import directed_values

    assert [METHODS[n].kind for n in ("chunks", "identity5", "resemblance")] == [CONTAINMENT, SELF_SCORE, RESEMBLANCE]
    shingles = replace(METHODS["resemblance"], name="shingles")
    src, dst, shared, sizes = np.array([0, 1]), np.array([1, 0]), np.array([2, 2]), np.array([4, 6])
    # 2 shared of 4 and 6: resemblance 2 / (4 + 6 − 2) = 25% both ways; containment 2/4 and 2/6
    assert directed_values(shingles, src, dst, shared, sizes, None).tolist() == [25.0, 25.0]
    assert directed_values(replace(shingles, kind=CONTAINMENT), src, dst, shared, sizes, None).tolist() == [50.0, 100 * 2 / 6]
    with pytest.raises(ValueError, match="does not fit"):
        PairMethod("x", TERMS, None, SELF_SCORE, "a self-score needs a measure")
    with pytest.raises(ValueError, match="does not fit"):
        PairMethod("x", TERMS, "identity5", RESEMBLANCE, "a measure's method reads as a self-score")
