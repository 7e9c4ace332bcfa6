"""Fuzzing ``compare`` (issue 10): arbitrary texts and bytes never end in a traceback, and the
laws of the methods hold on them (A and B swapped swap the two directions; a text against
itself is 100%)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coderiv.cli.main import main
from coderiv.overlap.compare import compare_texts
from coderiv.text.analysis import Analyzer
from tests.support.strategies import WORDS

#: Words of a small vocabulary mixed with arbitrary characters, so that texts share passages.
texts = st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=120).map(" ".join)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(texts, texts)
def test_swapping_a_and_b_swaps_the_directions(a: str, b: str) -> None:
    forward, backward = compare_texts(a, b), compare_texts(b, a)
    assert [r.method for r in forward.rows] == [r.method for r in backward.rows]
    for f, r in zip(forward.rows, backward.rows):
        assert (f.a_in_b, f.b_in_a) == pytest.approx((r.b_in_a, r.a_in_b), abs=1e-9), f.method
        if f.symmetric:
            assert f.a_in_b == pytest.approx(f.b_in_a, abs=1e-9)
        if not f.over_100:
            assert 0.0 <= f.a_in_b <= 100.0 + 1e-9 and 0.0 <= f.b_in_a <= 100.0 + 1e-9, f.method


@FUZZ
@given(texts)
def test_a_text_against_itself_is_100_percent(text: str) -> None:
    if not Analyzer().terms(text):
        return
    got = {r.method: (r.a_in_b, r.b_in_a) for r in compare_texts(text, text).rows}
    for method in ("shingles w=4", "containment w=4", "chunks n=5", "passages"):
        assert got[method] == pytest.approx((100.0, 100.0)), method


@FUZZ
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_compare_on_arbitrary_bytes_is_a_result_or_one_error_line(tmp_path: Path, a: bytes, b: bytes) -> None:
    (tmp_path / "a.bin").write_bytes(a)
    (tmp_path / "b.txt").write_bytes(b)
    out = CliRunner().invoke(main, ["compare", str(tmp_path / "a.bin"), str(tmp_path / "b.txt"), "--format", "json"])
    assert out.exit_code in (0, 1), out.output
    assert "Traceback" not in out.output and (out.exception is None or isinstance(out.exception, SystemExit))
    said = out.stderr.splitlines()
    assert all(line.startswith(("warning: ", "note: ")) for line in said[:-1]), out.stderr
    if out.exit_code == 1:
        assert said[-1].startswith("Error: ") and out.stdout == "", out.output
