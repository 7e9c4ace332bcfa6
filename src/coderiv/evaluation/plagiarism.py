"""Evaluating overlap methods on generated plagiarism cases (paper 001 §4.2, Table 1; SPEC §9).

Every donor of a case (the own document and each source) is compared with the case text; a
method's obtained similarity is set against the donor's expected similarity (the share of its
words the case uses) and the mean absolute difference over all (case, donor) pairs is the
method's score, in percentage points: 0 is perfect.

Methods, each giving "how much of the donor is in the case":

- ``shingles:w=N``: containment of the donor's shingles in the case's, |S(D)∩S(P)| / |S(D)|;
- ``chunks``: paper 003's similarity of the donor to the case (5-word chunks);
- ``matching``: share of the donor covered by exact passages (≥ 60 characters) found in the case;
- ``patricia``: paper 001 §2 literally: the case is the suspicious document D_p, the donor
  is scanned, and the counter is divided by the length of D_p. This measures the share of the
  *case* made of the donor, not of the donor used, which is why it misses the expected value;
- ``patricia/donor``: the same counter divided by the donor's length instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from coderiv.errors import InputError
from coderiv.output import json_percent
from coderiv.overlap.matching import coverage_percent, normalize, shared_passages
from coderiv.overlap.pairwise import chunk_similarity, patricia_counter, shingles
from coderiv.progress import Progress
from coderiv.registry import Registry
from coderiv.text.analysis import Analyzer

Similarity = Callable[["Pair"], float]


@dataclass
class Pair:
    """A donor and a case, prepared once for every method."""

    donor_text: str
    case_text: str
    analyzer: Analyzer

    def __post_init__(self) -> None:
        self.donor_terms = self.analyzer.terms(self.donor_text)
        self.case_terms = self.analyzer.terms(self.case_text)
        self.donor_norm = normalize(self.donor_text)
        self.case_norm = normalize(self.case_text)
        self._counter: int | None = None

    @property
    def patricia_counter(self) -> int:
        if self._counter is None:
            self._counter = patricia_counter(self.donor_norm, self.case_norm)
        return self._counter


def _shingle_method(w: int) -> Similarity:
    return lambda pair: 100 * shingles(pair.donor_terms, pair.case_terms, w).a_in_b


def _patricia(pair: Pair) -> float:
    return 100 * pair.patricia_counter / len(pair.case_norm) if len(pair.case_norm) else 0.0


def _patricia_donor(pair: Pair) -> float:
    return 100 * pair.patricia_counter / len(pair.donor_norm) if len(pair.donor_norm) else 0.0


def _matching(pair: Pair) -> float:
    return coverage_percent(pair.donor_norm, shared_passages(pair.donor_norm, pair.case_norm))


PLAGIARISM_METHODS: Registry[Similarity] = Registry("plagiarism method")
for _name, _similarity in {
    **{f"shingles:w={w}": _shingle_method(w) for w in range(2, 11)},
    "patricia": _patricia,
    "patricia/donor": _patricia_donor,
    "matching": _matching,
    "chunks": lambda pair: 100 * chunk_similarity(pair.donor_terms, pair.case_terms),
}.items():
    PLAGIARISM_METHODS.add(_name, _similarity)

#: Paper 001, Table 1: mean absolute differences (percentage points) on its 900 queries.
PAPER_TABLE_1 = {
    "shingles:w=2": 8.97, "shingles:w=3": 6.72, "shingles:w=4": 4.13, "shingles:w=5": 5.04,
    "shingles:w=6": 7.34, "shingles:w=7": 9.67, "shingles:w=8": 11.42, "shingles:w=9": 12.71,
    "shingles:w=10": 13.78, "patricia": 7.50,
}


def read_cases(path: str | Path) -> list[dict[str, Any]]:
    """The cases of a JSONL file (one object with ``case_id``, ``text``, ``sources`` a line)."""
    try:
        lines = Path(path).read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    cases = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            ok = isinstance(case["text"], str) and all("doc_id" in s and "expected_percent" in s for s in case["sources"])
        except (json.JSONDecodeError, KeyError, TypeError):
            ok = False
        if not ok:
            raise InputError(f"{path}:{number}: expected a case with text and sources[doc_id, expected_percent]")
        cases.append(case)
    if not cases:
        raise InputError(f"{path}: no cases")
    return cases


@dataclass(frozen=True)
class PairOutcome:
    """One (case, donor) pair under one method: the expected and the obtained similarity."""

    case_id: str
    doc_id: str
    expected: float
    obtained: float

    @property
    def abs_diff(self) -> float:
        return abs(self.obtained - self.expected)

    def to_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id, "doc_id": self.doc_id, "expected": self.expected,
            "obtained": json_percent(self.obtained), "abs_diff": json_percent(self.abs_diff),
        }


@dataclass(frozen=True)
class PlagiarismResult:
    """A method's mean absolute difference (percentage points) over ``pairs`` donor–case pairs,
    and each pair's outcome."""

    method: str
    mean_abs_diff: float
    pairs: int
    paper: float | None
    outcomes: tuple[PairOutcome, ...] = ()

    def to_dict(self, per_pair: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "method": self.method, "mean_abs_diff": self.mean_abs_diff, "pairs": self.pairs, "paper": self.paper,
        }
        if per_pair:
            data["per_pair"] = [o.to_dict() for o in self.outcomes]
        return data


