"""``coderiv index --report-ready`` (issue 27): the terms store and the chunk store the report,
containment and pairs read are written by one pass over the collection, recorded like any
store (later updates keep it), so the first report does not read the collection again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner

from coderiv.cli.main import main
from coderiv.index.index import Index
from coderiv.index.reader import open_index
from coderiv.progress import Counter
from coderiv.ranking.containment import chunk_store_spec
from coderiv.text.collection import RawDocument
from tests.support.files import write_docs

CHUNKS = chunk_store_spec().name  # "chunks:bits=32,n=5"
# no stop words among them: 7 words make 3 five-word chunks, and b's one chunk is a's first
DOCS = {
    "a.txt": "quartz maple river falcon copper violet harbor",
    "b.txt": "quartz maple river falcon copper",
    "c.txt": "lantern meadow cobalt thistle granite",
}


def index_cli(runner: CliRunner, src: Path, idx: Path, *flags: str) -> None:
    result = runner.invoke(main, ["index", str(src), "--index", str(idx), "-q", *flags])
    assert result.exit_code == 0, result.output


def report_stderr(runner: CliRunner, query: Path, idx: Path) -> str:
    result = runner.invoke(main, ["report", str(query), "--index", str(idx), "--format", "json", "-q"])
    assert result.exit_code == 0, result.output
    return result.stderr


def test_both_stores_in_the_first_generation(runner: CliRunner, tmp_path: Path) -> None:
    src = write_docs(tmp_path / "src", DOCS)
    index_cli(runner, src, tmp_path / "idx", "--report-ready")
    index = open_index(tmp_path / "idx")
    assert index.version == "gen-000001"
    assert set(index.specs) == {"terms", CHUNKS} and index.specs[CHUNKS] == chunk_store_spec()
    info = index.info()["stores"][CHUNKS]
    assert (info["keys"], info["postings"]) == (4, 5)  # a: 3 chunks, b: a's first, c: 1 of its own


def test_a_report_afterwards_adds_no_store(runner: CliRunner, tmp_path: Path) -> None:
    src = write_docs(tmp_path / "src", DOCS)
    query = tmp_path / "q.txt"
    query.write_text(DOCS["a.txt"], "utf-8")
    index_cli(runner, src, tmp_path / "ready", "--report-ready")
    assert "adding" not in report_stderr(runner, query, tmp_path / "ready")
    assert open_index(tmp_path / "ready").version == "gen-000001"  # nothing was written
    # without the flag the first report reads the collection again, and says so
    index_cli(runner, src, tmp_path / "plain")
    assert f"adding store {CHUNKS} to the index" in report_stderr(runner, query, tmp_path / "plain")
    assert open_index(tmp_path / "plain").version == "gen-000002"


def test_a_sharded_index_too(runner: CliRunner, tmp_path: Path) -> None:
    src = write_docs(tmp_path / "src", DOCS)
    query = tmp_path / "q.txt"
    query.write_text(DOCS["a.txt"], "utf-8")
    index_cli(runner, src, tmp_path / "idx", "--shards", "2", "--report-ready")
    assert set(open_index(tmp_path / "idx").specs) == {"terms", CHUNKS}
    assert "adding" not in report_stderr(runner, query, tmp_path / "idx")
    assert open_index(tmp_path / "idx").version == "set-000001"


def test_later_updates_keep_the_chunk_store(runner: CliRunner, tmp_path: Path) -> None:
    src = write_docs(tmp_path / "src", DOCS)
    index_cli(runner, src, tmp_path / "idx", "--report-ready")
    write_docs(src, {"d.txt": "orchid basalt willow ember saffron"})
    index_cli(runner, src, tmp_path / "idx")  # the flag not given again
    index = open_index(tmp_path / "idx")
    assert index.version == "gen-000002" and set(index.specs) == {"terms", CHUNKS}
    assert index.info()["stores"][CHUNKS]["postings"] == 6


class CountingSource:
    """Documents given by a program, counting how often each is read."""

    def __init__(self, docs: dict[str, str]) -> None:
        self.docs = docs
        self.reads: dict[str, int] = dict.fromkeys(docs, 0)
        self.passes = 0

    def __iter__(self) -> Iterator[RawDocument]:
        self.passes += 1
        for doc_id, text in self.docs.items():
            self.reads[doc_id] += 1
            yield RawDocument(doc_id, text.encode())


def test_one_pass_writes_both_stores(tmp_path: Path) -> None:
    source, progress = CountingSource(DOCS), Counter()
    Index.update_from(source, tmp_path / "idx", stores=[chunk_store_spec()], progress=progress)
    assert source.passes == 1 and source.reads == dict.fromkeys(DOCS, 1)
    assert progress.starts == 2 and progress.stage("stores written") == (2, 2)  # one read, then two stores written
    assert set(Index.open(tmp_path / "idx").specs) == {"terms", CHUNKS}


TERMS_ONLY = "; terms only: the first report reads the collection again (index with --report-ready to avoid it)"


def test_the_summary_line_says_when_the_index_is_terms_only(runner: CliRunner, tmp_path: Path) -> None:
    src = write_docs(tmp_path / "src", DOCS)
    plain = runner.invoke(main, ["index", str(src), "--index", str(tmp_path / "plain"), "-q"])
    assert plain.output.splitlines()[0] == (
        f"3 documents in {tmp_path / 'plain'} (added 3, changed 0, removed 0, unchanged 0){TERMS_ONLY}"
    )
    ready = runner.invoke(main, ["index", str(src), "--index", str(tmp_path / "ready"), "-q", "--report-ready"])
    assert ready.output.splitlines()[0] == f"3 documents in {tmp_path / 'ready'} (added 3, changed 0, removed 0, unchanged 0)"
    sharded = runner.invoke(main, ["index", str(src), "--index", str(tmp_path / "many"), "-q", "--shards", "2"])
    assert sharded.output.splitlines()[0].endswith(TERMS_ONLY)
