"""Reading markup rendered or as text (issue 28 item 3): ``coderiv index --markup text`` reads
.rst and .md as their source (markup words kept), records the choice in the index, and every
query, re-read document, upload and shard of that index is read the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from coderiv.cli.main import main
from coderiv.errors import InputError
from coderiv.index.builder.analysis_workers import AnalyzedEntry, _ascii_plain_text, _Worker
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.format.storage import MANIFEST_COPY
from coderiv.index.index import Index
from coderiv.index.reader import open_index
from coderiv.index.shards import ShardedIndex
from coderiv.keys.kinds import TERMS
from coderiv.text.analysis import AnalysisSettings, Analyzer
from coderiv.text.collection import RawDocument, iter_folder
from coderiv.text.extract import Markup, extract
from coderiv.text.isolated import read_isolated
from coderiv.text.reading import iter_queries, read_query
from tests.support.strategies import WORDS

#: A title underline, a link with its target, bold marks and a directive: none of it is visible.
RST = "Otters\n======\n\nSee `the river <https://example.org/otters>`_ and **swim**.\n\n.. image:: otters.png\n"
MD = "# Otters\n\nSee [the river](https://example.org/otters) and **swim**.\n"
OTHER = "Badgers dig long tunnels under the old oak wood at night and sleep all day long."
#: the visible words of RST and MD once rendered
RENDERED = ["otters", "see", "the", "river", "and", "swim"]
#: RST's words read as text: the link target's and the directive's words stay
RST_AS_TEXT = ["otters", "see", "the", "river", "https", "example", "org", "otters", "and", "swim", "image", "otters", "png"]


def _collection(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "otters.rst").write_text(RST)
    (folder / "otters.md").write_text(MD)
    (folder / "badgers.txt").write_text(OTHER)
    return folder


def _index(folder: Path, index: Path, *flags: str) -> str:
    done = CliRunner().invoke(main, ["index", str(folder), "--index", str(index), "--no-stop", "-q", *flags])
    assert done.exit_code == 0, done.output
    return done.output


def _terms(text: str) -> list[str]:
    return Analyzer(AnalysisSettings(stop=False)).terms(text)


def test_text_reads_the_source_and_render_the_visible_words() -> None:
    for data, name in ((RST, "a.rst"), (MD, "a.md")):
        rendered, raw = extract(data.encode(), name), extract(data.encode(), name, Markup.TEXT)
        assert _terms(rendered.text) == RENDERED
        assert raw.text == data  # the source as it is, under its format's name
        assert raw.format == rendered.format == ("rst" if name.endswith(".rst") else "markdown")
    assert _terms(extract(RST.encode(), "a.rst", Markup.TEXT).text) == RST_AS_TEXT
    # formats that are not lightweight markup are read one way
    assert extract(b"<p>the <b>html</b></p>", "a.html", Markup.TEXT).text.split() == ["the", "html"]


def test_an_index_read_as_text_keeps_the_markup_words_and_records_the_choice(tmp_path: Path) -> None:
    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    index = Index.open(path)
    lengths = dict(zip(index.doc_ids, map(int, index.doc_lengths)))
    # 13 words of RST (6 visible, 7 of markup), 10 of MD (its link target's 3 kept; "#" and "**" are no words)
    assert lengths == {"badgers.txt": 16, "otters.md": 10, "otters.rst": 13}
    assert index.markup is Markup.TEXT and index.info()["markup"] == "text"
    assert index.manifest["reading"] == {"hidden": False, "follow_symlinks": False, "markup": "text"}
    assert json.loads((path / MANIFEST_COPY).read_text())["reading"]["markup"] == "text"
    assert index.source_texts().text("otters.rst") == RST  # re-read (reports, verify) as indexed
    rendered = tmp_path / "rendered"
    _index(folder, rendered)
    again = Index.open(rendered)
    assert dict(zip(again.doc_ids, map(int, again.doc_lengths))) == {"badgers.txt": 16, "otters.md": 6, "otters.rst": 6}
    assert again.markup is Markup.RENDER and again.manifest["reading"]["markup"] == "render"


def test_an_update_keeps_the_choice_and_another_one_rebuilds(tmp_path: Path) -> None:
    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    kept = Index.update_from(folder, path)
    assert kept.rebuilt is None and kept.unchanged == 3 and Index.open(path).markup is Markup.TEXT
    plan = Index.plan_update(path, markup=Markup.RENDER)
    assert plan.rebuild == "markup reading changed from text to render" and plan.markup is Markup.RENDER
    done = CliRunner().invoke(main, ["index", str(folder), "--index", str(path), "--markup", "render", "-q"])
    assert done.exit_code == 0, done.output
    assert "full rebuild of 3 documents: markup reading changed from text to render" in done.output
    assert "(added 3, changed 0, removed 0, unchanged 0)" in done.output
    assert Index.open(path).markup is Markup.RENDER
    assert int(Index.open(path).doc_lengths[Index.open(path).number("otters.rst")]) == 6


def test_a_damaged_manifest_is_rebuilt_with_the_recorded_choice(tmp_path: Path) -> None:
    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    live = path / (path / "CURRENT").read_text().strip()
    (live / "manifest.json").write_text("{damaged", "utf-8")
    output = _index(folder, path)
    assert "the index was damaged" in output
    rebuilt = Index.open(path)
    assert rebuilt.markup is Markup.TEXT and int(rebuilt.doc_lengths[rebuilt.number("otters.rst")]) == 13


def _percent(output: str, doc_id: str) -> str:
    return next(line.split("\t")[2] for line in output.splitlines()[1:] if line.endswith("\t" + doc_id))


def test_a_query_is_read_as_the_index_read_its_documents(tmp_path: Path) -> None:
    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    runner = CliRunner()
    query = ["query", str(folder / "otters.rst"), "--index", str(path), "-m", "identity5", "--format", "tsv"]
    same = runner.invoke(main, query)
    assert same.exit_code == 0, same.output
    assert _percent(same.output, "otters.rst") == "100.0000"  # read as text, like the index
    # the rendered query (6 words, once each) against the source it came from (13 words, "otters"
    # 3 times; N = 3, N/f_t = 1.5 for otters/see/river/swim, 1 for the/and): identity5 gives
    # S(q,d) = 7.0 / (1 + ln(1 + 7)) = 2.27314 and S(q,q) = 8.0, so 28.4142%
    rendered = tmp_path / "rendered.txt"
    rendered.write_text(extract(RST.encode(), "a.rst").text)
    other = runner.invoke(main, [*query[:1], str(rendered), *query[2:]])
    assert other.exit_code == 0, other.output
    assert _percent(other.output, "otters.rst") == "28.4142"
    refused = runner.invoke(main, [*query, "--markup", "render"])
    assert refused.exit_code == 1
    assert refused.output.strip().splitlines() == [
        "Error: --markup render differs from the index's reading of markup (text); leave --markup out to read as "
        "the index does, or rebuild the index with --markup render"
    ]
    containment = runner.invoke(main, [*query[:2], "--index", str(path), "--method", "containment", "--markup", "render"])
    assert containment.exit_code == 1 and sorted(Index.open(path).specs) == ["terms"]  # refused before adding a store
    agreed = runner.invoke(main, [*query, "--markup", "text"])
    assert agreed.exit_code == 0 and _percent(agreed.output, "otters.rst") == "100.0000"
    report = runner.invoke(main, ["report", str(folder / "otters.rst"), "--index", str(path), "--markup", "render"])
    assert report.exit_code == 1 and "differs from the index's reading of markup (text)" in report.output


def test_info_shows_the_choice(tmp_path: Path) -> None:
    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    done = CliRunner().invoke(main, ["info", "--index", str(path), "--format", "tsv"])
    assert done.exit_code == 0 and "markup\ttext" in done.output.splitlines()
    info = json.loads(CliRunner().invoke(main, ["info", "--index", str(path), "--format", "json"]).output)
    assert info["markup"] == "text"


def test_query_readers_and_the_isolated_child_honour_the_choice(tmp_path: Path) -> None:
    folder = _collection(tmp_path)
    assert read_query(str(folder / "otters.rst"), Markup.TEXT).text == RST
    assert _terms(read_query(str(folder / "otters.rst")).text) == RENDERED
    texts = {d.doc_id: d.text for d in iter_queries([str(folder)], Markup.TEXT)}  # type: ignore[union-attr]
    assert texts == {"badgers.txt": OTHER, "otters.md": MD, "otters.rst": RST}
    assert read_isolated(RST.encode(), "up.rst", markup=Markup.TEXT).text == RST
    assert _terms(read_isolated(RST.encode(), "up.rst").text) == RENDERED


def test_ascii_markup_read_as_text_takes_the_batch_path_with_the_same_counts(tmp_path: Path) -> None:
    docs = list(iter_folder(_collection(tmp_path)))
    assert {d.doc_id for d in docs if _ascii_plain_text(d, Markup.TEXT)} == {"badgers.txt", "otters.md", "otters.rst"}
    assert {d.doc_id for d in docs if _ascii_plain_text(d)} == {"badgers.txt"}
    worker = _Worker(Analyzer(AnalysisSettings(stop=False)), [TERMS], markup=Markup.TEXT)
    batched, alone = worker.run_batch(docs), [worker.run(d) for d in docs]
    for a, b in zip(batched, alone):
        assert isinstance(a, AnalyzedEntry) and isinstance(b, AnalyzedEntry)
        assert (a.doc_id, a.length, a.format) == (b.doc_id, b.length, b.format)
        assert a.stores["terms"][0].tolist() == b.stores["terms"][0].tolist()
        assert a.stores["terms"][1].tolist() == b.stores["terms"][1].tolist()
    assert {a.doc_id: (a.length, a.format) for a in batched if isinstance(a, AnalyzedEntry)} == {
        "badgers.txt": (16, "text"), "otters.md": (10, "markdown"), "otters.rst": (13, "rst"),
    }


def test_a_sharded_index_records_the_choice(tmp_path: Path) -> None:
    folder, path = _collection(tmp_path), tmp_path / "sharded"
    build_sharded(folder, path, 2, AnalysisSettings(stop=False), markup=Markup.TEXT)
    sharded = open_index(path)
    assert sharded.markup is Markup.TEXT and sharded.info()["markup"] == "text"
    assert sharded.source_texts().text("otters.md") == MD
    assert all(shard.markup is Markup.TEXT for shard in ShardedIndex.open(path).shards.values())
    assert sharded.facts("otters.rst") is not None and sharded.facts("otters.rst").length == 13  # type: ignore[union-attr]
    report = build_sharded(folder, path, 2)  # an update keeps it
    assert report.updated and open_index(path).markup is Markup.TEXT
    report = build_sharded(folder, path, 2, markup=Markup.RENDER)  # another choice: a new set
    assert not report.updated
    assert open_index(path).markup is Markup.RENDER and open_index(path).facts("otters.rst").length == 6  # type: ignore[union-attr]


def test_an_unknown_choice_is_one_line() -> None:
    with pytest.raises(InputError, match="unknown markup reading 'raw': use 'render' or 'text'"):
        Markup.parse("raw")
    assert Markup.recorded(None) is Markup.RENDER and Markup.recorded({"hidden": True}) is Markup.RENDER
    done = CliRunner().invoke(main, ["index", ".", "--markup", "raw"])
    assert done.exit_code == 2 and "'raw' is not one of 'render', 'text'" in done.output


def test_a_web_upload_is_read_in_its_child_as_the_index_read_its_documents(tmp_path: Path) -> None:
    pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
    from fastapi.testclient import TestClient

    from coderiv.web.app import create_app
    from coderiv.web.context import ServeSettings

    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    web = TestClient(create_app(ServeSettings(path)))
    body = web.post("/api/check", files={"file": ("up.rst", RST.encode())}, data={"verify": "false"}).json()
    percents = {m["doc_id"]: m["percent"] for m in body["matches"]}
    assert percents["otters.rst"] == pytest.approx(100.0)  # rendered, it would be 28.4142% (above)
    assert body["query_terms"] == 11  # distinct: RST_AS_TEXT's 13 words with "otters" three times


def test_generate_reads_donors_as_the_index_read_them(tmp_path: Path) -> None:
    from coderiv.evaluation.donor_texts import donor_texts

    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    texts = donor_texts(None, path)
    assert texts(["otters.rst", "otters.md"]) == {"otters.rst": RST, "otters.md": MD}
    with pytest.raises(InputError, match="differs from the index's reading of markup"):
        donor_texts(None, path, Markup.RENDER)
    assert _terms(donor_texts(folder, None)(["otters.rst"])["otters.rst"]) == RENDERED  # a collection given: rendered
    done = CliRunner().invoke(main, ["generate", "--index", str(path), "--markup", "render", "--cases", "1"])
    assert done.exit_code == 1 and "differs from the index's reading of markup (text)" in done.output


def test_the_archive_worker_reads_an_upload_as_the_index_read_its_documents(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
    from coderiv.archive.db import Database
    from coderiv.archive.queue import Claim
    from coderiv.archive.worker import Worker

    folder, path = _collection(tmp_path), tmp_path / "index"
    _index(folder, path, "--markup", "text")
    database = Database(f"sqlite:///{tmp_path / 'archive.db'}")
    try:
        worker = Worker(database, path, lease=60.0, notify=False, parent=None)
        assert worker.read(Claim("s1", 1, "", "up.rst", None, RST.encode())) == RST  # in its child, as text
    finally:
        database.dispose()


#: Markup-ish pieces between words: emphasis, roles, links, titles, directives, accents.
_PIECES = ["**", "`", "_", ":ref:", "<https://x.org/a>", "\n====\n", "\n.. note::", "# ", "[", "](u)", "é", "—", "\n\n"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(WORDS + _PIECES), min_size=1, max_size=60).map(" ".join))
def test_markup_read_as_text_has_the_terms_of_the_same_bytes_read_as_plain_text(text: str) -> None:
    data = text.encode("utf-8")
    worker = _Worker(Analyzer(AnalysisSettings(stop=False)), [TERMS], markup=Markup.TEXT)
    docs = [RawDocument(name, data, plain=True) for name in ("a.rst", "b.md", "c.txt")]
    outcomes = [
        (r.length, r.stores["terms"][0].tolist(), r.stores["terms"][1].tolist()) if isinstance(r, AnalyzedEntry) else r.reason
        for r in worker.run_batch(docs)
    ]
    assert outcomes[0] == outcomes[1] == outcomes[2]
