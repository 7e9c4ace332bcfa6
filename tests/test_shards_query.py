"""Query fan-out on a sharded index: threads in this process and tasks on a real Dask cluster
give byte for byte the output of one index over the whole collection, for every measure and
fingerprint method; a Dask worker keeps the index open per set and reopens it when the set
changes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from coderiv.cli import main
from coderiv.errors import CoderivError
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.shards import ShardedIndex
from coderiv.ranking.fanout import ThreadFanout, held_indexes, open_on_worker
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.sharded import ShardedFingerprintSearcher, ShardedMeasureSearcher
from coderiv.system.cluster import process_cluster
from tests.support.files import write_docs

DOCS = {f"d{i:02d}.txt": " ".join(f"w{(i * 7 + j * 3) % 29}" for j in range(20 + i * 3)) for i in range(30)}
DOCS["sub/copy.txt"] = DOCS["d05.txt"] + " extra words here"
FINGERPRINTS = ["anchor:g=2", "winnowing:g=2", "full:g=2"]
QUERY_ARGS = [["-m", m] for m in MEASURES.names()] + [
    ["--method", "fingerprint", "--strategy", f] for f in FINGERPRINTS
] + [["--method", "fingerprint", "--strategy", "anchor:g=2", "--full-query"]]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The collection, one index over it, and 4 shards of it (fingerprint stores included, and
    the chunk store the batch summary's best match reads: issue 43)."""
    root = tmp_path_factory.mktemp("fanout")
    source = write_docs(root / "src", DOCS)
    fp = [a for f in FINGERPRINTS for a in ("--fingerprint", f)] + ["--report-ready"]
    cli = CliRunner()
    for name, extra in [("one", []), ("many", ["--shards", "4"])]:
        done = cli.invoke(main, ["index", str(source), "--index", str(root / name), *fp, *extra, "--quiet", "--workers", "1"])
        assert done.exit_code == 0, done.output
    return source, root / "one", root / "many"


def _query(index: Path, args: list[str], *extra: str) -> str:
    result = CliRunner().invoke(main, ["query", "--doc", "d05.txt", str(DOCS_QUERY), *args, *extra, "--index", str(index)])
    assert result.exit_code == 0, result.output
    return result.output


DOCS_QUERY = Path(__file__)  # any text file: a query from outside the collection too


@pytest.mark.slow
def test_threads_give_one_index_s_output(indexes: tuple[Path, Path, Path]) -> None:
    _, one, many = indexes
    for args in QUERY_ARGS:
        for fmt in ("table", "tsv"):
            for limit in (["-k", "7"], ["--min-percent", "20"]):
                assert _query(many, args, "--format", fmt, *limit) == _query(one, args, "--format", fmt, *limit), args


def test_threads_equal_one_after_the_other(indexes: tuple[Path, Path, Path]) -> None:
    """The fan-out changes nothing, not even the last bit of a raw score."""
    _, _, many = indexes
    sharded = ShardedIndex.open(many)
    for measure in MEASURES.names():
        serial = ShardedMeasureSearcher(sharded, measure, fanout=ThreadFanout(sharded, threads=1))
        threaded = ShardedMeasureSearcher(sharded, measure, fanout=ThreadFanout(sharded, threads=4))
        prepared = serial.prepare_doc("d11.txt")
        assert threaded.rank(prepared, 5) == serial.rank(prepared, 5)
        np.testing.assert_array_equal(threaded.percentages(prepared), serial.percentages(prepared))
    serial_fp = ShardedFingerprintSearcher(sharded, "winnowing:g=2", fanout=ThreadFanout(sharded, threads=1))
    threaded_fp = ShardedFingerprintSearcher(sharded, "winnowing:g=2", fanout=ThreadFanout(sharded, threads=3))
    prepared_fp = serial_fp.prepare_doc("d11.txt")
    assert threaded_fp.rank(prepared_fp, None) == serial_fp.rank(prepared_fp, None)


