"""Checking many documents in one process (coderiv.ranking.batch, coderiv.text.reading): the
limits of a ranked list, exclusions, and reading folders, archives and glob patterns."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from coderiv.errors import CoderivError
from coderiv.index.index import Index
from coderiv.progress import Counter
from coderiv.ranking.batch import DEFAULT_TOP, Limits, check_batch, cut_note, own_document, rank_query
from coderiv.ranking.search import MeasureSearcher
from coderiv.text.reading import QueryDocument, SkippedQuery, count_queries, is_batch, iter_queries
from tests.support.files import write_docs

# Twelve copies of one text (each 100% to the others) and two unrelated documents.
TEXT = "granite basalt obsidian pumice marble slate quartzite gneiss schist"
DOCS = {**{f"copy{i:02d}.txt": TEXT for i in range(12)}, "other.txt": "violin cello viola", "half.txt": "granite basalt violin"}


@pytest.fixture
def index(tmp_path: Path) -> Index:
    Index.update_from(write_docs(tmp_path / "docs", DOCS), tmp_path / "idx", workers=1)
    return Index.open(tmp_path / "idx")


def test_limits_from_options() -> None:
    assert Limits.from_options(None, None) == Limits(DEFAULT_TOP, 0.0) == Limits(10, 0.0)
    assert Limits.from_options(None, 30.0) == Limits(None, 30.0)  # a threshold alone is not capped
    assert Limits.from_options(5, 30.0) == Limits(5, 30.0)
    assert Limits.from_options(5, None) == Limits(5, 0.0)


def test_min_percent_alone_returns_everything_above_it(index: Index) -> None:
    searcher = MeasureSearcher(index, "cosine")
    prepared = searcher.prepare(TEXT)
    result = rank_query(searcher, prepared, Limits.from_options(None, 30.0), "q")
    # the twelve copies at 100%; half.txt shares 2 of 9 terms (cosine well below 30%)
    assert [m.doc_id for m in result.matches] == [f"copy{i:02d}.txt" for i in range(12)]
    assert [m.rank for m in result.matches] == list(range(1, 13)) and result.note is None
    # the old behaviour, --top 10 as a silent default, would have cut two of them
    capped = rank_query(searcher, prepared, Limits(10, 30.0), "q")
    assert len(capped.matches) == 10
    assert capped.note == cut_note(10, 30.0) == (
        "more than 10 documents reach 30%: only the top 10 are shown (without --top, every one is)"
    )
    # exactly top documents above the threshold: nothing was cut, no note
    assert rank_query(searcher, prepared, Limits(12, 30.0), "q").note is None
    # --top alone: the k best, no note (no threshold was asked for)
    assert rank_query(searcher, prepared, Limits(3, 0.0), "q").note is None


def test_excluded_documents_leave_k_rows_ranked_from_1(index: Index) -> None:
    searcher = MeasureSearcher(index, "identity5")
    prepared = searcher.prepare_doc("copy00.txt")
    result = rank_query(searcher, prepared, Limits(3, 0.0), "copy00.txt", exclude={"copy00.txt", "copy01.txt"})
    assert [(m.rank, m.doc_id) for m in result.matches] == [(1, "copy02.txt"), (2, "copy03.txt"), (3, "copy04.txt")]


def test_own_document(index: Index, tmp_path: Path) -> None:
    assert own_document(index, "copy03.txt") == "copy03.txt"
    assert own_document(index, "missing.txt") is None
    # a document of a folder or archive: its id there
    assert own_document(index, QueryDocument("elsewhere/copy05.txt", TEXT, False, doc_id="copy05.txt")) == "copy05.txt"
    # a file inside the indexed folder: its id in that folder
    assert own_document(index, QueryDocument(str(tmp_path / "docs" / "half.txt"), "x", False)) == "half.txt"
    assert own_document(index, QueryDocument(str(tmp_path / "half.txt"), "x", False)) is None
    assert own_document(index, QueryDocument("<stdin>", "x", False)) is None


def test_check_batch_excludes_self_and_versions_and_says_what_it_skipped(index: Index, tmp_path: Path) -> None:
    batch = write_docs(tmp_path / "batch", {"copy00.txt": TEXT, "half.txt": "granite basalt violin", "new.txt": "cello"})
    (batch / "empty.txt").write_text("  \n")
    searcher = MeasureSearcher(index, "identity5")
    counter = Counter()
    queries = list(iter_queries([str(batch)]))
    versions = {"copy00.txt": {f"copy{i:02d}.txt" for i in range(1, 11)}}  # copy11 is left in
    items = list(check_batch(index, searcher, queries, Limits(2, 0.0), True, versions, counter, count_queries([str(batch)])))
    assert [i.label for i in items] == [str(batch / n) for n in ("copy00.txt", "empty.txt", "half.txt", "new.txt")]
    first, empty, half, new = items
    assert first.own == "copy00.txt" and len(first.excluded) == 11
    assert [(m.rank, m.doc_id, m.percent) for m in first.result.matches] == [
        (1, "copy11.txt", pytest.approx(100.0)), (2, "half.txt", first.result.matches[1].percent)]
    assert first.best.doc_id == "copy11.txt"
    assert (empty.result, empty.skipped) == (None, "empty")
    assert half.own == "half.txt" and half.excluded == ("half.txt",)
    # its own document (100%) is not listed first: identity5 puts other.txt, sharing the rare
    # "violin" (N/f_t = 14/2, L = 1), above the copies sharing two common terms (14/13 each)
    assert half.best.doc_id == "other.txt" and "half.txt" not in [m.doc_id for m in half.result.matches]
    assert new.own is None and new.excluded == () and new.best.doc_id == "other.txt"
    assert (counter.total, counter.unit, counter.done) == (4, "queries", 4)
    assert first.to_dict()["best_match"] == "copy11.txt" and empty.to_dict()["skipped"] == "empty"


def test_check_batch_of_indexed_ids_and_a_query_without_words(index: Index) -> None:
    searcher = MeasureSearcher(index, "identity5")
    items = list(check_batch(index, searcher, ["other.txt", QueryDocument("q", "the and of", False)], Limits(1, 0.0), True))
    # other.txt (violin f_t = 2, cello and viola f_t = 1; N = 14) has self-score 7 + 14 + 14 = 35;
    # half.txt, as long (L = 1), shares only violin: 7, i.e. 20%
    assert items[0].own == "other.txt" and [m.doc_id for m in items[0].result.matches] == ["half.txt"]
    assert items[0].best.percent == pytest.approx(20.0)
    assert items[1].result is None and items[1].skipped == "no words after analysis (stopping, no stemming)"


def test_iter_queries_reads_folders_archives_and_patterns(tmp_path: Path) -> None:
    folder = write_docs(tmp_path / "subs", {"a.txt": "alpha", "deep/b.md": "bravo", ".hidden": "no"})
    (folder / "bin.dat").write_bytes(b"\x00\x01\x02" * 100)
    archive = tmp_path / "subs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in {"x.txt": b"xray", "y.txt": b"yankee"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    (tmp_path / "single.txt").write_text("single")
    got = list(iter_queries([str(folder), str(archive), str(tmp_path / "subs" / "**" / "*.md"), str(tmp_path / "single.txt")]))
    assert [(q.label, getattr(q, "doc_id", None)) for q in got] == [
        (f"{folder}/a.txt", "a.txt"), (f"{folder}/bin.dat", None), (f"{folder}/deep/b.md", "deep/b.md"),
        (f"{archive}:x.txt", "x.txt"), (f"{archive}:y.txt", "y.txt"),
        (f"{folder}/deep/b.md", "deep/b.md"), (str(tmp_path / "single.txt"), None),
    ]
    assert got[1] == SkippedQuery(f"{folder}/bin.dat", "binary")
    # (Markdown is read as the text a reader sees: its paragraph breaks stay)
    assert [q.text.strip() for q in got if isinstance(q, QueryDocument)] == ["alpha", "bravo", "xray", "yankee", "bravo", "single"]
    assert count_queries([str(folder), str(tmp_path / "single.txt")]) == 4
    assert count_queries([str(archive)]) is None
    assert is_batch([str(folder)]) and is_batch([str(tmp_path / "*.txt")]) and not is_batch([str(tmp_path / "single.txt"), "-"])
    with pytest.raises(CoderivError, match="no file matches"):
        list(iter_queries([str(tmp_path / "*.nothing")]))
