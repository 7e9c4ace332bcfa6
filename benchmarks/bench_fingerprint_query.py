"""Query cost: fingerprint queries against ranked queries on the same index (paper 004 expected
parity "in a production implementation").

Each of the collection's query documents is read as text and searched for its top 10, so the
time includes analysis and fingerprinting of the query. Run by hand:

    python benchmarks/bench_fingerprint_query.py /work/shared/corpora /tmp/fpeval/idx
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from coderiv import FingerprintSearcher, Index, Searcher
from coderiv.evaluation.evaluate import read_queries
from coderiv.text.collection import read_member
from coderiv.text.extract import visible_text

REPEATS = 5


def timed(search, texts: list[str]) -> float:
    """Median over REPEATS of the mean milliseconds per query."""
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for text in texts:
            search(text)
        runs.append(1000 * (time.perf_counter() - start) / len(texts))
    return statistics.median(runs)


def main(corpora: str, index_path: str) -> None:
    index = Index.open(index_path)
    queries = read_queries(Path(corpora) / "queries.tsv")
    texts = [visible_text(read_member(index.source, d), d).text for d in queries.values()]
    ranked = Searcher(index)
    print(f"{len(texts)} query documents, top 10, ms per query (median of {REPEATS} passes)")
    print("| method | ms/query |\n|---|---|")
    for measure in ("identity5", "cosine"):
        print(f"| ranked, {measure} | {timed(lambda t, measure=measure: ranked.search(t, measure, 10), texts):.2f} |")
    for store, full in (("anchor:g=4", False), ("anchor:g=4", True), ("first-r-sliding:g=4,r=15", False),
                        ("winnowing:g=4", False), ("full:g=3", False), ("rarest-in-collection:g=3", False)):
        fp = FingerprintSearcher(index, store, full_query=full)
        label = fp.method.removeprefix("fingerprint:")
        print(f"| fingerprint, {label} | {timed(lambda t, fp=fp: fp.search(t, 10), texts):.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