def evaluate_cases(
    cases: list[dict[str, Any]],
    texts: Callable[[list[str]], dict[str, str]],
    methods: list[str] | None = None,
    analyzer: Analyzer | None = None,
    progress: Progress | None = None,
) -> list[PlagiarismResult]:
    """Mean absolute difference of each method; ``texts(ids)`` returns the donors' texts;
    ``progress`` follows the cases."""
    methods = methods or list(PLAGIARISM_METHODS)
    for name in methods:
        PLAGIARISM_METHODS.get(name)  # an unknown name is an error listing the choices
    analyzer = analyzer or Analyzer()
    outcomes: dict[str, list[PairOutcome]] = {name: [] for name in methods}
    if progress is not None:
        progress.start(len(cases), "cases")
    for number, case in enumerate(cases, 1):
        donors = texts([s["doc_id"] for s in case["sources"]])
        case_id = str(case.get("case_id", number))
        for source in case["sources"]:
            pair = Pair(donors[source["doc_id"]], case["text"], analyzer)
            for name in methods:
                outcomes[name].append(
                    PairOutcome(case_id, source["doc_id"], float(source["expected_percent"]), PLAGIARISM_METHODS[name](pair))
                )
        if progress is not None:
            progress.advance(1)
    return [
        PlagiarismResult(
            name, float(np.mean([o.abs_diff for o in found])) if found else 0.0, len(found), PAPER_TABLE_1.get(name),
            tuple(found),
        )
        for name, found in outcomes.items()
    ]


def evaluate_case_file(
    cases_path: str | Path, collection: str | Path | None, index_dir: str | Path | None, methods: str | None,
    progress: Progress | None = None,
) -> list[PlagiarismResult]:
    """Evaluate the overlap methods (comma-separated names, default all) on the cases of a JSONL
    file. Donor documents are read from ``collection`` or, if not given, from the folder or
    archive the index at ``index_dir`` was built from: only the donors, in one pass."""
    from coderiv.evaluation.donor_texts import donor_texts

    cases = read_cases(cases_path)
    names = [m.strip() for m in methods.split(",") if m.strip()] if methods else list(PLAGIARISM_METHODS)
    for name in names:
        PLAGIARISM_METHODS.get(name)  # a bad name is refused before any document is read
    texts = donor_texts(collection, index_dir)
    wanted = sorted({s["doc_id"] for case in cases for s in case["sources"]})
    read = texts(wanted)
    missing = [doc_id for doc_id in wanted if doc_id not in read]
    if missing:
        raise InputError(
            f"{missing[0]} is not in {texts.source} ({len(missing)} donors missing); give the collection the cases were made from"
        )
    return evaluate_cases(cases, lambda ids: {d: read[d] for d in ids}, names, progress=progress)
