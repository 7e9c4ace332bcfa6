"""The exact-overlap commands: compare, generate, query --verify, evaluate --plagiarism."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from coderiv.cli.main import main
from tests.support.files import write_docs

SHARED = "Configuration files are read from the project folder before any plugin is loaded."
QUERY = SHARED + "\n\nEvery option can be overridden on the command line with a flag of the same name."


def test_compare_paper_example_table(runner: CliRunner, tmp_path: Path) -> None:
    write_docs(tmp_path, {"a.txt": "uma rosa é uma rosa é uma rosa.", "b.txt": "nunca uma rosa é uma rosa é uma violeta."})
    out = runner.invoke(main, ["compare", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-m", "patricia", "--threshold", "20"])
    assert out.exit_code == 0, out.output
    assert "patricia   83.9%   65.0%" in out.output  # 26/31 and 26/40
    assert "1 exact passages of 20+ characters shared" in out.output
    assert "uma rosa é uma rosa é uma" in out.output


def test_compare_json_passage_offsets(runner: CliRunner, tmp_path: Path) -> None:
    write_docs(tmp_path, {"a.txt": QUERY, "b.txt": "Preface.\n\n" + SHARED})
    out = runner.invoke(main, ["compare", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    (p,) = data["passages"]
    assert (p["a_start"], p["a_end"], p["b_start"], p["b_end"]) == (0, len(SHARED), 10, 10 + len(SHARED))
    assert [m["method"] for m in data["methods"]][:2] == ["shingles w=4", "containment w=4"]


def test_compare_bad_input(runner: CliRunner, tmp_path: Path) -> None:
    write_docs(tmp_path, {"a.txt": "text"})
    out = runner.invoke(main, ["compare", str(tmp_path / "a.txt"), str(tmp_path / "missing.txt")])
    assert out.exit_code == 1
    assert "cannot read" in out.output and "Traceback" not in out.output
    out = runner.invoke(main, ["compare", "-", "-"], input="x")
    assert out.exit_code == 1 and "only one of A and B" in out.output


def test_query_verify(runner: CliRunner, tmp_path: Path) -> None:
    shuffled = " ".join(sorted(QUERY.replace(".", "").split(), key=str.lower))
    folder = write_docs(tmp_path / "docs", {"query.txt": QUERY, "copy.txt": "Preface.\n\n" + SHARED, "shuffled.txt": shuffled})
    index = str(tmp_path / "idx")
    assert runner.invoke(main, ["index", str(folder), "--index", index, "-q"]).exit_code == 0
    out = runner.invoke(main, ["query", "--doc", "query.txt", "--index", index, "--verify", "--format", "json"])
    assert out.exit_code == 0, out.output
    matches = {m["doc_id"]: m for m in json.loads(out.output)[0]["matches"]}
    assert matches["query.txt"]["verified"] == 100.0
    assert matches["shuffled.txt"]["verified"] == 0.0 and matches["shuffled.txt"]["percent"] > 20
    # the verified share counts the query's words inside aligned passages (issue 24): 13 of 29
    assert matches["copy.txt"]["verified"] == round(100 * 13 / 29, 6)
    table = runner.invoke(main, ["query", str(folder / "query.txt"), "--index", index, "--verify"])
    assert table.exit_code == 0, table.output
    assert "verified by aligned passages" in table.output
    assert f"copy.txt [10:{10 + len(SHARED)}] = query [0:{len(SHARED)}]" in table.output


def test_generate_then_evaluate_plagiarism(runner: CliRunner, tmp_path: Path) -> None:
    docs = {
        f"d{j}.txt": "\n\n".join(" ".join(f"d{j}p{k}w{i}" for i in range(15)) for k in range(4)) for j in range(5)
    }
    folder = write_docs(tmp_path / "docs", docs)
    cases = tmp_path / "cases.jsonl"
    out = runner.invoke(main, ["generate", str(folder), "--cases", "2", "--seed", "3", "-o", str(cases)])
    assert out.exit_code == 0, out.output
    lines = cases.read_text("utf-8").splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["case_id"] == "G001"
    out = runner.invoke(main, [
        "evaluate", "--plagiarism", str(cases), "--collection", str(folder), "-m", "shingles:w=2,matching", "--format", "json",
    ])
    assert out.exit_code == 0, out.output
    rows = {r["method"]: r for r in json.loads(out.stdout)}
    assert out.stderr == "8 (case, donor) pairs of cases.jsonl evaluated by 2 methods\n"  # said when piped
    # Whole 15-word paragraphs of distinct words, 4 per donor (60 words, 59 bigrams). A donor
    # with m paragraphs used expects 15m/60; the case holds their 14m inner bigrams (and
    # perhaps a join of two of its paragraphs, if shuffled into donor order): at least 14m/59.
    # Every donor gives m <= 2 paragraphs, so each difference is below 100·2·(15/60 − 14/59).
    assert rows["shingles:w=2"]["pairs"] == 8
    assert 0 < rows["shingles:w=2"]["mean_abs_diff"] <= 100 * 2 * (15 / 60 - 14 / 59)
    out = runner.invoke(main, ["evaluate", "--plagiarism", str(cases), "--collection", str(folder), "-m", "bogus"])
    assert out.exit_code == 1 and "plagiarism method must be one of" in out.output


def test_fingerprint_query_verify(runner: CliRunner, tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "docs", {"query.txt": QUERY, "copy.txt": "Preface.\n\n" + SHARED, "other.txt": "Zebra giraffe."})
    index = str(tmp_path / "idx")
    assert runner.invoke(main, ["index", str(folder), "--index", index, "-q", "--fingerprint", "full:g=3"]).exit_code == 0
    out = runner.invoke(main, ["query", "--doc", "query.txt", "--index", index, "--method", "fingerprint", "--verify", "--format", "json"])
    assert out.exit_code == 0, out.output
    matches = {m["doc_id"]: m for m in json.loads(out.output)[0]["matches"]}
    assert set(matches) == {"query.txt", "copy.txt"}
    assert matches["query.txt"]["verified"] == 100.0
    assert matches["copy.txt"]["verified"] == round(100 * 13 / 29, 6)  # words in aligned passages (issue 24)
    assert matches["copy.txt"]["passages"][0]["b_start"] == 10


def test_generate_from_the_indexed_collection(runner: CliRunner, tmp_path: Path) -> None:
    docs = {f"d{j}.txt": "\n\n".join(" ".join(f"d{j}p{k}w{i}" for i in range(15)) for k in range(4)) for j in range(4)}
    folder = write_docs(tmp_path / "docs", docs)
    index = str(tmp_path / "idx")
    assert runner.invoke(main, ["index", str(folder), "--index", index, "-q"]).exit_code == 0
    out = runner.invoke(main, ["generate", "--index", index, "--cases", "1"])
    assert out.exit_code == 0, out.output
    case = json.loads(out.stdout)
    assert sorted(s["doc_id"] for s in case["sources"]) == sorted(docs)  # 4 donors: all of them
    assert out.stderr == f"1 cases written to standard output (seed 0; 4 of the 4 documents of {folder} read)\n"
    out = runner.invoke(main, ["generate", "--index", index, "--sources", "4"])
    assert out.exit_code == 1 and "only 4 documents" in out.output


def test_compare_refuses_a_document_without_words(tmp_path):
    from click.testing import CliRunner

    from coderiv.cli.main import main

    (tmp_path / "empty.txt").write_text("  \n", "utf-8")
    (tmp_path / "text.txt").write_text("some real words here", "utf-8")
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "empty.txt"), str(tmp_path / "text.txt")])
    assert result.exit_code == 1 and "empty.txt has no words: nothing to compare" in result.output


def test_compare_marks_patricia_above_100_and_resemblance_once(runner: CliRunner, tmp_path: Path) -> None:
    # B holds A twice. Patricia scans B with A as the suspicious document: both copies match in
    # full, so the counter is 2 · |A| and "B in A" is 200%, marked and explained under the table.
    words = "one two three four five six seven eight nine ten eleven twelve"
    write_docs(tmp_path, {"a.txt": words, "b.txt": f"{words}. And again: {words}"})
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    out = runner.invoke(main, ["compare", a, b, "-m", "patricia", "-m", "shingles"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    # A = 62 characters in B's 137: 45.3%; the 9 shingles of A are 9 of B's 12 distinct: 75%
    assert lines[2:7] == [
        "method         A in B       B in A",
        "------------  -------  -----------",
        "patricia      200.0%*        45.3%",
        "shingles w=4    75.0%  (symmetric)",
        "* above 100%: patricia counts every character of the scanned text inside a match, so a text that "
        "holds passages of the other more than once passes 100% (paper 001's counter; docs/overlap.md)",
    ]
    data = json.loads(runner.invoke(main, ["compare", a, b, "-m", "patricia", "-m", "shingles", "--format", "json"]).output)
    assert data["methods"] == [
        {"method": "patricia", "a_in_b": 200.0, "b_in_a": 45.255474},
        {"method": "shingles w=4", "symmetric": True, "percent": 75.0},
    ]


def test_evaluate_plagiarism_per_query_gives_each_pair(runner: CliRunner, tmp_path: Path) -> None:
    # d0: 4 paragraphs of 15 distinct words (60 words, 59 bigrams). The case is its paragraph 0
    # alone: expected 25%; shingles:w=2 finds the paragraph's 14 bigrams of the donor's 59.
    paragraphs = [" ".join(f"p{k}w{i}" for i in range(15)) for k in range(4)]
    folder = write_docs(tmp_path / "docs", {"d0.txt": "\n\n".join(paragraphs)})
    case = {"case_id": "C1", "text": paragraphs[0], "sources": [{"doc_id": "d0.txt", "expected_percent": 25.0}]}
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(case) + "\n", "utf-8")
    base = ["evaluate", "--plagiarism", str(cases), "--collection", str(folder), "-m", "shingles:w=2"]
    out = runner.invoke(main, [*base, "--per-query", "--format", "tsv"])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == [
        "method\tcase\tdoc_id\texpected\tobtained\t|diff|",
        "shingles:w=2\tC1\td0.txt\t25.00\t23.73\t1.27",  # 100 · 14/59 = 23.73
    ]
    data = json.loads(runner.invoke(main, [*base, "--per-query", "--format", "json"]).stdout)
    assert data[0]["per_pair"] == [
        {"case_id": "C1", "doc_id": "d0.txt", "expected": 25.0, "obtained": 23.728814, "abs_diff": 1.271186}
    ]
    assert "per_pair" not in json.loads(runner.invoke(main, [*base, "--format", "json"]).stdout)[0]


def test_compare_passage_limit_note_and_error(runner: CliRunner, tmp_path: Path) -> None:
    write_docs(tmp_path, {"a.txt": " ".join(f"alpha{i}" for i in range(100)), "b.txt": " ".join(f"alpha{i}" for i in range(60))})
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    out = runner.invoke(main, ["compare", a, b, "--format", "tsv", "--max-passage-pairs", "24"])
    assert out.exit_code == 0
    assert "note: passages: these texts make 25 passage pairs, more than the limit of 24" in out.stderr
    assert "passages\t" not in out.stdout and "chunks n=5\t" in out.stdout
    out = runner.invoke(main, ["compare", a, b, "-m", "passages", "--max-passage-pairs", "24"])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert out.output.startswith("Error: passages: these texts make 25 passage pairs")
    out = runner.invoke(main, ["compare", a, b, "-m", "passages", "--format", "json", "--max-passage-pairs", "25"])
    assert out.exit_code == 0 and json.loads(out.stdout)["methods"][0]["method"] == "passages"


def test_compare_refuses_texts_past_the_character_limit(runner: CliRunner, tmp_path: Path) -> None:
    write_docs(tmp_path, {"a.txt": "one two three four", "b.txt": "five six seven"})  # 18 + 14 characters
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    out = runner.invoke(main, ["compare", a, b, "--max-chars", "31"])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert out.output.startswith("Error: A and B hold 32 characters together, more than the limit of 31")
    assert "raise --max-chars" in out.output
    assert runner.invoke(main, ["compare", a, b, "--max-chars", "32"]).exit_code == 0


WORDS60 = [f"w{i}" for i in range(60)]
EDITED_A = " ".join(f"own{i}" for i in range(10)) + "\n\n" + " ".join("zz" if i == 30 else w for i, w in enumerate(WORDS60)) + "."
SOURCE_B = "Intro here.\n\n" + " ".join(WORDS60) + "."


def test_compare_lists_aligned_passages_and_writes_pan(runner: CliRunner, tmp_path: Path) -> None:
    from coderiv.overlap.align.pan_format import parse_xml

    write_docs(tmp_path, {"a.txt": EDITED_A, "b.txt": SOURCE_B})
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    a_start, b_start = EDITED_A.index("w0"), SOURCE_B.index("w0")
    data = json.loads(runner.invoke(main, ["compare", a, b, "--format", "json"]).output)
    (p,) = data["aligned_passages"]  # one passage across the replaced word w30
    assert (p["a_start"], p["a_end"], p["b_start"], p["b_end"]) == (a_start, len(EDITED_A), b_start, len(SOURCE_B))
    assert (p["a_words"], p["same_words"], p["identical_share"]) == (60, 59, round(59 / 60, 4))
    assert {"method": "aligned", "a_in_b": round(100 * 60 / 70, 6), "b_in_a": round(100 * 60 / 62, 6)} in data["methods"]
    text = runner.invoke(main, ["compare", a, b]).output
    assert "1 aligned passages (0 verbatim; across changed, inserted and deleted words)" in text and "98.3%" in text
    out = runner.invoke(main, ["compare", a, b, "--format", "pan"])
    assert out.exit_code == 0, out.output
    (feature,) = parse_xml(out.output, "compare")
    assert (feature.this_reference, feature.source_reference) == ("a.txt", "b.txt")
    assert (feature.this_offset, feature.this_end, feature.source_offset, feature.source_end) == (
        a_start, len(EDITED_A), b_start, len(SOURCE_B))
    assert feature.obfuscation == "edited"  # 59 of 60 words identical: its kind of reuse, as align and report write it


def test_generate_pan_cases(runner: CliRunner, tmp_path: Path) -> None:
    docs = {f"p{j}/d.txt": "\n\n".join(" ".join(f"d{j}p{k}w{i}" for i in range(60)) for k in range(4)) for j in range(4)}
    folder = write_docs(tmp_path / "docs", docs)
    args = ["--format", "pan", "--obfuscation", "high", "--cases", "2", "-o", str(tmp_path / "pan")]
    out = runner.invoke(main, ["generate", str(folder), *args])
    assert out.exit_code == 0, out.output
    assert "2 high pairs written to" in out.output
    assert len((tmp_path / "pan/pairs").read_text("utf-8").splitlines()) == 2
    assert len(list((tmp_path / "pan/truth").glob("*.xml"))) == 2
    refused = runner.invoke(main, ["generate", str(folder), "--format", "pan"])
    assert refused.exit_code == 1 and "give it with --output DIR" in refused.output


def test_compare_reads_the_texts_as_the_index_does(runner: CliRunner, tmp_path: Path) -> None:
    # 'the cat sat on the mat' against 'a cat sat on a mat': with stopwords out both are
    # 'cat sat mat' (2-word shingles all shared); kept, 2 of the 5 shingles are shared
    write_docs(tmp_path / "docs", {"a.txt": "the cat sat on the mat\n", "b.txt": "a cat sat on a mat\n"})
    assert runner.invoke(main, ["index", str(tmp_path / "docs"), "--index", str(tmp_path / "idx"), "--no-stop"]).exit_code == 0
    a, b = str(tmp_path / "docs" / "a.txt"), str(tmp_path / "docs" / "b.txt")

    def row(*flags: str) -> list[str]:
        out = runner.invoke(main, ["compare", a, b, "-m", "containment", "-w", "2", *flags])
        assert out.exit_code == 0, out.output
        return next(line.split() for line in out.output.splitlines() if line.startswith("containment"))

    assert row() == ["containment", "w=2", "100.0%", "100.0%"]  # the defaults: stopwords out
    assert row("--index", str(tmp_path / "idx")) == ["containment", "w=2", "40.0%", "40.0%"]  # as the index: kept
    assert row("--index", str(tmp_path / "idx"), "--stop") == ["containment", "w=2", "100.0%", "100.0%"]  # a flag wins
    missing = runner.invoke(main, ["compare", a, b, "--index", str(tmp_path / "nothere")])
    assert missing.exit_code == 1 and "no index at" in missing.output and "Traceback" not in missing.output
