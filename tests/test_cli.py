"""The command line: outputs with exact percentages, and bad input → one line, non-zero exit."""

from __future__ import annotations

import json

import pytest

from coderiv.cli.main import main
from tests.support.files import write_docs

DOCS = {"d1.txt": "apple banana apple", "d2.txt": "banana cherry", "d3.txt": "cherry cherry date"}


@pytest.fixture
def indexed(tmp_path, runner):
    write_docs(tmp_path / "c", DOCS)
    result = runner.invoke(main, ["index", str(tmp_path / "c"), "--index", str(tmp_path / "i"), "--workers", "1", "--report-ready"])
    assert result.exit_code == 0, result.output
    assert "3 documents" in result.output and "added 3" in result.output
    (tmp_path / "q.txt").write_text("apple banana", "utf-8")
    return tmp_path


def test_query_table_shows_absolute_percentages(indexed, runner):
    result = runner.invoke(main, ["query", str(indexed / "q.txt"), "--index", str(indexed / "i")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "identity5" in lines[0] and "self-score 4.5 = 100%" in lines[0]
    assert lines[3].split() == ["1", "39.4%", "1.77185", "d1.txt"]  # L = 1/(1+ln 2); 3L/4.5
    assert lines[4].split() == ["2", "33.3%", "1.5", "d2.txt"]  # 1.5/4.5
    assert len(lines) == 5  # d3 shares no term


def test_query_json_and_tsv(indexed, runner):
    args = ["query", str(indexed / "q.txt"), "--index", str(indexed / "i"), "--measure", "identity5"]
    data = json.loads(runner.invoke(main, [*args, "--format", "json"]).output)
    assert data[0]["self_score"] == pytest.approx(4.5)
    assert [(m["doc_id"], round(m["percent"], 4)) for m in data[0]["matches"]] == [("d1.txt", 39.3744), ("d2.txt", 33.3333)]
    tsv = runner.invoke(main, [*args, "--format", "tsv", "--top", "1"]).output.splitlines()
    assert tsv == ["query\trank\tpercent\tscore\tdoc_id", f"{indexed / 'q.txt'}\t1\t39.3744\t1.77185\td1.txt"]


def test_query_from_stdin_from_index_and_several_files(indexed, runner):
    (indexed / "q2.txt").write_text("cherry date", "utf-8")
    result = runner.invoke(
        main,
        ["query", "-", str(indexed / "q2.txt"), "--doc", "d3.txt", "--index", str(indexed / "i"), "--format", "json"],
        input="apple banana",
    )
    data = json.loads(result.output)
    assert [r["query"] for r in data] == ["<stdin>", str(indexed / "q2.txt"), "d3.txt"]
    assert data[0]["matches"][0]["doc_id"] == "d1.txt"
    assert data[2]["matches"][0] == {
        "rank": 1, "percent": pytest.approx(100.0), "score": pytest.approx(data[2]["self_score"]), "doc_id": "d3.txt"
    }


def test_default_index_location_and_environment_variable(tmp_path, runner, monkeypatch):
    write_docs(tmp_path / "c", DOCS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CODERIV_INDEX", raising=False)
    assert runner.invoke(main, ["index", "c", "--workers", "1"]).exit_code == 0
    assert (tmp_path / ".coderiv" / "CURRENT").is_file()
    assert runner.invoke(main, ["query", "--doc", "d1.txt"]).exit_code == 0
    monkeypatch.setenv("CODERIV_INDEX", str(tmp_path / "elsewhere"))
    result = runner.invoke(main, ["query", "--doc", "d1.txt"])
    assert result.exit_code == 1 and f"no index at {tmp_path / 'elsewhere'}" in result.output


def test_info_reports_statistics(indexed, runner):
    result = runner.invoke(main, ["info", "--index", str(indexed / "i"), "--format", "json", "--verify"])
    info = json.loads(result.output)
    assert (info["documents"], info["distinct_terms"], info["postings"], info["verified"]) == (3, 4, 6, True)
    assert info["analysis"] == "stopping, no stemming"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "has no words after analysis"),
        (b"the and of", "has no words after analysis"),
        (b"\x00\x01\x02binary\x00", "is a binary file"),
    ],
)
def test_bad_query_files(indexed, runner, content, message):
    (indexed / "bad").write_bytes(content)
    result = runner.invoke(main, ["query", str(indexed / "bad"), "--index", str(indexed / "i")])
    assert result.exit_code == 1 and message in result.output
    assert "Traceback" not in result.output


def test_undecodable_query_is_used_with_a_warning(indexed, runner):
    (indexed / "latin1.txt").write_bytes("apple banana caf\xe9".encode("latin-1"))
    result = runner.invoke(main, ["query", str(indexed / "latin1.txt"), "--index", str(indexed / "i")])
    assert result.exit_code == 0 and "undecodable bytes replaced" in result.output


