"""Containment search (SPEC §6 chunk similarity over the index's chunk store): hand-counted
shares, asymmetry, the self-score rule, and ``coderiv query --method containment``."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import pytest

from coderiv.cli.main import main
from coderiv.errors import CoderivError
from coderiv.index.builder.stores import REPORT_READY_HINT
from coderiv.index.index import Index
from coderiv.progress import Counter
from coderiv.ranking.containment import ContainmentSearcher, chunk_store_spec, open_with_chunks
from coderiv.ranking.protocol import DocumentSearcher
from tests.support.files import write_docs

SEVEN = "alpha bravo charlie delta echo foxtrot golf"
QUERY = SEVEN + " kilo lima mike"  # 10 terms: 6 five-word chunks, the first 3 inside SEVEN
DOCS = {
    "a.txt": SEVEN + " hotel india juliet",  # holds chunks 0, 1, 2 of the query: 3/6
    "b.txt": "zulu yankee " + QUERY + " xray",  # holds the whole query: 6/6
    "c.txt": "alpha bravo charlie delta echo",  # one chunk, wholly inside the query: 1/6
    "d.txt": "nothing shared whatsoever here today",
    "e.txt": "echo foxtrot golf kilo lima mike",  # chunks 4 and 5 of the query: 2/6
}


@pytest.fixture
def index(tmp_path: Path) -> Index:
    write_docs(tmp_path / "docs", DOCS)
    Index.update_from(tmp_path / "docs", tmp_path / "idx", workers=1)
    return open_with_chunks(tmp_path / "idx", workers=1)


def test_share_of_the_query_found_in_each_document(index: Index) -> None:
    searcher = ContainmentSearcher(index)
    prepared = searcher.prepare(QUERY)
    assert (len(prepared.keys), prepared.length) == (6, 10)
    result = searcher.rank(prepared, top=None, label="q")
    assert [(m.doc_id, m.score, m.percent) for m in result.matches] == [
        ("b.txt", 6.0, 100.0), ("a.txt", 3.0, 50.0), ("e.txt", 2.0, pytest.approx(100 / 3)), ("c.txt", 1.0, pytest.approx(100 / 6)),
    ]
    assert (result.measure, result.self_score, result.matched_terms, result.query_terms) == ("containment:n=5", 6.0, 6, 6)
    assert searcher.percentages(prepared) == pytest.approx(np.array([50.0, 100.0, 100 / 6, 0.0, 100 / 3]))
    assert [m.doc_id for m in searcher.rank(prepared, top=3, min_percent=50.0).matches] == ["b.txt", "a.txt"]


def test_cover_names_each_source_once(tmp_path: Path) -> None:
    write_docs(tmp_path / "docs", {k: v for k, v in DOCS.items() if k != "b.txt"})
    Index.update_from(tmp_path / "docs", tmp_path / "idx", stores=[chunk_store_spec()], workers=1)
    searcher = ContainmentSearcher(Index.open(tmp_path / "idx"))
    prepared = searcher.prepare(QUERY)
    assert [m.doc_id for m in searcher.rank(prepared, top=3).matches] == ["a.txt", "e.txt", "c.txt"]
    # c's one chunk is a's chunk 0: it adds nothing once a is taken
    assert searcher.cover(prepared, top=3) == [("a.txt", 3), ("e.txt", 2)]
    assert searcher.cover(prepared, top=1) == [("a.txt", 3)]
    assert searcher.cover(searcher.prepare("zulu"), top=3) == []


def test_asymmetric_a_short_document_wholly_inside_the_query(index: Index) -> None:
    searcher = ContainmentSearcher(index)
    as_query = searcher.rank(searcher.prepare_doc("c.txt"), top=None)
    assert [(m.doc_id, m.percent) for m in as_query.matches] == [("a.txt", 100.0), ("b.txt", 100.0), ("c.txt", 100.0)]


def test_a_copy_of_the_query_scores_100_and_nothing_more(index: Index) -> None:
    searcher = ContainmentSearcher(index)
    for doc_id in DOCS:
        percentages = searcher.percentages(searcher.prepare_doc(doc_id))
        assert percentages[index.doc_numbers[doc_id]] == pytest.approx(100.0) or doc_id == "d.txt"
        assert percentages.max() <= 100.0


def test_implements_the_searcher_protocol(index: Index) -> None:
    assert isinstance(ContainmentSearcher(index), DocumentSearcher)
    assert ContainmentSearcher(index).unit == "chunks"


def test_an_index_without_a_chunk_store(tmp_path: Path) -> None:
    write_docs(tmp_path / "docs", DOCS)
    Index.update_from(tmp_path / "docs", tmp_path / "idx", workers=1)
    with pytest.raises(CoderivError, match="no chunks:bits=32,n=5 store"):
        ContainmentSearcher(Index.open(tmp_path / "idx"))
    said: list[str] = []
    index = open_with_chunks(tmp_path / "idx", announce=said.append, workers=1)
    assert chunk_store_spec().name in index.specs
    assert said == [f"adding store chunks:bits=32,n=5 to the index (reading {index.source} again); {REPORT_READY_HINT}"]
    assert open_with_chunks(tmp_path / "idx").generation == index.generation  # present: nothing rewritten


def test_cli_query_method_containment(tmp_path: Path, runner) -> None:  # type: ignore[no-untyped-def]
    write_docs(tmp_path / "docs", DOCS)
    (tmp_path / "q.txt").write_text(QUERY, "utf-8")
    assert runner.invoke(main, ["index", str(tmp_path / "docs"), "--index", str(tmp_path / "idx"), "--workers", "1"]).exit_code == 0
    result = runner.invoke(main, ["query", str(tmp_path / "q.txt"), "--index", str(tmp_path / "idx"), "--method", "containment"])
    assert result.exit_code == 0, result.output
    said, *lines = result.output.splitlines()
    assert said == (  # said on stderr, with the flag that avoids it
        f"adding store {chunk_store_spec().name} to the index (reading {tmp_path / 'docs'} again); {REPORT_READY_HINT}"
    )
    assert chunk_store_spec().name in Index.open(tmp_path / "idx").specs  # added on first use
    assert "containment:n=5, 6 of 6 distinct chunks in the collection, self-score 6 = 100%" in lines[0]
    assert [line.split() for line in lines[3:]] == [
        ["1", "100.0%", "6", "b.txt"], ["2", "50.0%", "3", "a.txt"], ["3", "33.3%", "2", "e.txt"],
        ["4", "16.7%", "1", "c.txt"],
    ]


def test_evaluable_as_a_method(index: Index) -> None:
    from coderiv.evaluation.methods import get_method

    percentages = get_method("containment")(index)
    assert percentages("c.txt").tolist() == pytest.approx([100.0, 100.0, 100.0, 0.0, 0.0])


class RecordingBar(Counter):
    """A progress bar that records what each command's store building tells it."""

    made: list[RecordingBar] = []

    def __init__(self, quiet: bool, desc: str) -> None:
        super().__init__()
        self.desc = desc
        RecordingBar.made.append(self)

    def echo(self, text: str = "", err: bool = False) -> None:
        click.echo(text, err=err)

    def __enter__(self) -> RecordingBar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.mark.parametrize("command, module", [
    (["query", "{q}", "--method", "containment"], "coderiv.cli.query"),
    (["report", "{q}", "--format", "json"], "coderiv.cli.report"),
    (["pairs", "--method", "chunks"], "coderiv.cli.pairs"),
])
def test_every_command_that_adds_a_store_says_so_and_shows_progress(
    tmp_path: Path, runner, monkeypatch: pytest.MonkeyPatch, command: list[str], module: str,  # type: ignore[no-untyped-def]
) -> None:
    """Issue 28 item 2: the first containment query (like report and pairs) re-reads the whole
    collection; it says so in one exact line and its bar follows every byte of the source."""
    write_docs(tmp_path / "docs", DOCS)
    (tmp_path / "q.txt").write_text(QUERY, "utf-8")
    assert runner.invoke(main, ["index", str(tmp_path / "docs"), "--index", str(tmp_path / "idx"), "--workers", "1"]).exit_code == 0
    RecordingBar.made = []
    monkeypatch.setattr(f"{module}.progress_bar", RecordingBar)
    args = [a.format(q=tmp_path / "q.txt") for a in command] + ["--index", str(tmp_path / "idx")]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        f"adding store {chunk_store_spec().name} to the index (reading {tmp_path / 'docs'} again); {REPORT_READY_HINT}"
    )
    size = sum(len(text.encode()) for text in DOCS.values())
    reads = [(bar.desc, *bar.stage("B")) for bar in RecordingBar.made if "B" in {bar.unit, *(u for _, u, _ in bar.stages)}]
    assert reads == [("indexing", size, size)]
