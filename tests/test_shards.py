"""Sharded indexes: the same percentages, scores and top-k as one index over the whole
collection, for every measure (the central law), an atomic commit, and a real Dask cluster."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.errors import CoderivError, CorruptIndexError
from coderiv.index.builder import sharded as sharded_build
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.format.shard_set import is_sharded, shard_of
from coderiv.index.index import Index
from coderiv.index.shards import ShardedIndex
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.search import MeasureSearcher
from coderiv.ranking.sharded import ShardedMeasureSearcher
from coderiv.system.cluster import process_cluster
from coderiv.text.analysis import AnalysisSettings
from tests.support.files import write_docs
from tests.support.strategies import collection, document


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the property tests' examples (module-scoped: hypothesis reruns the test)."""
    return tmp_path_factory.mktemp("shards")


def assert_same_answers(single: Index, sharded: ShardedIndex, queries: list[str]) -> None:
    """Every measure: identical percentages of every document, and identical top-k lists."""
    for measure in MEASURES.names():
        one, many = MeasureSearcher(single, measure), ShardedMeasureSearcher(sharded, measure)
        prepared = [(one.prepare(q), many.prepare(q)) for q in queries]
        prepared += [(one.prepare_doc(d), many.prepare_doc(d)) for d in single.doc_ids[:3]]
        for p1, pk in prepared:
            np.testing.assert_array_equal(many.percentages(pk), one.percentages(p1))
            for top, floor in [(3, 0.0), (None, 0.0), (2, 40.0)]:
                r1, rk = one.rank(p1, top, min_percent=floor), many.rank(pk, top, min_percent=floor)
                assert [m.doc_id for m in rk.matches] == [m.doc_id for m in r1.matches], measure
                np.testing.assert_allclose([m.score for m in rk.matches], [m.score for m in r1.matches], rtol=1e-12)
                assert (rk.self_score, rk.matched_terms, rk.query_terms, rk.note) == (
                    r1.self_score, r1.matched_terms, r1.query_terms, r1.note
                )


@settings(max_examples=25, deadline=None)
@given(docs=collection, k=st.integers(1, 5), query=document)
@pytest.mark.slow
def test_sharded_index_answers_as_one_index(cases: Path, docs: list[str], k: int, query: str) -> None:
    case = Path(tempfile.mkdtemp(dir=cases))
    source = write_docs(case / "src", {f"d{i:02d}.txt": text for i, text in enumerate(docs)})
    Index.update_from(source, case / "one", workers=1)
    build_sharded(source, case / "many", k, workers=1)
    single, sharded = Index.open(case / "one"), ShardedIndex.open(case / "many")
    assert sharded.n_docs == single.n_docs and sharded.doc_ids == single.doc_ids
    assert_same_answers(single, sharded, [query, docs[0]])
    shutil.rmtree(case)


def test_shard_of_is_stable_and_spreads() -> None:
    # Pinned values, the same in every process and every release (Python's hash() would change
    # with PYTHONHASHSEED): BLAKE2b-64 of b"a.txt" is 0xc90efc5142c899d5, whose last two bits
    # are 01 (shard 1 of 4) and which is 4 mod 7; the ids doc0…doc7 fall in these shards of 3.
    assert shard_of("a.txt", 4) == 1
    assert shard_of("a.txt", 7) == 4
    assert [shard_of(f"doc{i}", 3) for i in range(8)] == [2, 0, 1, 0, 1, 0, 0, 2]
    assert len({shard_of(f"doc{i}", 3) for i in range(50)}) == 3
    # BLAKE2b of the UTF-8 id, first 8 bytes big-endian, mod K, computed here with hashlib
    import hashlib

    assert hashlib.blake2b(b"a.txt", digest_size=8).hexdigest() == "c90efc5142c899d5"
    for doc_id, k in [("a.txt", 7), ("é/ü.txt", 5), ("doc42", 3)]:
        assert shard_of(doc_id, k) == int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest(), "big") % k


def test_global_statistics_are_the_collection_s(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "src", {"a.txt": "alpha beta", "b.txt": "alpha gamma", "c.txt": "alpha alpha delta"})
    build_sharded(source, tmp_path / "many", 3, workers=1)
    sharded = ShardedIndex.open(tmp_path / "many")
    single = Index.open(Index.update_from(source, tmp_path / "one", workers=1) and tmp_path / "one")
    from coderiv.keys.kinds import term_keys

    f_t = sharded.term_frequencies(np.asarray(term_keys(["alpha", "beta", "zzz"]), np.uint64))
    assert f_t.tolist() == [3, 1, 0]
    for doc_id in single.doc_ids:
        shard, number = sharded.locate(doc_id)
        assert shard.doc_norms[number] == single.doc_norms[single.number(doc_id)]


