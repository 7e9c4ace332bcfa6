"""Paper 001's Table 1 on the dev collection: plagiarism cases generated from it, with and
without stopping.

Generates the cases as ``coderiv generate ../shared/corpora/corpus.tar.gz --cases 100 --seed 0``
does (from the documents' visible text, as the index reads them), then prints the mean absolute
difference (percentage points) between expected and obtained similarity of every overlap
method, beside the paper's figures (``docs/evaluation.md``). With CASES, those cases instead
(the shipped ``plagiarism/cases.jsonl`` holds raw reStructuredText: it no longer matches the
rendered documents).

    .venv/bin/python benchmarks/eval_plagiarism.py [--cases CASES] [--corpus CORPUS] [--count 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from coderiv.evaluation.donor_texts import donor_texts
from coderiv.evaluation.generate import generate_from_texts
from coderiv.evaluation.plagiarism import PAPER_TABLE_1, evaluate_cases, read_cases
from coderiv.text.analysis import AnalysisSettings, Analyzer
from common import machine


def main() -> None:
    shared = Path(__file__).resolve().parents[2] / "shared/corpora"
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=Path, default=None)
    parser.add_argument("--corpus", type=Path, default=shared / "corpus.tar.gz")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    texts = donor_texts(args.corpus, None)
    start = time.perf_counter()
    if args.cases is not None:
        cases = read_cases(args.cases)
    else:
        cases = list(generate_from_texts(texts.doc_ids, texts, args.count, seed=args.seed))
    print(f"{machine()}; {len(cases)} cases in {time.perf_counter() - start:.1f} s ({texts.read} documents read)")
    wanted = sorted({s["doc_id"] for case in cases for s in case["sources"]})
    read = texts(wanted)
    columns = {}
    for label, settings in [("stopping (default)", AnalysisSettings()), ("no stopping", AnalysisSettings(stop=False))]:
        start = time.perf_counter()
        results = evaluate_cases(cases, lambda ids: {d: read[d] for d in ids}, analyzer=Analyzer(settings))
        columns[label] = {r.method: r for r in results}
        print(f"{label}: {time.perf_counter() - start:.1f} s")
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