def test_worker_cache_follows_the_live_set(tmp_path: Path) -> None:
    """open_on_worker keeps one open index per folder, reopens it when a build commits a new
    set, and refuses a query of a set that is no longer live (one line)."""
    source = write_docs(tmp_path / "src", {"a.txt": "alpha beta gamma", "b.txt": "beta gamma delta"})
    build_sharded(source, tmp_path / "many", 2, workers=1)
    first = ShardedIndex.open(tmp_path / "many").set_dir.name
    root = str(tmp_path / "many")
    opened = open_on_worker(root, first)
    assert open_on_worker(root, first) is opened
    write_docs(source, {"c.txt": "gamma delta epsilon"})
    build_sharded(source, tmp_path / "many", 2, workers=1)
    second = ShardedIndex.open(tmp_path / "many").set_dir.name
    assert second != first
    reopened = open_on_worker(root, second)
    assert reopened is not opened and reopened.n_docs == 3
    with pytest.raises(CoderivError, match="changed during the query"):
        open_on_worker(root, first)


def test_dask_on_a_single_index_is_refused(indexes: tuple[Path, Path, Path]) -> None:
    _, one, _ = indexes
    result = CliRunner().invoke(main, ["query", "--doc", "d05.txt", "--dask", "tcp://127.0.0.1:1", "--index", str(one)])
    assert result.exit_code != 0 and "--dask applies to a sharded index" in result.output


@pytest.mark.cluster
@pytest.mark.faults
def test_real_dask_cluster_answers_as_one_index(indexes: tuple[Path, Path, Path]) -> None:
    """``query --dask tcp://…`` on a scheduler and two worker processes: table and TSV byte for
    byte those of one index, JSON byte for byte that of the threads, for every measure and
    fingerprint method; after a worker is killed the other answers the same."""
    pytest.importorskip("distributed")
    _, one, many = indexes
    found = 0
    with process_cluster(2) as cluster:
        for args in QUERY_ARGS:
            on_dask = _query(many, args, "--format", "tsv", "-k", "9", "--dask", cluster.address)
            assert on_dask == _query(one, args, "--format", "tsv", "-k", "9"), args
            as_json = _query(many, args, "--format", "json", "--min-percent", "10", "--dask", cluster.address)
            assert as_json == _query(many, args, "--format", "json", "--min-percent", "10"), args
            found += any(m["doc_id"] == "sub/copy.txt" for r in json.loads(as_json) for m in r["matches"])
        assert found >= len(MEASURES.names())  # the comparisons are of lists that hold the copy
        table = _query(many, ["-m", "cosine"], "--dask", cluster.address)
        assert table == _query(one, ["-m", "cosine"])
        from distributed import Client

        with Client(cluster.address) as client:  # each worker kept the index open across the queries (processes)
            held = client.run(held_indexes)
        assert list(held.values()) == [{str(many.resolve()): ShardedIndex.open(many).set_dir.name}] * 2
        cluster.workers[0].kill()
        cluster.workers[0].wait(timeout=10)
        after = _query(many, ["-m", "identity5"], "--format", "tsv", "--dask", cluster.address)
        assert after == _query(one, ["-m", "identity5"], "--format", "tsv")


