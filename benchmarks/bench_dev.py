"""Index the dev collection (../shared/corpora/corpus.tar.gz) and time its 50 queries with each
measure. Prints: build MB/s, index size vs raw text, query latency median and p90.

    python benchmarks/bench_dev.py [--corpora ../shared/corpora] [--index /tmp/coderiv-dev]
"""

from __future__ import annotations

import argparse
import shutil
import tarfile
from pathlib import Path

from coderiv import MEASURES, Index, Searcher
from coderiv.text.extract import visible_text
from common import latency_summary, machine, peak_rss_mb, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpora", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpora")
    parser.add_argument("--index", type=Path, default=Path("/tmp/coderiv-bench-dev"))
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    tar = args.corpora / "corpus.tar.gz"
    shutil.rmtree(args.index, ignore_errors=True)

    print(f"machine: {machine()}")
    seconds, report = timed(lambda: Index.update_from(tar, args.index, workers=args.workers))
    index = Index.open(args.index)
    info = index.info()
    raw_mb = info["source_bytes"] / 1e6
    print(f"index build: {report.n_docs} docs, {raw_mb:.1f} MB raw in {seconds:.2f} s = {raw_mb / seconds:.1f} MB/s")
    print(f"index size: {info['index_bytes'] / 1e6:.2f} MB = {100 * info['index_bytes'] / info['source_bytes']:.1f}% of raw text")
    print(f"peak RSS: parent {peak_rss_mb()[0]:.0f} MB, workers {peak_rss_mb()[1]:.0f} MB")

    query_ids = [line.split("\t")[1].strip() for line in (args.corpora / "queries.tsv").read_text().splitlines() if line.strip()]
    texts = {}
    with tarfile.open(tar) as archive:
        for member in archive:
            if member.name in query_ids:
                texts[member.name] = visible_text(archive.extractfile(member).read(), member.name).text
    searcher = Searcher(index)
    for measure in MEASURES:
        for prune, label in ((True, "top-10 pruned"), (False, "full pass")):
            times = []
            for qid in query_ids:
                t, _ = timed(
                    lambda qid=qid, measure=measure, prune=prune: searcher.rank(
                        searcher.prepare(texts[qid]), measure, top=10, prune=prune
                    )
                )
                times.append(t)
            print(f"query {measure:<10} {label:<13} (analysis included): {latency_summary(times)}")


if __name__ == "__main__":
    main()
