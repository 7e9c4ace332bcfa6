"""PAN's text-alignment measures: micro-averaged precision, recall, granularity and plagdet
(Potthast, Stein, Barrón-Cedeño, Rosso: "An Evaluation Framework for Plagiarism Detection",
COLING 2010, §3).

A case s and a detection r are sets of characters: those of the suspicious document's span and
those of the source document's span (characters of different documents are different). r
*detects* s when both name the same two documents and their spans overlap in the suspicious
document and in the source (the rule of PAN's own evaluation script, ``perfmeasures.py``).
s ⊓ r is s ∩ r when r detects s, else ∅. With S the cases and R the detections:

- recall    = |∪_{s,r} (s ⊓ r)| / |∪_{s∈S} s|
- precision = |∪_{s,r} (s ⊓ r)| / |∪_{r∈R} r|
- granularity = (1 / |S_R|) Σ_{s∈S_R} |R_s|, with S_R the cases detected by some r and R_s the
  detections detecting s (1 when S_R is empty)
- plagdet = F1 / log2(1 + granularity), F1 the harmonic mean of precision and recall.

Per obfuscation type (the truth's ``obfuscation`` attribute), S is the cases of that type and R
the detections in the pairs that hold one of them; the overall figures use every case and every
detection, so a detection in a pair without any case lowers precision only there.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderiv.output import table
from coderiv.overlap.align.pan_format import Feature, read_folder

Interval = tuple[str, int, int]  # document, start, end (characters)


def _intervals(feature: Feature) -> list[Interval]:
    return [
        (feature.this_reference, feature.this_offset, feature.this_end),
        (feature.source_reference, feature.source_offset, feature.source_end),
    ]


def union_size(intervals: Iterable[Interval]) -> int:
    """Characters in the union of the intervals (document by document)."""
    by_doc: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for doc, start, end in intervals:
        if end > start:
            by_doc[doc].append((start, end))
    total = 0
    for spans in by_doc.values():
        reach = -1
        for start, end in sorted(spans):
            if end > reach:
                total += end - max(start, reach)
                reach = end
    return total


def detects(r: Feature, s: Feature) -> bool:
    """Whether detection ``r`` detects case ``s`` (same documents, overlap on both sides)."""
    return (
        r.this_reference == s.this_reference and r.source_reference == s.source_reference
        and r.this_offset < s.this_end and s.this_offset < r.this_end
        and r.source_offset < s.source_end and s.source_offset < r.source_end
    )


def _meet(s: Feature, r: Feature) -> list[Interval]:
    """s ⊓ r for a detecting r: the intersection on both sides."""
    return [
        (s.this_reference, max(s.this_offset, r.this_offset), min(s.this_end, r.this_end)),
        (s.source_reference, max(s.source_offset, r.source_offset), min(s.source_end, r.source_end)),
    ]


@dataclass(frozen=True)
class PanMeasures:
    """The counts behind the measures (characters; detections per detected case), and the measures."""

    cases: int
    detections: int
    case_chars: int  # |∪ s|
    detection_chars: int  # |∪ r|
    detected_chars: int  # |∪ (s ⊓ r)|
    detected_cases: int  # |S_R|
    detections_per_case: int  # Σ_{s∈S_R} |R_s|

    @property
    def recall(self) -> float:
        return self.detected_chars / self.case_chars if self.case_chars else (1.0 if not self.detections else 0.0)

    @property
    def precision(self) -> float:
        if not self.detection_chars:
            return 1.0 if not self.cases else 0.0
        return self.detected_chars / self.detection_chars

    @property
    def granularity(self) -> float:
        return self.detections_per_case / self.detected_cases if self.detected_cases else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def plagdet(self) -> float:
        return self.f1 / math.log2(1 + self.granularity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "plagdet": round(self.plagdet, 4), "precision": round(self.precision, 4), "recall": round(self.recall, 4),
            "granularity": round(self.granularity, 4), "cases": self.cases, "detections": self.detections,
        }


def measure(cases: list[Feature], detections: list[Feature]) -> PanMeasures:
    """PAN's micro-averaged measures of ``detections`` against ``cases`` (module docstring)."""
    by_pair: dict[tuple[str, str], list[Feature]] = defaultdict(list)
    for r in detections:
        by_pair[(r.this_reference, r.source_reference)].append(r)
    met: list[Interval] = []
    detected_cases = per_case = 0
    for s in cases:
        hits = [r for r in by_pair.get((s.this_reference, s.source_reference), []) if detects(r, s)]
        if hits:
            detected_cases += 1
            per_case += len(hits)
            for r in hits:
                met.extend(_meet(s, r))
    return PanMeasures(
        len(cases), len(detections),
        union_size(i for s in cases for i in _intervals(s)),
        union_size(i for r in detections for i in _intervals(r)),
        union_size(met), detected_cases, per_case,
    )


@dataclass(frozen=True)
class PanEvaluation:
    """The overall measures and those of each obfuscation type named by the truth."""

    overall: PanMeasures
    by_obfuscation: dict[str, PanMeasures]
    pairs: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs, "overall": self.overall.to_dict(),
            "by_obfuscation": {k: v.to_dict() for k, v in self.by_obfuscation.items()},
        }


def evaluate(cases: list[Feature], detections: list[Feature]) -> PanEvaluation:
    """Overall and per-obfuscation measures (module docstring)."""
    types: dict[str, list[Feature]] = defaultdict(list)
    for s in cases:
        if s.obfuscation is not None:
            types[s.obfuscation].append(s)
    by_type = {}
    for name, chosen in sorted(types.items()):
        pairs = {(s.this_reference, s.source_reference) for s in chosen}
        by_type[name] = measure(chosen, [r for r in detections if (r.this_reference, r.source_reference) in pairs])
    return PanEvaluation(measure(cases, detections), by_type, len({(s.this_reference, s.source_reference) for s in cases}))


def evaluate_folders(truth_dir: Path, detections_dir: Path) -> PanEvaluation:
    """PAN's measures of the detection XMLs of a folder against the truth XMLs of another (a
    pair with no detection file has no detections; every detection file counts)."""
    truth = read_folder(truth_dir)
    found = read_folder(detections_dir)
    cases = [f for features in truth.values() for f in features if f.name == "plagiarism" and f.source_reference]
    detections = [f for features in found.values() for f in features if f.name == "detected-plagiarism"]
    result = evaluate(cases, detections)
    return PanEvaluation(result.overall, result.by_obfuscation, len(truth))


PAN_HEADERS = ["obfuscation", "cases", "detections", "plagdet", "precision", "recall", "granularity"]


def evaluation_rows(result: PanEvaluation) -> list[list[str]]:
    """One row for all cases, then one per obfuscation type (:data:`PAN_HEADERS`)."""
    rows = [["all", *_row(result.overall)]]
    return rows + [[name, *_row(m)] for name, m in result.by_obfuscation.items()]


def evaluation_table(result: PanEvaluation) -> str:
    """The measures as a text table: overall, then each obfuscation type."""
    return table(PAN_HEADERS, evaluation_rows(result))


def _row(m: PanMeasures) -> list[str]:
    return [str(m.cases), str(m.detections), f"{m.plagdet:.4f}", f"{m.precision:.4f}", f"{m.recall:.4f}", f"{m.granularity:.4f}"]