def test_evaluate_on_a_sharded_index_is_one_index_s(indexes: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """Every metric, per query and averaged, and the TREC runs: byte for byte one index's."""
    _, one, many = indexes
    queries = write_docs(tmp_path, {
        "queries.tsv": "q1\td05.txt\nq2\td11.txt\n", "qrels": "q1 sub/copy.txt 1\nq1 d04.txt 1\nq2 d12.txt 1\n",
    })
    methods = "all,fingerprint:anchor:g=2,fingerprint:winnowing:g=2:full-query"
    outputs = {}
    for name, index in [("one", one), ("many", many)]:
        args = ["evaluate", "--queries", str(queries / "queries.tsv"), "--qrels", str(queries / "qrels"), "-m", methods,
                "--per-query", "--format", "json", "--runs", str(tmp_path / name), "--index", str(index), "--quiet"]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        runs = {p.name: p.read_text() for p in sorted((tmp_path / name).iterdir())}
        outputs[name] = (result.output, runs)
    assert outputs["many"] == outputs["one"]
    assert len(outputs["one"][1]) == len(MEASURES.names()) + 3 and json.loads(outputs["one"][0])
    refused = CliRunner().invoke(main, ["evaluate", "--queries", str(queries / "queries.tsv"), "--qrels", str(queries / "qrels"),
                                        "-m", "identity5,passages", "--index", str(many)])
    assert refused.exit_code == 1 and refused.output == (
        "Error: method passages is not available on a sharded index; use containment, fingerprint or ranking\n"
    )


@pytest.mark.slow
def test_report_on_a_sharded_index_is_one_index_s(indexes: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """The evidence report (JSON and HTML) on a sharded index, which first gets its chunk
    store (the set rebuilt atomically), is one index's but for the index path it names."""
    source, one, many = indexes
    query = write_docs(tmp_path, {"q.txt": DOCS["d05.txt"] + " and then " + DOCS["d17.txt"][:60] + " " + DOCS["d22.txt"]})
    outputs = {}
    for name, index in [("one", one), ("many", many)]:
        for fmt in ("json", "html"):
            args = ["report", str(query / "q.txt"), "--format", fmt, "--min-words", "3", "--exclude-common", "4",
                    "--index", str(index), "--quiet", "--out", str(tmp_path / f"{name}.{fmt}")]
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0, result.output
            text = (tmp_path / f"{name}.{fmt}").read_text()
            # the HTML names the index by its folder's name only (issue 28 item 7)
            outputs[name, fmt] = text.replace(str(index), "INDEX").replace(f"index {index.name} ·", "index INDEX ·")
    report = json.loads(outputs["one", "json"])
    # aligned passages (issue 24) run over these texts' repeated words whole, so no passage is
    # common to more than 4 documents any more; the option is carried and answered alike
    assert report["sources"] and report["overall"] > 10 and report["options"]["common_docs"] == 4
    assert outputs["many", "json"] == outputs["one", "json"]
    assert outputs["many", "html"] == outputs["one", "html"]
    sharded = ShardedIndex.open(many)
    assert "chunks" in " ".join(next(iter(sharded.shards.values())).specs)


def test_serve_on_a_sharded_index_answers_as_one_index(indexes: tuple[Path, Path, Path]) -> None:
    """The JSON API over a sharded index: checks (every measure, a pasted text and an indexed
    document), the evidence report and a document's facts equal one index's but for the
    index path and version they name (and raw scores to 11 digits, as the CLI prints them),
    and so do the pair table's rows and groups (stored by ``pairs`` through the shard view)."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from coderiv.web.app import create_app
    from coderiv.web.context import ServeSettings

    _, one, many = indexes
    for index in (one, many):  # the chunk store the report reads (the sharded set is rebuilt with it), the pair table
        done = CliRunner().invoke(main, ["report", str(DOCS_QUERY), "--index", str(index), "--format", "json", "--quiet"])
        assert done.exit_code == 0, done.output
        done = CliRunner().invoke(main, ["pairs", "-m", "chunks", "--index", str(index), "--quiet"])
        assert done.exit_code == 0, done.output

    def answers(index: Path) -> list[object]:
        web = TestClient(create_app(ServeSettings(index)))
        got: list[object] = []
        for measure in MEASURES.names():
            for data in ({"text": DOCS["d05.txt"] + " w3 w9"}, {"doc": "d17.txt"}):
                body = web.post("/api/check", data={**data, "measure": measure, "top": "6", "verify": "false"}).json()
                body.pop("generation")
                for match in body["matches"]:  # a pruned top k's raw scores agree to 1e-12 (docs/shards.md)
                    match["score"] = f"{match['score']:.11g}"
                got.append(body)
        report = web.post("/api/report", data={"text": DOCS["d05.txt"] + " " + DOCS["d22.txt"], "min_words": "3"}).json()
        got.append(json.loads(json.dumps(report).replace(str(index), "INDEX")))
        got.append(web.get("/api/document", params={"id": "sub/copy.txt"}).json())
        got.append(web.get("/api/documents", params={"q": "d1"}).json())
        got.append(web.get("/api/groups", params={"min": "40"}).json())
        info = web.get("/api/info").json()
        got.append([{k: v for k, v in t.items() if k not in ("created", "index_generation")} for t in info["pair_tables"]])
        return got

    single, sharded = answers(one), answers(many)
    assert sharded == single
    checks = single[: 2 * len(MEASURES.names())]
    assert sum(any(m["doc_id"] == "sub/copy.txt" for m in body["matches"]) for body in checks) >= 5  # type: ignore[index]
    assert single[len(checks)]["sources"]  # type: ignore[index]
    assert single[-4]["similar"] and single[-4]["pairs_note"] is None  # type: ignore[index]
    assert single[-2]["groups"] and single[-1][0]["state"] == "up to date"  # type: ignore[index]


def _pairs_outputs(index: Path, method: str) -> tuple[str, str]:
    cli = CliRunner()
    similar = cli.invoke(main, ["similar", "--all", "-m", method, "--format", "tsv", "--index", str(index)])
    groups = cli.invoke(main, ["groups", "--min", "30", "-m", method, "--format", "json", "--index", str(index)])
    assert similar.exit_code == 0 and groups.exit_code == 0, similar.output + groups.output
    return similar.output, groups.output


def test_pairs_on_a_sharded_index_is_one_index_s(indexes: tuple[Path, Path, Path]) -> None:
    """``pairs`` on the shards' merged view (ShardView): every method's table, rows and groups,
    byte for byte one index's; a second run finds it up to date."""
    from coderiv.index.index import Index
    from coderiv.index.shards import ShardView

    _, one, many = indexes
    view = ShardView.open(many)
    single = Index.open(one)
    assert view.doc_ids == single.doc_ids and view.doc_sha256 == single.doc_sha256
    np.testing.assert_array_equal(view.doc_lengths, single.doc_lengths)
    for method in ("chunks", "identity5", "resemblance"):
        for index in (one, many):
            done = CliRunner().invoke(main, ["pairs", "-m", method, "--index", str(index), "--quiet"])
            assert done.exit_code == 0, done.output
        assert _pairs_outputs(many, method) == _pairs_outputs(one, method)
        assert "sub/copy.txt" in _pairs_outputs(one, method)[0]
    again = CliRunner().invoke(main, ["pairs", "-m", "resemblance", "--index", str(many), "--quiet"])
    assert "up to date" in again.output  # (a store added for a later method rebuilds the set: earlier tables go stale)


@pytest.mark.cluster
@pytest.mark.faults
def test_pairs_on_a_real_dask_cluster_with_a_worker_killed(indexes: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """``pairs --dask tcp://…`` over a sharded index equals one index's table; a worker killed
    (by its PID) in the middle of a run: the run completes (Dask reruns the blocks) or fails
    with one line, and the stored table is then whole (the new one, or none)."""
    pytest.importorskip("distributed")
    import subprocess
    import sys
    import time

    source, one, _ = indexes
    from coderiv.ranking.containment import chunk_store_spec

    many = tmp_path / "many"
    build_sharded(source, many, 3, stores=[chunk_store_spec()], workers=1)  # the chunks store: no rebuild notice below
    with process_cluster(2) as cluster:
        done = CliRunner().invoke(main, ["pairs", "-m", "identity5", "--full", "--dask", cluster.address, "--index", str(many), "--quiet"])
        assert done.exit_code == 0, done.output
        one_done = CliRunner().invoke(main, ["pairs", "-m", "identity5", "--index", str(one), "--quiet"])
        assert one_done.exit_code == 0
        assert _pairs_outputs(many, "identity5") == _pairs_outputs(one, "identity5")

        run = subprocess.Popen(
            [sys.executable, "-c", "from coderiv.cli import main; main()", "pairs", "-m", "chunks", "--full",
             "--dask", cluster.address, "--index", str(many), "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        from distributed import Client

        with Client(cluster.address) as watcher:  # kill once the run's blocks are on the cluster
            deadline = time.monotonic() + 60
            while run.poll() is None and time.monotonic() < deadline:
                if watcher.run_on_scheduler(lambda dask_scheduler: sum(1 for k in dask_scheduler.tasks if "_run" in str(k))):
                    break
                time.sleep(0.02)
        cluster.workers[0].kill()
        output, _ = run.communicate(timeout=120)
        if run.returncode == 0:
            CliRunner().invoke(main, ["pairs", "-m", "chunks", "--index", str(one), "--quiet"])
            assert _pairs_outputs(many, "chunks") == _pairs_outputs(one, "chunks")
        else:
            assert len(output.decode().strip().splitlines()) == 1, output
            assert _pairs_outputs(many, "identity5") == _pairs_outputs(one, "identity5")  # nothing else damaged
