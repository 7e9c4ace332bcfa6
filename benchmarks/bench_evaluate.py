"""Time ``coderiv evaluate``'s work on the dev collection: every ranking measure over the 50
queries (full ranking of all 3,375 indexed documents per query), and building the analysis variants.

    python benchmarks/bench_evaluate.py [--corpora ../shared/corpora] [--index /tmp/coderiv-bench-eval]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from coderiv import MEASURES, Index
from coderiv.evaluation.evaluate import Topics, evaluate_method
from coderiv.evaluation.variants import ANALYSIS_VARIANTS, variant_index
from common import machine, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora")
    parser.add_argument("--index", type=Path, default=Path("/tmp/coderiv-bench-eval"))
    args = parser.parse_args()
    shutil.rmtree(args.index, ignore_errors=True)
    print(f"machine: {machine()}")
    seconds, _ = timed(lambda: Index.update_from(args.corpora / "corpus.tar.gz", args.index))
    print(f"index build: {seconds:.2f} s")
    index = Index.open(args.index)
    topics = Topics.read(args.corpora / "queries.tsv", args.corpora / "qrels.tsv")
    total = 0.0
    for measure in MEASURES:
        t, _ = timed(lambda measure=measure: evaluate_method(index, measure, topics))
        total += t
        print(f"evaluate {measure:<10} {len(topics.queries)} queries: {t:.2f} s")
    print(f"evaluate all {len(MEASURES)} measures: {total:.2f} s")
    for name in ANALYSIS_VARIANTS:
        t, _ = timed(lambda name=name: variant_index(index, name))
        t2, _ = timed(lambda name=name: variant_index(index, name))
        print(f"variant {name:<9}: first use (build) {t:.2f} s, again (up to date) {t2:.3f} s")


if __name__ == "__main__":
    main()