def test_failed_build_leaves_the_previous_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = write_docs(tmp_path / "src", {f"d{i}.txt": f"alpha beta w{i}" for i in range(6)})
    build_sharded(source, tmp_path / "many", 2, workers=1)
    before = (tmp_path / "many" / "SHARDS.json").read_text()
    real = sharded_build.finish_shard

    def crash(set_dir: str, shard: int, n_docs: int) -> None:
        if shard == 1:
            raise OSError("disk gone")
        real(set_dir, shard, n_docs)

    monkeypatch.setattr(sharded_build, "finish_shard", crash)
    (tmp_path / "src" / "d9.txt").write_text("gamma")
    with pytest.raises(OSError):
        build_sharded(source, tmp_path / "many", 2, workers=1)
    assert (tmp_path / "many" / "SHARDS.json").read_text() == before
    assert sorted(p.name for p in (tmp_path / "many").glob("set-*")) == ["set-000001"]
    assert ShardedIndex.open(tmp_path / "many").n_docs == 6


def test_errors(tmp_path: Path) -> None:
    source = write_docs(tmp_path / "src", {"a.txt": "alpha"})
    with pytest.raises(CoderivError, match="at least 1"):
        build_sharded(source, tmp_path / "x", 0)
    Index.update_from(source, tmp_path / "one", workers=1)
    with pytest.raises(CoderivError, match="single index"):
        build_sharded(source, tmp_path / "one", 2)
    build_sharded(source, tmp_path / "many", 4, workers=1)  # three empty shards
    sharded = ShardedIndex.open(tmp_path / "many")
    assert is_sharded(tmp_path / "many") and sorted(sharded.manifest["shard_documents"]) == [0, 0, 0, 1]
    with pytest.raises(CoderivError, match="no document 'zz'"):
        ShardedMeasureSearcher(sharded).prepare_doc("zz")


EXAMPLE = {f"doc{i:02d}.txt": " ".join(f"w{(i * 7 + j * 3) % 23}" for j in range(30)) for i in range(12)}


def test_cli_index_and_query_sharded(tmp_path: Path, runner: object) -> None:
    from click.testing import CliRunner

    from coderiv.cli import main

    cli = CliRunner()
    source = write_docs(tmp_path / "src", EXAMPLE)
    fp = ["--fingerprint", "anchor:g=3"]
    one = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "one"), *fp, "--quiet", "--workers", "1"])
    many = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "many"), *fp, "--shards", "3", "--quiet", "--workers", "1"])
    assert one.exit_code == 0 and many.exit_code == 0, many.output
    assert many.output.startswith("12 documents in ") and "3 shards" in many.output
    for method in [["-m", "identity5"], ["-m", "cosine"], ["--method", "fingerprint"]]:
        args = ["query", "--doc", "doc03.txt", *method, "-k", "5"]
        a = cli.invoke(main, [*args, "--index", str(tmp_path / "one")])
        b = cli.invoke(main, [*args, "--index", str(tmp_path / "many")])
        assert a.exit_code == 0 and a.output == b.output
    info = cli.invoke(main, ["info", "--index", str(tmp_path / "many"), "--format", "json"])
    import json

    facts = json.loads(info.output)
    assert facts["documents"] == 12 and facts["shards"] == 3 and sum(facts["shard_documents"]) == 12
    assert facts["distinct_terms"] == Index.open(tmp_path / "one").info()["distinct_terms"]
    for args in (["--method", "containment"], ["--exclude-self"]):  # tests/test_shards_exclude.py: all of them
        a = cli.invoke(main, ["query", "--doc", "doc03.txt", *args, "--index", str(tmp_path / "one")])
        b = cli.invoke(main, ["query", "--doc", "doc03.txt", *args, "--index", str(tmp_path / "many")])
        assert a.exit_code == 0 and a.stdout == b.stdout, b.output
    nodask = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "x"), "--dask", "local"])
    assert nodask.exit_code != 0 and "add --shards" in nodask.output


