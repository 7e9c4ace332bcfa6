"""A sharded index's collection-wide tables are checksummed (issue 25 item 3): a flipped byte in
any of them makes a query stop with one line, never answer differently; and ``coderiv index``
rebuilds the damaged set with the analysis and stores it recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coderiv.cli.main import main
from tests.support.files import write_docs

DOCS = {
    "river.txt": "rivers carry sediments and nutrients downstream, feeding the estuaries and their fishing villages",
    "rivers2.txt": "a river carried sediment and nutrient downstream, fed the estuary and its fishing village",
    "bread.txt": "bread needs flour, water, salt and patience more than any machine could offer the baker",
    "breads.txt": "breads need flour, water and salt, and patience more than a machine offers any baker",
}


def _run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, list(args))
    return done.exit_code, done.output


@pytest.fixture
def sharded(tmp_path: Path) -> tuple[Path, Path, str]:
    folder = write_docs(tmp_path / "docs", DOCS)
    index = tmp_path / "index"
    code, output = _run("index", str(folder), "--index", str(index), "--shards", "2", "--stem", "--fingerprint", "anchor:g=4", "-q")
    assert code == 0, output
    code, answer = _run("query", "--doc", "river.txt", "--index", str(index), "--format", "tsv")
    assert code == 0 and "rivers2.txt" in answer
    return folder, index, answer


def _global_files(index: Path) -> list[Path]:
    live = json.loads((index / "SHARDS.json").read_text())["set"]
    return sorted((index / live / "global").iterdir())


def test_every_global_table_is_checked(sharded: tuple[Path, Path, str]) -> None:
    _, index, clean = sharded
    files = _global_files(index)
    assert len(files) >= 8  # terms keys and f_t, and per shard: numbers, norms, bounds, class tables
    for path in files:
        original = path.read_bytes()
        damaged = bytearray(original)
        damaged[len(damaged) // 2] ^= 0x40
        path.write_bytes(bytes(damaged))
        code, output = _run("query", "--doc", "river.txt", "--index", str(index), "--format", "tsv")
        expected = f"Error: index damaged: global/{path.name} of {index} fails its checksum; rebuild with coderiv index\n"
        assert (code, output) == (1, expected)
        path.write_bytes(original)
    assert _run("query", "--doc", "river.txt", "--index", str(index), "--format", "tsv") == (0, clean)


def test_a_damaged_set_is_rebuilt_with_what_it_recorded(sharded: tuple[Path, Path, str]) -> None:
    folder, index, clean = sharded
    path = _global_files(index)[-1]
    path.write_bytes(path.read_bytes()[:-1] + bytes([path.read_bytes()[-1] ^ 1]))
    code, output = _run("index", str(folder), "--index", str(index), "-q")
    assert code == 0, output
    assert _run("query", "--doc", "river.txt", "--index", str(index), "--format", "tsv") == (0, clean)
    code, info = _run("info", "--index", str(index))
    assert "stemming (english)" in info
    code, found = _run("query", "--doc", "river.txt", "--index", str(index), "--method", "fingerprint", "--format", "tsv")
    assert code == 0 and "river.txt" in found
