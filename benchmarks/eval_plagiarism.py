"""Paper 001's Table 1 on the dev collection's plagiarism cases, with and without stopping.

Prints the mean absolute difference (percentage points) between expected and obtained
similarity of every overlap method, beside the paper's figures (``docs/evaluation.md``).

    .venv/bin/python benchmarks/eval_plagiarism.py [CASES] [CORPUS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from coderiv.evaluation.plagiarism import PAPER_TABLE_1, evaluate_cases, read_cases
from coderiv.overlap.verify import DocumentTexts
from coderiv.text.analysis import AnalysisSettings, Analyzer


def main() -> None:
    shared = Path(__file__).resolve().parents[2] / "shared/corpora"
    cases_path = Path(sys.argv[1]) if len(sys.argv) > 1 else shared / "plagiarism/cases.jsonl"
    corpus = Path(sys.argv[2]) if len(sys.argv) > 2 else shared / "corpus.tar.gz"
    cases = read_cases(cases_path)
    texts = DocumentTexts(corpus, preload=True)
    columns = {}
    for label, settings in [("stopping (default)", AnalysisSettings()), ("no stopping", AnalysisSettings(stop=False))]:
        start = time.perf_counter()
        columns[label] = {r.method: r for r in evaluate_cases(cases, texts.get, analyzer=Analyzer(settings))}
        print(f"{label}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    first = next(iter(columns.values()))
    print("| method | " + " | ".join(columns) + " | paper 001 |")
    print("|---|" + "---:|" * (len(columns) + 1))
    for method in first:
        paper = PAPER_TABLE_1.get(method)
        cells = [f"{columns[c][method].mean_abs_diff:.2f}" for c in columns]
        print(f"| {method} | " + " | ".join(cells) + f" | {'' if paper is None else f'{paper:.2f}'} |")
    print(f"\n{first[next(iter(first))].pairs} (case, donor) pairs from {len(cases)} cases")


if __name__ == "__main__":
    main()