@pytest.mark.cluster
def test_real_dask_cluster_builds_the_same_index(tmp_path: Path) -> None:
    """A scheduler and two workers as separate processes (Dask's own command-line tools on
    loopback): ``index --shards --dask ADDRESS`` gives byte-for-byte the single machine's answers."""
    pytest.importorskip("distributed")
    from click.testing import CliRunner

    from coderiv.cli import main

    with process_cluster(2) as cluster:
        address = cluster.address
        cli = CliRunner()
        source = write_docs(tmp_path / "src", EXAMPLE)
        built = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "many"), "--shards", "3", "--dask", address, "--quiet"])
        assert built.exit_code == 0, built.output
        one = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "one"), "--quiet", "--workers", "1"])
        assert one.exit_code == 0
        for measure in ["identity5", "cosine", "identity4"]:
            # tables and TSV byte for byte; raw JSON scores of a pruned top-k may differ in the
            # last bits (the pruning sums contributions in batches), as pruned vs full pass do
            args = ["query", "--doc", "doc05.txt", "-m", measure, "--format", "tsv", "-k", "12"]
            a = cli.invoke(main, [*args, "--index", str(tmp_path / "one")])
            b = cli.invoke(main, [*args, "--index", str(tmp_path / "many")])
            assert a.exit_code == 0 and a.output == b.output

        # a worker killed during a rebuild: the run completes (Dask reruns its task) or fails
        # with a message, and the sharded index is then the new collection's or still the old
        before = (tmp_path / "many" / "SHARDS.json").read_text()
        write_docs(source, {f"more/m{i:03d}.txt": " ".join(f"w{(i * 5 + j) % 31}" for j in range(400)) for i in range(300)})
        build = subprocess.Popen(
            [sys.executable, "-c", "from coderiv.cli import main; main()", "index", str(source), "--index", str(tmp_path / "many"),
             "--shards", "3", "--dask", address, "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while not (tmp_path / "many" / "set-000002").exists() and build.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        cluster.workers[1].kill()
        output, _ = build.communicate(timeout=60)
        one = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "one"), "--quiet", "--workers", "1"])
        args = ["query", "--doc", "doc05.txt", "--format", "tsv", "-k", "20"]
        after = cli.invoke(main, [*args, "--index", str(tmp_path / "many")])
        if build.returncode == 0:
            assert after.output == cli.invoke(main, [*args, "--index", str(tmp_path / "one")]).output
        else:
            assert len(output.decode().strip().splitlines()) == 1, output
            assert (tmp_path / "many" / "SHARDS.json").read_text() == before and after.exit_code == 0


FINGERPRINTS = ["full:g=2", "anchor:g=2", "winnowing:g=2", "first-r:g=2,r=3"]


@settings(max_examples=15, deadline=None)
@given(docs=collection, k=st.integers(1, 4), query=document)
@pytest.mark.slow
def test_sharded_fingerprints_answer_as_one_index(cases: Path, docs: list[str], k: int, query: str) -> None:
    from coderiv.keys.fingerprint import parse_fingerprint
    from coderiv.ranking.fingerprint_search import FingerprintSearcher
    from coderiv.ranking.sharded import ShardedFingerprintSearcher

    case = Path(tempfile.mkdtemp(dir=cases))
    source = write_docs(case / "src", {f"d{i:02d}.txt": text for i, text in enumerate(docs)})
    stores = [parse_fingerprint(f) for f in FINGERPRINTS]
    Index.update_from(source, case / "one", stores=stores, workers=1)
    build_sharded(source, case / "many", k, stores=stores, workers=1)
    single, sharded = Index.open(case / "one"), ShardedIndex.open(case / "many")
    for strategy in FINGERPRINTS:
        for full_query in (False, True):
            one = FingerprintSearcher(single, strategy, full_query)
            many = ShardedFingerprintSearcher(sharded, strategy, full_query)
            for p1, pk in [(one.prepare(query), many.prepare(query)), (one.prepare_doc("d00.txt"), many.prepare_doc("d00.txt"))]:
                np.testing.assert_array_equal(many.percentages(pk), one.percentages(p1))
                for top, floor in [(3, 0.0), (None, 30.0)]:
                    assert many.rank(pk, top, label="q", min_percent=floor) == one.rank(p1, top, label="q", min_percent=floor)
    shutil.rmtree(case)