def test_missing_query_file_and_no_query(indexed, runner):
    result = runner.invoke(main, ["query", str(indexed / "nope.txt"), "--index", str(indexed / "i")])
    assert result.exit_code == 1 and "cannot read query" in result.output
    result = runner.invoke(main, ["query", "--index", str(indexed / "i")])
    assert result.exit_code == 1 and "give a query file" in result.output
    result = runner.invoke(main, ["query", "--doc", "zzz.txt", "--index", str(indexed / "i")])
    assert result.exit_code == 1 and "no document 'zzz.txt'" in result.output


def test_unknown_measure_exits_2_listing_the_measures(indexed, runner):
    result = runner.invoke(main, ["query", str(indexed / "q.txt"), "--index", str(indexed / "i"), "-m", "bm25"])
    assert result.exit_code == 2 and "'bm25' is not one of 'cosine', 'identity1'" in result.output


def test_query_analysed_differently_from_its_index_is_refused(indexed, runner):
    result = runner.invoke(main, ["query", str(indexed / "q.txt"), "--index", str(indexed / "i"), "--stem"])
    assert result.exit_code == 1
    assert "query analysis (stopping, stemming (english)) differs from the index's (stopping, no stemming)" in result.output


def test_missing_and_corrupt_index(indexed, runner, tmp_path):
    result = runner.invoke(main, ["query", str(indexed / "q.txt"), "--index", str(tmp_path / "none")])
    assert result.exit_code == 1 and "no index at" in result.output
    (indexed / "i" / "gen-000001" / "store-0" / "docs.npy").write_bytes(b"garbage")
    for command in (["query", str(indexed / "q.txt")], ["info"]):
        result = runner.invoke(main, [*command, "--index", str(indexed / "i")])
        assert result.exit_code == 1 and "damaged" in result.output and "Traceback" not in result.output


def test_index_reports_skipped_and_changed_files(indexed, runner):
    (indexed / "c" / "d2.txt").write_text("banana split", "utf-8")
    (indexed / "c" / "blank.txt").write_text("   \n", "utf-8")
    result = runner.invoke(main, ["index", str(indexed / "c"), "--index", str(indexed / "i"), "--workers", "1"])
    assert result.exit_code == 0
    assert "3 documents" in result.output and "changed 1" in result.output and "unchanged 2" in result.output
    assert "skipped blank.txt: empty" in result.output


