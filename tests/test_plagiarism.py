"""Mean absolute difference between expected and obtained similarity (paper 001 Table 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coderiv.errors import InputError, UnknownNameError
from coderiv.evaluation.plagiarism import PAPER_TABLE_1, PLAGIARISM_METHODS, evaluate_cases, read_cases
from coderiv.text.analysis import AnalysisSettings, Analyzer

P1 = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
P2 = "lambda mu nu xi omicron pi rho sigma tau upsilon"
DONOR = P1 + "\n\n" + P2
CASE = {
    "case_id": "C1",
    "text": "own words written by the student themselves\n\n" + P1 + "\n",
    "sources": [{"doc_id": "donor.txt", "expected_percent": 50.0}],
}


def results(methods: list[str]) -> dict[str, float]:
    got = evaluate_cases([CASE], lambda ids: {"donor.txt": DONOR}, methods, Analyzer(AnalysisSettings(stop=False)))
    assert all(r.pairs == 1 for r in got)
    return {r.method: r.mean_abs_diff for r in got}


def test_hand_counted_differences() -> None:
    got = results(["shingles:w=2", "shingles:w=10", "chunks", "patricia", "patricia/donor", "matching"])
    # The donor's 20 words make 19 distinct bigrams; the case holds P1's 9: 9/19 = 47.37%.
    assert got["shingles:w=2"] == pytest.approx(abs(100 * 9 / 19 - 50))
    # 11 ten-word shingles, one (P1 itself) in the case: 9.09%.
    assert got["shingles:w=10"] == pytest.approx(abs(100 / 11 - 50))
    # 16 five-word chunks, P1's 6 in the case: 37.5%.
    assert got["chunks"] == pytest.approx(abs(100 * 6 / 16 - 50))
    # Patricia scans the donor: P1 (56 characters) matches the end of the case, then nothing.
    assert len(P1) == 56
    case_chars = len("own words written by the student themselves") + 1 + 56
    assert got["patricia"] == pytest.approx(abs(100 * 56 / case_chars - 50))
    assert got["patricia/donor"] == pytest.approx(abs(100 * 56 / len(DONOR.replace("\n\n", " ")) - 50))
    # 56 characters are under the 60-character passage threshold: nothing verified, 0%.
    assert got["matching"] == pytest.approx(50.0)


def test_every_paper_method_is_evaluated() -> None:
    assert set(PAPER_TABLE_1) <= set(PLAGIARISM_METHODS)
    with pytest.raises(UnknownNameError):
        results(["shingles:w=1"])


def test_read_cases(tmp_path: Path) -> None:
    good = tmp_path / "cases.jsonl"
    good.write_text(json.dumps(CASE) + "\n\n", "utf-8")
    assert read_cases(good)[0]["case_id"] == "C1"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x", "sources": [{"doc_id": "a"}]}\n', "utf-8")
    with pytest.raises(InputError, match="bad.jsonl:1"):
        read_cases(bad)
    with pytest.raises(InputError, match="cannot read"):
        read_cases(tmp_path / "none.jsonl")


def test_evaluate_cases_reports_progress_per_case() -> None:
    from coderiv.evaluation.plagiarism import evaluate_cases
    from coderiv.progress import Counter

    cases = [
        {"case_id": "A", "text": "one two three four five", "sources": [{"doc_id": "d", "expected_percent": 100.0}]},
        {"case_id": "B", "text": "six seven eight nine ten", "sources": [{"doc_id": "d", "expected_percent": 0.0}]},
    ]
    counter = Counter()
    (result,) = evaluate_cases(cases, lambda ids: {"d": "one two three four five"}, ["shingles:w=2"], progress=counter)
    assert (counter.total, counter.unit, counter.done, counter.starts) == (2, "cases", 2, 1)
    assert [(o.case_id, o.obtained) for o in result.outcomes] == [("A", 100.0), ("B", 0.0)]
    assert result.mean_abs_diff == 0.0 and result.pairs == 2