def test_rarest_in_collection_is_refused_on_shards(tmp_path: Path) -> None:
    from coderiv.keys.fingerprint import parse_fingerprint
    from coderiv.ranking.sharded import ShardedFingerprintSearcher

    source = write_docs(tmp_path / "src", {"a.txt": "alpha beta gamma delta", "b.txt": "beta gamma delta eps"})
    build_sharded(source, tmp_path / "many", 2, stores=[parse_fingerprint("rarest-in-collection:g=2,r=2")], workers=1)
    with pytest.raises(CoderivError, match="not available on a sharded index"):
        ShardedFingerprintSearcher(ShardedIndex.open(tmp_path / "many"))


def test_full_query_reads_the_collection_source(tmp_path: Path) -> None:
    """prepare_doc with --full-query and no full store re-reads the document from the source."""
    from coderiv.keys.fingerprint import parse_fingerprint
    from coderiv.ranking.fingerprint_search import FingerprintSearcher
    from coderiv.ranking.sharded import ShardedFingerprintSearcher

    source = write_docs(tmp_path / "src", EXAMPLE)
    stores = [parse_fingerprint("anchor:g=2")]
    Index.update_from(source, tmp_path / "one", stores=stores, workers=1)
    build_sharded(source, tmp_path / "many", 3, stores=stores, workers=1)
    one = FingerprintSearcher(Index.open(tmp_path / "one"), full_query=True)
    many = ShardedFingerprintSearcher(ShardedIndex.open(tmp_path / "many"), full_query=True)
    assert many.rank(many.prepare_doc("doc07.txt"), 5) == one.rank(one.prepare_doc("doc07.txt"), 5)


def test_open_retries_when_a_build_replaces_the_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader that read SHARDS.json just before a commit removed that set opens the new one."""
    source = write_docs(tmp_path / "src", {f"d{i}.txt": f"alpha beta w{i}" for i in range(5)})
    build_sharded(source, tmp_path / "many", 2, workers=1)
    real = ShardedIndex.__init__
    calls = []

    def racing(self: ShardedIndex, root: Path) -> None:
        if not calls:  # the first attempt loses the race: a rebuild commits set-000002 meanwhile
            calls.append(1)
            (tmp_path / "src" / "d9.txt").write_text("gamma")
            build_sharded(source, tmp_path / "many", 2, workers=1)
            raise CorruptIndexError("set-000001 vanished")
        real(self, root)

    monkeypatch.setattr(ShardedIndex, "__init__", racing)
    assert ShardedIndex.open(tmp_path / "many").n_docs == 6


edits = st.lists(st.tuples(st.sampled_from(["write", "remove"]), st.integers(0, 14), document), min_size=1, max_size=8)


@settings(max_examples=15, deadline=None)
@given(docs=collection, k=st.integers(1, 4), steps=edits, query=document)
@pytest.mark.slow
def test_an_update_of_a_sharded_index_answers_as_a_fresh_build(
    cases: Path, docs: list[str], k: int, steps: list[tuple[str, int, str]], query: str
) -> None:
    """Random edits, then a build on the live set: only the edited documents are analysed again
    (the report counts them), and every answer equals both a sharded build from scratch and one
    index of the edited collection."""
    case = Path(tempfile.mkdtemp(dir=cases))
    before = {f"d{i:02d}.txt": text for i, text in enumerate(docs)}
    source = write_docs(case / "src", before)
    build_sharded(source, case / "many", k, workers=1)
    after = dict(before)
    for action, n, text in steps:
        name = f"d{n:02d}.txt"
        if action == "write":
            after[name] = text
            write_docs(source, {name: text})
        elif name in after and len(after) > 1:
            del after[name]
            (source / name).unlink()
    report = build_sharded(source, case / "many", k, workers=1)
    assert report.updated
    kept = set(before) & set(after)
    assert (report.added, report.changed, report.removed, report.unchanged) == (
        len(set(after) - set(before)), sum(before[n] != after[n] for n in kept), len(set(before) - set(after)),
        sum(before[n] == after[n] for n in kept),
    )
    build_sharded(source, case / "fresh", k, workers=1)
    Index.update_from(source, case / "one", workers=1)
    updated, fresh, single = ShardedIndex.open(case / "many"), ShardedIndex.open(case / "fresh"), Index.open(case / "one")
    assert updated.doc_ids == fresh.doc_ids == single.doc_ids
    assert updated.manifest["shard_documents"] == fresh.manifest["shard_documents"]
    np.testing.assert_array_equal(updated.term_keys, fresh.term_keys)
    np.testing.assert_array_equal(updated.term_df, fresh.term_df)
    assert_same_answers(single, updated, [query, next(iter(after.values()))])
    shutil.rmtree(case)


def test_a_failed_update_leaves_the_live_set_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new set shares the live shards' files by hard links: a run that fails after the
    shards were updated must leave every live file as it was, and the set still answering."""
    source = write_docs(tmp_path / "src", EXAMPLE)
    build_sharded(source, tmp_path / "many", 3, workers=1)
    live = ShardedIndex.open(tmp_path / "many")
    files = {p: p.read_bytes() for p in live.set_dir.rglob("*") if p.is_file() and p.name != "lock"}
    searcher = ShardedMeasureSearcher(live, "identity5")
    answer = searcher.percentages(searcher.prepare_doc("doc03.txt"))
    write_docs(source, {"doc03.txt": "an entirely new text", "doc99.txt": "w1 w2 w3"})

    def fail(*args: object) -> None:
        raise CoderivError("the second pass failed")

    monkeypatch.setattr(sharded_build, "finish_shard", fail)
    with pytest.raises(CoderivError, match="the second pass failed"):
        build_sharded(source, tmp_path / "many", 3, workers=1)
    assert all(p.read_bytes() == data for p, data in files.items())
    again = ShardedIndex.open(tmp_path / "many")
    assert again.set_dir == live.set_dir and [p.name for p in (tmp_path / "many").glob("set-*")] == [live.set_dir.name]
    searcher = ShardedMeasureSearcher(again, "identity5")
    np.testing.assert_array_equal(searcher.percentages(searcher.prepare_doc("doc03.txt")), answer)
    for index in again.shards.values():
        assert index.verify() == []