def test_index_of_a_missing_folder(runner, tmp_path):
    result = runner.invoke(main, ["index", str(tmp_path / "missing"), "--index", str(tmp_path / "i")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_min_percent_keeps_only_matches_at_or_above_it(indexed, runner):
    # d1 scores 39.4% and d2 33.3% (see test_query_table_shows_absolute_percentages)
    args = ["query", str(indexed / "q.txt"), "--index", str(indexed / "i"), "--format", "tsv"]
    rows = runner.invoke(main, [*args, "--min-percent", "35"]).output.splitlines()[1:]
    assert [row.split("\t")[-1] for row in rows] == ["d1.txt"]
    rows = runner.invoke(main, [*args, "--min-percent", "33.3"]).output.splitlines()[1:]
    assert [row.split("\t")[-1] for row in rows] == ["d1.txt", "d2.txt"]
    assert runner.invoke(main, [*args, "--min-percent", "40"]).output.splitlines() == ["query\trank\tpercent\tscore\tdoc_id"]


def test_an_analysis_flag_not_given_keeps_the_index_setting(tmp_path, runner):
    write_docs(tmp_path / "c", DOCS)
    idx = str(tmp_path / "i")
    index = ["index", str(tmp_path / "c"), "--index", idx, "--workers", "1", "-q"]
    assert runner.invoke(main, [*index, "--no-stop", "--stem"]).exit_code == 0
    # --no-stem changes stemming only: stopping stays off (it used to come back on, the default)
    result = runner.invoke(main, [*index, "--no-stem"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "full rebuild of 3 documents: analysis changed from no stopping, stemming (english) to no stopping, no stemming"
    )
    info = json.loads(runner.invoke(main, ["info", "--index", idx, "--format", "json"]).output)
    assert info["analysis"] == "no stopping, no stemming"
    # no flag at all: an incremental update with the index's settings, nothing rebuilt
    result = runner.invoke(main, index)
    assert "full rebuild" not in result.output and "unchanged 3" in result.output


def test_a_full_rebuild_of_a_large_index_needs_rebuild(tmp_path, runner, monkeypatch):
    from coderiv.index import index as index_module

    monkeypatch.setattr(index_module, "CONFIRM_REBUILD_DOCS", 3)
    write_docs(tmp_path / "c", DOCS)
    idx = str(tmp_path / "i")
    index = ["index", str(tmp_path / "c"), "--index", idx, "--workers", "1", "-q"]
    assert runner.invoke(main, index).exit_code == 0
    result = runner.invoke(main, [*index, "--stem"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f"Error: analysis changed from stopping, no stemming to stopping, stemming (english): this re-analyses "
        f"all 3 documents of {idx}; add --rebuild to go ahead"
    )
    info = json.loads(runner.invoke(main, ["info", "--index", idx, "--format", "json"]).output)
    assert info["analysis"] == "stopping, no stemming"  # untouched
    result = runner.invoke(main, [*index, "--stem", "--rebuild"])
    assert result.exit_code == 0 and "full rebuild of 3 documents" in result.output
    assert json.loads(runner.invoke(main, ["info", "--index", idx, "--format", "json"]).output)["analysis"] == (
        "stopping, stemming (english)"
    )


def test_min_percent_alone_is_not_capped_by_the_default_top(tmp_path, runner):
    # twelve copies of one text: all at 100% under cosine, more than the default top 10
    docs = {f"copy{i:02d}.txt": "granite basalt obsidian pumice" for i in range(12)}
    write_docs(tmp_path / "c", {**docs, "other.txt": "granite violin cello viola"})
    idx = str(tmp_path / "i")
    assert runner.invoke(main, ["index", str(tmp_path / "c"), "--index", idx, "-q"]).exit_code == 0
    args = ["query", "--doc", "copy00.txt", "--index", idx, "-m", "cosine", "--min-percent", "30"]
    rows = runner.invoke(main, [*args, "--format", "tsv"]).output.splitlines()[1:]
    assert [row.split("\t")[-1] for row in rows] == [f"copy{i:02d}.txt" for i in range(12)]  # was 10
    # with --top as well: at most 5, and the output says that rows were cut
    out = runner.invoke(main, [*args, "-k", "5"]).output.splitlines()
    assert out[1] == "note: more than 5 documents reach 30%: only the top 5 are shown (without --top, every one is)"
    assert len(out) == 2 + 2 + 5
    data = json.loads(runner.invoke(main, [*args, "-k", "5", "--format", "json"]).output)
    assert data[0]["note"] == "more than 5 documents reach 30%: only the top 5 are shown (without --top, every one is)"
    assert len(data[0]["matches"]) == 5
    # nothing given: the top 10, no note
    data = json.loads(runner.invoke(main, ["query", "--doc", "copy00.txt", "--index", idx, "--format", "json"]).output)
    assert len(data[0]["matches"]) == 10 and data[0]["note"] is None


def test_query_a_folder_one_list_each_and_a_summary(indexed, runner):
    # the indexed folder itself, each document's own copy left out. identity5, N = 3:
    # d1 (self 3/1 + 3/2 = 4.5) finds d2 by banana: L = 1/(1 + ln 2) · 1.5 / 4.5 = 19.7%;
    # d2 (self 3) finds d1 by banana: L · 1.5 / 3 = 29.5%; d3 (self 4.5) finds d2 by cherry:
    # L · 1.5/(1 + |1 − 2|) / 4.5 = 9.8%
    folder = str(indexed / "c")
    result = runner.invoke(main, ["query", folder, "--index", str(indexed / "i"), "-k", "1", "--exclude-self"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith(f"{folder}/d1.txt: identity5, 2 of 2 distinct terms")
    assert lines[1] == "excluded: d1.txt"
    # two-word documents share no 5-word chunk: each best match is its ranked list's top, 0% by containment
    best = "best match (most of the query in it)"
    assert lines[-7:] == [
        "summary: 3 documents checked",
        "query" + " " * (len(folder) + 4) + f"{best}  containment:n=5  identity5",
        "-" * (len(folder) + 7) + "  " + "-" * len(best) + "  ---------------  ---------",
        f"{folder}/d1.txt  d2.txt" + " " * (len(best) - 6) + "             0.0%      19.7%",
        f"{folder}/d2.txt  d1.txt" + " " * (len(best) - 6) + "             0.0%      29.5%",
        f"{folder}/d3.txt  d2.txt" + " " * (len(best) - 6) + "             0.0%       9.8%",
        "containment:n=5: share of the query's 5-word chunks in the document; "
        "identity5: the whole-document measure of the ranked lists",
    ]
    # without --exclude-self each finds itself first, at 100% by both measures
    lines = runner.invoke(main, ["query", folder, "--index", str(indexed / "i"), "-k", "1"]).output.splitlines()
    assert [line.split() for line in lines[-4:-1]] == [
        [f"{folder}/d{k}.txt", f"d{k}.txt", "100.0%", "100.0%"] for k in (1, 2, 3)]


def test_query_an_archive_and_a_pattern_as_json_lines(indexed, runner):
    import io
    import tarfile

    archive = indexed / "subs.tar"
    with tarfile.open(archive, "w") as tar:
        for name, text in {"d2.txt": b"banana cherry", "blank.txt": b"  ", "new.txt": b"date"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    args = ["query", str(archive), str(indexed / "q*.txt"), "--index", str(indexed / "i"), "-k", "1", "--exclude-self"]
    result = runner.invoke(main, [*args, "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1] == f"skipped {archive}:blank.txt: empty"
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert [(r["query"], r["own_document"], r["excluded"], r["best_match"], r["skipped"]) for r in records] == [
        (f"{archive}:d2.txt", "d2.txt", ["d2.txt"], "d1.txt", None),
        (f"{archive}:blank.txt", None, [], None, "empty"),
        (f"{archive}:new.txt", None, [], "d3.txt", None),
        (str(indexed / "q.txt"), None, [], "d1.txt", None),
    ]
    assert records[0]["best_percent"] == 29.530805  # 1/(1 + ln 2) · 1.5/3, as in the folder test above
    assert records[0]["result"]["matches"][0]["rank"] == 1


def test_a_folder_used_to_be_refused(indexed, runner):
    # "coderiv query submissions/" failed with "… is a directory"; a missing pattern is one line
    assert runner.invoke(main, ["query", str(indexed / "c"), "--index", str(indexed / "i")]).exit_code == 0
    result = runner.invoke(main, ["query", str(indexed / "*.nothing"), "--index", str(indexed / "i")])
    assert result.exit_code == 1 and f"no file matches {indexed / '*.nothing'}" in result.output


def test_exclude_versions_leaves_out_the_query_group(tmp_path, runner):
    # v1, v2, v3: versions of one text (mutual chunk similarity well above 50%); far.txt quotes
    # a passage of it. --exclude-versions leaves out v1 itself and its group, not the quote.
    base = " ".join(f"w{i}" for i in range(60))
    docs = {
        "v1.txt": base, "v2.txt": base + " w60 w61", "v3.txt": "w99 " + base,
        "far.txt": " ".join(f"x{i}" for i in range(60)) + " " + " ".join(f"w{i}" for i in range(10)),
    }
    write_docs(tmp_path / "c", docs)
    idx = str(tmp_path / "i")
    assert runner.invoke(main, ["index", str(tmp_path / "c"), "--index", idx, "-q"]).exit_code == 0
    args = ["query", "--doc", "v1.txt", "--index", idx, "-m", "cosine", "--format", "json"]
    result = runner.invoke(main, [*args, "--exclude-versions"])
    assert result.exit_code == 1 and "no pair table for method 'chunks'" in result.output
    assert runner.invoke(main, ["pairs", "--index", idx, "-q"]).exit_code == 0
    data = json.loads(runner.invoke(main, [*args, "--exclude-versions"]).output)
    assert data[0]["excluded"] == ["v1.txt", "v2.txt", "v3.txt"]
    assert [m["doc_id"] for m in data[0]["matches"]] == ["far.txt"]
    data = json.loads(runner.invoke(main, args).output)
    # (v3 adds one word to v1, v2 two: v3 is the closer under cosine)
    assert [m["doc_id"] for m in data[0]["matches"]] == ["v1.txt", "v3.txt", "v2.txt", "far.txt"]


def test_query_table_marks_inner_above_100(tmp_path, runner):
    # inner: noise.txt holds alpha and beta three times each: (1 + ln 3) · the self-score, 209.9%
    write_docs(tmp_path / "c", {"q.txt": "alpha beta", "noise.txt": "alpha alpha alpha beta beta beta", "z.txt": "gamma"})
    idx = str(tmp_path / "i")
    assert runner.invoke(main, ["index", str(tmp_path / "c"), "--index", idx, "-q"]).exit_code == 0
    lines = runner.invoke(main, ["query", "--doc", "q.txt", "--index", idx, "-m", "inner"]).output.splitlines()
    assert [line.split()[:2] + line.split()[3:] for line in lines[3:5]] == [["1", "209.9%*", "noise.txt"], ["2", "100.0%", "q.txt"]]
    assert lines[5] == (
        "* above 100%: inner is not ideal: a document holding the query's terms more often than the query does "
        "scores above the query itself (docs/measures.md)"
    )
    assert "above 100%" not in runner.invoke(main, ["query", "--doc", "q.txt", "--index", idx]).output
