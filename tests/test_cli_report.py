"""``coderiv report``: HTML to a file, JSON to standard output, every exclusion flag, and bad
input as one line with a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coderiv.cli.main import main
from tests.support.report_corpus import build, para

A1, B2, OWN = para("a", 1), para("b", 2), para("own", 0)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli-report")
    build(root)
    text = f"{A1}\n\n{OWN}\n\n“{B2}” (Smith 2004)\n\n{para('c', 3)}\n\nReferences\n\nSmith, J. (2004). On words. Publisher.\n"
    (root / "q.txt").write_text(text, "utf-8")  # 89 words: 20 + 20 + 20 quoted + 2 + 20 + 1 + 6
    (root / "sheet.txt").write_text(A1, "utf-8")
    return root


def run_json(runner, indexed: Path, *flags: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    result = runner.invoke(main, ["report", str(indexed / "q.txt"), "--index", str(indexed / "idx"), "--format", "json", *flags])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_json_with_default_exclusions(runner, indexed: Path) -> None:  # type: ignore[no-untyped-def]
    data = run_json(runner, indexed)
    assert data["total_words"] == 89 and data["covered_words"] == 40  # a's and c's paragraphs; b's is quoted and cited
    assert data["excluded_words"] == {"quote": 20, "bibliography": 7, "template": 0, "common": 0, "small": 0}
    # c holds A1 and c3 (more of the query by containment, so it is tried first); a adds nothing more
    assert [(s["doc_id"], s["credited_words"]) for s in data["sources"]] == [("c.txt", 40), ("a.txt", 0), ("b.txt", 0)]  # b: quoted only


def test_flags_turn_exclusions_off_and_on(runner, indexed: Path) -> None:  # type: ignore[no-untyped-def]
    data = run_json(runner, indexed, "--no-quotes", "--no-bibliography", "--measure", "none")
    assert data["covered_words"] == 60
    assert data["searches"] == ["containment:n=5", "containment:n=5 cover", "cosine windows"]  # no whole-document ranking
    data = run_json(runner, indexed, "--no-quotes", "--exclude-template", str(indexed / "sheet.txt"))
    assert data["covered_words"] == 40 and data["excluded_words"]["template"] == 20
    assert data["options"]["templates"] == [str(indexed / "sheet.txt")]


def test_html_to_a_file(runner, indexed: Path) -> None:  # type: ignore[no-untyped-def]
    out = indexed / "report.html"
    result = runner.invoke(main, ["report", str(indexed / "q.txt"), "--index", str(indexed / "idx"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{out}: 44.9% of {indexed / 'q.txt'}'s 89 words found in 3 source(s)" in result.output
    assert "\n".join([
        "  1. 44.9% c.txt (2 passages, 2 verbatim)", "  2. 0.0% a.txt (1 passages, 1 verbatim)", "  3. 0.0% b.txt (0 passages, 0 verbatim)",
    ]) in result.output
    html = out.read_text("utf-8")
    assert html.startswith("<!DOCTYPE html>") and '<div class="overall" id="overall">44.9%' in html
    # the saved page names files, never the examiner's folders (issue 28 item 7)
    assert str(indexed) not in html and "q.txt" in html


@pytest.mark.parametrize("args, message", [
    (["missing.txt"], "cannot read query missing.txt"),
    (["EMPTY"], "has no words after analysis"),
    (["EMPTY", "--exclude-template", "gone.txt"], "cannot read template gone.txt"),
])
def test_bad_input_is_one_line(runner, indexed: Path, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    (indexed / "empty.txt").write_text("... !!!", "utf-8")
    args = [str(indexed / "empty.txt") if a == "EMPTY" else a for a in args]
    result = runner.invoke(main, ["report", *args, "--index", str(indexed / "idx")])
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_pan_format_names_the_credited_source_of_each_passage(runner, indexed: Path) -> None:  # type: ignore[no-untyped-def]
    from coderiv.overlap.align.pan_format import parse_xml

    result = runner.invoke(main, ["report", str(indexed / "q.txt"), "--index", str(indexed / "idx"), "--format", "pan", "--no-quotes"])
    assert result.exit_code == 0, result.output
    text = (indexed / "q.txt").read_text("utf-8")
    features = parse_xml(result.stdout, "report")
    a1, b2, c3 = para("a", 1), para("b", 2), para("c", 3)
    # one detection per credited passage, as the report credits them: A1 to c (a holds it too,
    # named beside it, credited nothing: issue 43), B2 to b, c3 to c
    assert [(f.source_reference, f.this_offset, f.this_length, f.also_in) for f in features] == [
        ("c.txt", 0, len(a1), ("a.txt",)),
        ("b.txt", text.index(b2), len(b2) + 1, ()),  # with the closing quote after its full stop
        ("c.txt", text.index(c3), len(c3), ()),
    ]
    assert '<version reference="a.txt" />' in result.stdout
    assert {f.this_reference for f in features} == {"q.txt"}
