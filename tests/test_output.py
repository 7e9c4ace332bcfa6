"""Rendering percentages a reader can trust: marks above 100%, the note that explains them, and
the stated JSON precision."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coderiv.output import JSON_PERCENT_DECIMALS, fmt_percent, json_line, json_percent, over_100_note, table, to_json
from coderiv.ranking.measures import MEASURES
from coderiv.ranking.results import Match


def test_a_percentage_above_100_is_marked() -> None:
    assert fmt_percent(83.94) == "83.9%"
    assert fmt_percent(100.0) == "100.0%"
    assert fmt_percent(100.0000000000001) == "100.0%"  # noise over an exact 100% is not "above"
    assert fmt_percent(100.04) == "100.0%"  # shows as 100.0%: no mark either
    assert fmt_percent(100.2) == "100.2%*"
    assert fmt_percent(103.6, 2) == "103.60%*"


def test_the_note_says_why_once() -> None:
    assert over_100_note([12.0, 100.0, 100.04], ["patricia counts twice"]) is None
    assert over_100_note([100.2, 150.0], ["inner is not ideal", "inner is not ideal", ""]) == "* above 100%: inner is not ideal"
    assert over_100_note([100.2], [None]) == "* above 100%: the method is not bounded by the query's own score"


def test_non_ideal_measures_explain_themselves() -> None:
    # ideal measures cannot pass 100% (SPEC §3) and need no note; the others say how they do
    for name in MEASURES.names():
        measure = MEASURES.get(name)
        assert bool(measure.over_100) == (not measure.ideal), name
    assert MEASURES.get("inner").over_100.startswith("inner is not ideal")


def test_json_percentages_are_rounded_to_the_stated_precision() -> None:
    assert JSON_PERCENT_DECIMALS == 6
    assert json_percent(100.0000000000001) == 100.0
    assert json_percent(200 / 3) == 66.666667
    match = Match(rank=1, percent=100.0000000000001, score=12.5, doc_id="a.txt")
    assert json.loads(to_json(match.to_dict()))["percent"] == 100.0
    assert '"percent": 100.0,' in to_json(match.to_dict())


def test_table_keeps_the_mark_in_the_column() -> None:
    text = table(["method", "A in B"], [["patricia", fmt_percent(200.0)], ["chunks", fmt_percent(50.0)]], align="<>")
    assert text.splitlines()[2:] == ["patricia  200.0%*", "chunks      50.0%"]


def test_json_writes_an_undecodable_byte_of_a_name_as_text() -> None:
    # "caf\udce9" is how Python holds the file name b"caf\xe9" (surrogateescape)
    out = to_json({"doc_id": "caf\udce9.txt", "title": "Café"})
    assert out.encode("utf-8") == '{\n  "doc_id": "caf\\\\xe9.txt",\n  "title": "Café"\n}'.encode()
    assert json.loads(out) == {"doc_id": "caf\\xe9.txt", "title": "Café"}
    assert json_line(["a\udc80", 1]) == '["a\\\\x80", 1]'


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_query_json_is_valid_utf8_for_a_non_utf8_file_name(tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    words = "river delta sediment flows carry nutrients downstream into the estuary every spring"
    (folder / "plain.txt").write_text(words, "utf-8")
    name = os.fsdecode(b"caf\xe9.txt")
    (folder / name).write_text(words + " flood", "utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "LC_ALL": "C.UTF-8"}
    index = tmp_path / "index"
    command = [sys.executable, "-m", "coderiv"]
    subprocess.run([*command, "index", str(folder), "--index", str(index), "-q"], check=True, env=env, capture_output=True)
    done = subprocess.run(
        [*command, "query", str(folder / name), "--index", str(index), "--format", fmt], env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("utf-8")  # strict: invalid UTF-8 raises
    record = json.loads(text)["result"] if fmt == "jsonl" else json.loads(text)[0]
    ids = [m["doc_id"] for m in record["matches"]]
    assert ids == ["caf\\xe9.txt", "plain.txt"]
