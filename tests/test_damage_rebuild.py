"""Rebuilding a damaged index keeps what it was built with (issue 25 items 5 and 7): a damaged
manifest never rebuilds with the default analysis in silence, and a pointer that is not a file
is mended by the next ``coderiv index`` with nothing left behind."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from coderiv.cli.main import main
from coderiv.index.format.storage import MANIFEST_COPY
from coderiv.index.index import Index
from tests.support.files import write_docs

DOCS = {
    "river.txt": "rivers carry sediments and nutrients downstream, feeding the estuaries and their fishing villages",
    "rivers2.txt": "a river carried sediment and nutrient downstream, fed the estuary and its fishing village",
    "bread.txt": "bread needs flour, water, salt and patience more than any machine could offer the baker",
}


def _build(tmp_path: Path) -> tuple[Path, Path]:
    folder = write_docs(tmp_path / "docs", DOCS)
    index = tmp_path / "index"
    done = CliRunner().invoke(main, ["index", str(folder), "--index", str(index), "--stem", "--fingerprint", "anchor:g=4", "-q"])
    assert done.exit_code == 0, done.output
    return folder, index


def _query(index: Path) -> str:
    done = CliRunner().invoke(main, ["query", "--doc", "river.txt", "--index", str(index), "--format", "tsv"])
    assert done.exit_code == 0, done.output
    return done.output


def _live(index: Path) -> Path:
    return index / (index / "CURRENT").read_text().strip()


def test_a_damaged_manifest_is_rebuilt_with_the_recorded_stemming_and_stores(tmp_path: Path) -> None:
    folder, index = _build(tmp_path)
    before = _query(index)
    assert "\t100.0000\t" in before and "rivers2.txt" in before  # stemming makes river/rivers one term
    (_live(index) / "manifest.json").write_text("{damaged", "utf-8")
    done = CliRunner().invoke(main, ["index", str(folder), "--index", str(index), "-q"])
    assert done.exit_code == 0, done.output
    assert "full rebuild of 3 documents: the index was damaged" in done.output
    assert "rebuilt with the analysis and stores it recorded" in done.output
    rebuilt = Index.open(index)
    assert rebuilt.settings.stem is True
    assert sorted(rebuilt.specs) == ["fingerprint:g=4,strategy=anchor", "terms"]
    assert _query(index) == before


def test_without_any_record_a_rebuild_asks_for_the_settings_in_one_line(tmp_path: Path) -> None:
    folder, index = _build(tmp_path)
    before = _query(index)
    (_live(index) / "manifest.json").write_text("{damaged", "utf-8")
    (index / MANIFEST_COPY).unlink()
    done = CliRunner().invoke(main, ["index", str(folder), "--index", str(index), "-q"])
    assert done.exit_code == 1
    assert done.output == (
        f"Error: the index at {index} is damaged and its analysis settings cannot be read: rebuild it by giving them all "
        "(--stop or --no-stop, --stem or --no-stem, --language, and each --fingerprint store it should keep), "
        "or remove the folder to start anew\n"
    )
    flags = ["--stop", "--stem", "--fingerprint", "anchor:g=4", "-q"]
    done = CliRunner().invoke(main, ["index", str(folder), "--index", str(index), *flags])
    assert done.exit_code == 0, done.output
    assert "rebuilt with the analysis given" in done.output
    assert _query(index) == before


def test_a_folder_named_current_is_mended_with_nothing_left_behind(tmp_path: Path) -> None:
    folder, index = _build(tmp_path)
    before = _query(index)
    (index / "CURRENT").unlink()
    (index / "CURRENT").mkdir()
    (index / "CURRENT" / "junk").write_text("x")
    done = CliRunner().invoke(main, ["index", str(folder), "--index", str(index), "-q"])
    assert done.exit_code == 0, done.output
    assert "its CURRENT is not a file" in done.output
    assert (index / "CURRENT").is_file()
    assert sorted(p.name for p in index.iterdir()) == ["CURRENT", _live(index).name, "lock", MANIFEST_COPY]
    assert Index.open(index).settings.stem is True
    assert _query(index) == before
