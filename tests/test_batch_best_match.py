"""A batch's best match is the document that holds the most of each query (issue 43): a thesis
that copies a fifth of a long guide, and whose own words a short unrelated note happens to use
too, finds the note first by identity5 (a whole-document measure) and the guide by containment.
The summary names the guide, with both figures, each column named by its measure."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from coderiv.cli.main import main
from tests.support.files import write_docs


def words(tag: str, n: int) -> list[str]:
    return [f"{tag}{k}" for k in range(n)]


def collection() -> tuple[dict[str, str], dict[str, str]]:
    """Two theses (80 own words + 20 copied from a 2,000-word guide each), the guides, and two
    notes that hold each thesis's own words in reverse order (every term, no 5-word chunk)."""
    docs, theses = {}, {}
    for name in ("a", "b"):
        guide = words(f"{name}g", 2000)
        own = words(f"{name}own", 80)
        copied = guide[1000:1020]
        docs[f"guide-{name}.txt"] = " ".join(guide)
        docs[f"note-{name}.txt"] = " ".join(reversed(own))
        theses[f"thesis-{name}.txt"] = " ".join(own + copied)
    return docs, theses


def test_the_summary_names_the_source_holding_the_most_of_each_thesis(runner: CliRunner, tmp_path: Path) -> None:
    docs, theses = collection()
    write_docs(tmp_path / "docs", docs)
    write_docs(tmp_path / "theses", theses)
    idx = str(tmp_path / "idx")
    assert runner.invoke(main, ["index", str(tmp_path / "docs"), "--index", idx, "--report-ready", "-q"]).exit_code == 0
    result = runner.invoke(main, ["query", str(tmp_path / "theses"), "--index", idx, "-k", "1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # each ranked list's top by identity5 is the note: all 80 own words, a length close to the thesis
    assert [line.split()[-1] for line in lines if line.startswith("   1 ")] == ["note-a.txt", "note-b.txt"]
    summary = lines[lines.index("summary: 2 documents checked") + 1 :]
    assert summary[0].split() == ["query", "best", "match", "(most", "of", "the", "query", "in", "it)", "containment:n=5",
                                  "identity5"]
    # 100 words give 96 five-word chunks; the 16 inside the copied 20 words are the guide's: 16.7%
    rows = [line.split() for line in summary[2:4]]
    assert [row[:3] for row in rows] == [
        [str(tmp_path / "theses" / "thesis-a.txt"), "guide-a.txt", "16.7%"],
        [str(tmp_path / "theses" / "thesis-b.txt"), "guide-b.txt", "16.7%"],
    ]
    assert float(rows[0][3].rstrip("%")) < 16.7  # its whole-document figure, beside it (the long guide scores low)
    assert summary[4] == ("containment:n=5: share of the query's 5-word chunks in the document; "
                          "identity5: the whole-document measure of the ranked lists")
    records = [json.loads(line) for line in runner.invoke(
        main, ["query", str(tmp_path / "theses"), "--index", idx, "-k", "1", "--format", "jsonl"]).output.splitlines()]
    assert [(r["best_match"], r["best_measure"], round(r["best_percent"], 4), r["whole_document_measure"], r["top_ranked"])
            for r in records] == [
        ("guide-a.txt", "containment:n=5", round(100 * 16 / 96, 4), "identity5", "note-a.txt"),
        ("guide-b.txt", "containment:n=5", round(100 * 16 / 96, 4), "identity5", "note-b.txt"),
    ]
    assert f"{records[0]['whole_document_percent']:.1f}%" == rows[0][3]
    # a method that measures the share already: its own top, one figure, the column named by it
    own = runner.invoke(main, ["query", str(tmp_path / "theses"), "--index", idx, "-k", "1", "--method", "containment"])
    assert [line.split()[1:] for line in own.output.splitlines()[-4:] if not line.startswith("-")] == [
        ["best", "match", "containment:n=5"], ["guide-a.txt", "16.7%"], ["guide-b.txt", "16.7%"]]