def test_index_without_shards_updates_a_sharded_index_and_new_settings_rebuild_it(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coderiv.cli import main

    source = write_docs(tmp_path / "src", EXAMPLE)
    cli = CliRunner()
    assert cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "many"), "--shards", "3", "-q"]).exit_code == 0
    write_docs(source, {"doc03.txt": EXAMPLE["doc03.txt"] + " one more sentence"})
    out = cli.invoke(main, ["index", str(source), "--index", str(tmp_path / "many"), "-q"])
    assert out.exit_code == 0, out.output
    n = len(EXAMPLE)
    assert f"updated: added 0, changed 1, removed 0, unchanged {n - 1}" in out.output
    stemmed = build_sharded(source, tmp_path / "many", 3, settings=AnalysisSettings(stem=True), workers=1)
    assert not stemmed.updated and ShardedIndex.open(tmp_path / "many").settings.stem


@settings(max_examples=50, deadline=None)
@given(
    tables=st.lists(
        st.lists(st.tuples(st.integers(0, 2**64 - 1) | st.sampled_from([0, 2**63, 2**64 - 1]), st.integers(1, 9)),
                 max_size=30, unique_by=lambda kv: kv[0]),
        min_size=1, max_size=5,
    ),
    ranges=st.integers(1, 7),
)
def test_term_tables_merge_by_range_as_all_at_once(tables: list[list[tuple[int, int]]], ranges: int) -> None:
    """The range-by-range merge gives the union of the keys and the summed counts, as one
    np.unique over every shard's keys at once did (uint64 keys at both ends of the space)."""
    from coderiv.index.builder.sharded import merge_term_tables

    shards = []
    for table in tables:
        table = sorted(table)
        keys = np.array([k for k, _ in table], np.uint64)
        ptr = np.concatenate([[0], np.cumsum([c for _, c in table], dtype=np.int64)]).astype(np.int64)
        shards.append((keys, ptr))
    keys, df = merge_term_tables(shards, ranges)
    every, inverse = np.unique(np.concatenate([k for k, _ in shards]), return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=np.concatenate([np.diff(p) for _, p in shards]), minlength=len(every))
    assert keys.dtype == np.uint64 and df.dtype == np.int64
    np.testing.assert_array_equal(keys, every)
    np.testing.assert_array_equal(df, counts.astype(np.int64))


@settings(max_examples=50, deadline=None)
@given(ids=st.sets(st.text(min_size=1, max_size=6), max_size=40), k=st.integers(1, 5))
def test_global_numbers_are_ranks_in_sorted_order(ids: set[str], k: int) -> None:
    from coderiv.index.builder.sharded import global_numbers

    shards = {s: sorted(d for d in ids if shard_of(d, k) == s) for s in range(k)}
    numbers = global_numbers(shards)
    everything = sorted(ids)
    for s, shard_ids in shards.items():
        assert [everything[n] for n in numbers[s].tolist()] == shard_ids
