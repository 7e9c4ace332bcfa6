"""Cosine top-20 CPU time a query against ``topk.RESCORE_VS_SCAN``, the constant that
chooses between the full pass and pruning (speed only: the answers must not change, and this
script stops if one does).

    python benchmarks/bench_rescore_vs_scan.py INDEX COLLECTION.tar [--queries 30]
        [--words 0,20,100,400] [--values 8,32,128,512] [--rounds 5]

Queries are documents of the collection (a fixed random choice), whole (``--words 0``) or cut to
their words 100 to 100 + N. Each round runs every value in turn (the order reversed every other
round, as a shared machine's load drifts); the first round only warms up. Prints the median and
mean CPU milliseconds a query for each value, with the machine and the 1-minute load.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

from coderiv import Index, Searcher
from coderiv.ranking import compiled_probes, topk
from common import machine, tar_texts


def query_texts(tar: Path, count: int, words: int) -> list[str]:
    """``count`` documents of the collection, chosen with a fixed seed; cut to their words
    100 to 100 + ``words`` unless ``words`` is 0."""
    texts = [text for _, text in tar_texts(tar)]
    random.Random(5).shuffle(texts)
    chosen = texts[:count]
    return [" ".join(text.split()[100 : 100 + words]) for text in chosen] if words else chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("collection", type=Path)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--words", default="0,20,100,400")
    parser.add_argument("--values", default="8,32,128,512")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    values = [float(v) for v in args.values.split(",")]
    print(f"# {machine()}; load {os.getloadavg()[0]:.2f}; compiled loops: {compiled_probes.load()}")
    searcher = Searcher(Index.open(args.index))
    kept = topk.RESCORE_VS_SCAN
    try:
        for words in (int(w) for w in args.words.split(",")):
            prepared = [searcher.prepare(text) for text in query_texts(args.collection, args.queries, words)]
            answers: dict[int, list[tuple[str, float]]] = {}
            cpu: dict[float, list[float]] = {v: [] for v in values}
            for round_number in range(args.rounds + 1):
                for value in values if round_number % 2 == 0 else values[::-1]:
                    topk.RESCORE_VS_SCAN = value
                    for i, query in enumerate(prepared):
                        start = time.process_time()
                        result = searcher.rank(query, "cosine", top=20, prune=True)
                        seconds = time.process_time() - start
                        if round_number:
                            cpu[value].append(seconds)
                        answer = [(m.doc_id, round(m.score, 9)) for m in result.matches]
                        if answers.setdefault(i, answer) != answer:
                            raise SystemExit(f"RESCORE_VS_SCAN {value} changed the answer to query {i}")
            label = f"{words} words" if words else "whole documents"
            for value in values:
                ms = [s * 1e3 for s in cpu[value]]
                print(f"{label}: RESCORE_VS_SCAN {value:g}: CPU {statistics.median(ms):.2f} ms median, "
                      f"{statistics.fmean(ms):.2f} ms mean a query ({len(ms)} runs)")
    finally:
        topk.RESCORE_VS_SCAN = kept
    print(f"# load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
