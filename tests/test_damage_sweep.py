"""No damage to any file of a generation may change an answer silently (issue 25, item 3).

For every file the manifest lists and every query method (ranking with each measure, cosine's
pruned top-k included, fingerprint, containment, ``--doc``), bytes are flipped at the start, the
middle and the end of the file; each command must then either give exactly the undamaged answer
or exit non-zero with one line naming the damage, never a different answer with exit 0. The fast
tier flips all three places of one file at once; the ``faults`` sweep flips each on its own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from coderiv.cli.main import main
from tests.support.files import write_docs

WORDS = (
    "river delta marsh wetland estuary sediment tide channel levee basin floodplain meander oxbow silt "
    "lagoon spit dune barrier reef shoal current eddy brine salt marshland"
).split()
FINGERPRINT = "first-r-sliding:g=4,r=15"


def _collection(folder: Path) -> Path:
    """Twelve documents sharing sentences (so every method finds matches), one word repeated 300
    times (so the side table of large values is not empty)."""
    rng = np.random.default_rng(11)
    sentences = [" ".join(rng.choice(WORDS, 12)) + "." for _ in range(30)]
    docs = {f"d{i:02d}.txt": " ".join(sentences[(i * 3 + j) % 30] for j in range(9)) for i in range(12)}
    docs["d00.txt"] += " tide" * 300
    return write_docs(folder, docs)


COMMANDS = {
    **{f"ranking-{m}": ["query", "{q}", "-m", m, "-k", "5"] for m in ("identity5", "cosine", "inner", "normalized", "identity1")},
    "cosine-pruned": ["query", "{q}", "-m", "cosine", "-k", "2"],
    "min-percent": ["query", "{q}", "--min-percent", "30"],
    "fingerprint": ["query", "{q}", "--method", "fingerprint", "-k", "5"],
    "containment": ["query", "{q}", "--method", "containment", "-k", "5"],
    "doc": ["query", "--doc", "d03.txt", "-k", "5"],
    "doc-cosine": ["query", "--doc", "d05.txt", "-m", "cosine", "-k", "5"],
}


def _run(runner: CliRunner, index: Path, query: Path, command: list[str]) -> tuple[int, str]:
    args = [a.replace("{q}", str(query)) for a in command] + ["--index", str(index), "-q", "--format", "tsv"]
    result = runner.invoke(main, args)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, tuple[int, str]], list[str]]:
    base = tmp_path_factory.mktemp("sweep")
    folder = _collection(base / "c")
    runner = CliRunner()
    index = base / "i"
    assert runner.invoke(main, ["index", str(folder), "--index", str(index), "-q", "--fingerprint", FINGERPRINT]).exit_code == 0
    query = folder / "d01.txt"
    _run(runner, index, query, COMMANDS["containment"])  # adds the chunk store, before the answers are taken
    answers = {name: _run(runner, index, query, command) for name, command in COMMANDS.items()}
    assert {name: code for name, (code, _) in answers.items() if code} == {}, answers
    generation = next(index.glob("gen-*"))
    files = sorted(json.loads((generation / "manifest.json").read_text("utf-8"))["files"])
    assert len(files) >= 28  # 9 document tables and checksums, the terms store's 9 arrays, two presence stores' 5
    return index, query, answers, files


def _damaged_copy(index: Path, target: Path, rel: str, places: list[str]) -> Path:
    shutil.copytree(index, target)
    path = next(target.glob("gen-*")) / rel
    data = bytearray(path.read_bytes())
    n = len(data)
    for place in places:
        at = {"start": 0, "middle": n // 2, "end": max(0, n - 8)}[place]
        for offset in range(at, min(n, at + 8)):
            data[offset] ^= 0x5A
    path.write_bytes(bytes(data))
    return target


def _assert_never_silent(runner: CliRunner, damaged: Path, query: Path, answers: dict[str, tuple[int, str]], rel: str) -> None:
    for name, command in COMMANDS.items():
        code, output = _run(runner, damaged, query, command)
        if (code, output) == answers[name]:
            continue
        lines = output.strip().splitlines()
        assert code != 0, f"{rel} {name}: a different answer with exit 0:\n{output}\nwanted:\n{answers[name][1]}"
        named = len(lines) == 1 and lines[0].startswith("Error: ") and ("damaged" in lines[0] or "rebuild" in lines[0])
        assert named, f"{rel} {name}: not one line naming the damage: {output!r}"
        assert "Traceback" not in output


def test_damage_to_any_file_never_changes_an_answer_silently(built, tmp_path: Path) -> None:
    index, query, answers, files = built
    runner = CliRunner()
    for number, rel in enumerate(files):
        damaged = _damaged_copy(index, tmp_path / f"d{number}", rel, ["start", "middle", "end"])
        _assert_never_silent(runner, damaged, query, answers, rel)
        shutil.rmtree(damaged)


@pytest.mark.faults
@pytest.mark.parametrize("place", ["start", "middle", "end"])
def test_damage_at_each_place_of_each_file_never_changes_an_answer_silently(built, tmp_path: Path, place: str) -> None:
    index, query, answers, files = built
    runner = CliRunner()
    for number, rel in enumerate(files):
        damaged = _damaged_copy(index, tmp_path / f"d{number}", rel, [place])
        _assert_never_silent(runner, damaged, query, answers, rel)
        shutil.rmtree(damaged)
