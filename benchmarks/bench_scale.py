"""Index a deterministic synthetic collection (Zipfian vocabulary, ~900-word documents,
injected families) and time whole-document queries on it, memory-mapped.

    python benchmarks/bench_scale.py --docs 100000 [--index /tmp/coderiv-scale-100k] [--reuse]

Prints: build time and MB/s, peak memory, index size vs raw text, and identity5/cosine query
latency (median, p90) for exact top-10 with pruning and for the full pass, in a fresh process
that opens the index memory-mapped (its peak RSS is printed too).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from common import latency_summary, machine, peak_rss_mb, timed

from coderiv import Index, Searcher
from coderiv.synthetic import SyntheticCollection, doc_id


def build(args: argparse.Namespace) -> None:
    collection = SyntheticCollection(args.docs)
    shutil.rmtree(args.index, ignore_errors=True)
    seconds, report = timed(lambda: Index.update_from(collection.documents(), args.index, workers=args.workers))
    info = Index.open(args.index).info()
    raw_mb = info["source_bytes"] / 1e6
    own, children = peak_rss_mb()
    print(f"machine: {machine()}")
    print(f"build: {report.n_docs} docs, {raw_mb:.0f} MB raw, {seconds:.1f} s = {raw_mb / seconds:.1f} MB/s "
          "(synthetic generation in the same process included)")
    print(f"build peak RSS: parent {own:.0f} MB, largest worker {children:.0f} MB")
    print(f"index: {info['index_bytes'] / 1e6:.0f} MB = {100 * info['index_bytes'] / info['source_bytes']:.1f}% of raw; "
          f"{info['distinct_terms']} terms, {info['postings']} postings")


def query(args: argparse.Namespace) -> None:
    """Runs in a fresh process so that its peak RSS is that of querying alone."""
    collection = SyntheticCollection(args.docs)
    wanted = {doc_id(i * (args.docs // args.queries)) for i in range(args.queries)}
    texts = {d.doc_id: d.data.decode() for d in collection.documents() if d.doc_id in wanted}
    index = Index.open(args.index)
    searcher = Searcher(index)
    prepared = {qid: searcher.prepare(text) for qid, text in texts.items()}
    for measure in args.measures.split(","):
        variants = ((True, 0.0, "exact top-10, pruned"), (True, 10.0, "top-10 of those ≥10%"), (False, 0.0, "full pass"))
        for prune, floor, label in variants:
            times = []
            for qid, q in prepared.items():
                seconds, result = timed(lambda: searcher.rank(q, measure, top=10, prune=prune, min_percent=floor))
                assert result.matches[0].doc_id == qid
                times.append(seconds)
            print(f"query {measure:<9} {label:<20} ({len(times)} queries, analysis excluded): {latency_summary(times)}")
    print(f"query process peak RSS: {peak_rss_mb()[0]:.0f} MB (index memory-mapped)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--measures", default="identity5,cosine")
    parser.add_argument("--reuse", action="store_true", help="Skip the build; query an existing index.")
    parser.add_argument("--query-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.index = args.index or Path(f"/tmp/coderiv-scale-{args.docs}")
    if args.query_only:
        query(args)
        return
    if not args.reuse:
        build(args)
    subprocess.run([sys.executable, __file__, "--query-only", "--docs", str(args.docs), "--index", str(args.index),
                    "--queries", str(args.queries), "--measures", args.measures], check=True)


if __name__ == "__main__":
    main()
