"""Index a deterministic synthetic collection (Zipfian vocabulary, ~900-word documents,
injected families) and time whole-document queries on it, memory-mapped.

    python benchmarks/bench_scale.py --docs 100000 [--words 900] [--index /tmp/coderiv-scale-100k] [--reuse]
    python benchmarks/bench_scale.py --docs 1000000 --words 800 --generate-only   # write the tar first

Prints: build time and MB/s, peak memory, index size vs raw text, and identity5/cosine query
latency (median, p90) for exact top-10 with pruning and for the full pass, in a fresh process
that opens the index memory-mapped (its peak RSS is printed too).
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from coderiv import Index, Searcher
from coderiv.evaluation.synthetic import SyntheticCollection, doc_id
from common import AnonymousPeak, latency_summary, machine, peak_rss_mb, timed

#: The synthetic collection's mean document length (words) unless ``--words`` says otherwise.
DEFAULT_WORDS = SyntheticCollection(1).mean_words


def query_ids(docs: int, queries: int) -> set[str]:
    """Evenly spread documents of the collection used as queries."""
    return {doc_id(i * (docs // queries)) for i in range(queries)}


def materialize(docs: int, queries: int = 50, words: int = DEFAULT_WORDS) -> Path:
    """The synthetic collection as an uncompressed tar, made once (generation is not indexing),
    and the texts of the query documents beside it (``.queries.json``)."""
    suffix = "" if words == DEFAULT_WORDS else f"-{words}w"
    path = Path(f"/tmp/coderiv-synthetic-{docs}{suffix}.tar")
    texts_path = path.with_suffix(".queries.json")
    if not path.exists() or not texts_path.exists():
        wanted, texts = query_ids(docs, queries), {}
        partial = path.with_suffix(".partial")
        with tarfile.open(partial, "w") as archive:
            for doc in SyntheticCollection(docs, mean_words=words).documents():
                member = tarfile.TarInfo(doc.doc_id)
                member.size = len(doc.data)
                archive.addfile(member, io.BytesIO(doc.data))
                if doc.doc_id in wanted:
                    texts[doc.doc_id] = doc.data.decode()
        partial.rename(path)
        texts_path.write_text(json.dumps(texts), "utf-8")
    return path


def build(args: argparse.Namespace) -> None:
    source = materialize(args.docs, words=args.words)
    shutil.rmtree(args.index, ignore_errors=True)
    with AnonymousPeak() as anonymous:
        seconds, report = timed(lambda: Index.update_from(source, args.index, workers=args.workers))
    info = Index.open(args.index).info()
    raw_mb = info["source_bytes"] / 1e6
    own, children = peak_rss_mb()
    print(f"machine: {machine()}")
    print(f"build: {report.n_docs} docs, {raw_mb:.0f} MB raw (uncompressed tar), {seconds:.1f} s = {raw_mb / seconds:.1f} MB/s")
    print(f"build peak RSS: parent {own:.0f} MB (anonymous memory {anonymous.peak_mb:.0f} MB; the rest is "
          f"memory-mapped run and index files), largest worker {children:.0f} MB")
    print(f"index: {info['index_bytes'] / 1e6:.0f} MB = {100 * info['index_bytes'] / info['source_bytes']:.1f}% of raw; "
          f"{info['distinct_terms']} terms, {info['postings']} postings")


def query(args: argparse.Namespace) -> None:
    """Runs in a fresh process so that its peak RSS is that of querying alone."""
    texts = json.loads(materialize(args.docs, args.queries, args.words).with_suffix(".queries.json").read_text("utf-8"))
    anonymous = AnonymousPeak().__enter__()
    index = Index.open(args.index)
    searcher = Searcher(index)
    prepared = {qid: searcher.prepare(text) for qid, text in texts.items()}
    for measure in args.measures.split(","):
        variants = ((True, 0.0, "exact top-10, pruned"), (True, 10.0, "top-10 of those ≥10%"), (False, 0.0, "full pass"))
        for prune, floor, label in variants:
            times = []
            for qid, q in prepared.items():
                seconds, result = timed(
                    lambda q=q, measure=measure, prune=prune, floor=floor: searcher.rank(q, measure, top=10, prune=prune, min_percent=floor)
                )
                assert result.matches[0].doc_id == qid
                times.append(seconds)
            print(f"query {measure:<9} {label:<20} ({len(times)} queries, analysis excluded): {latency_summary(times)}")
    anonymous.__exit__()
    print(f"query process peak RSS: {peak_rss_mb()[0]:.0f} MB including the memory-mapped index files; "
          f"anonymous memory peak {anonymous.peak_mb:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--measures", default="identity5,cosine")
    parser.add_argument("--words", type=int, default=DEFAULT_WORDS, help="Mean words per document.")
    parser.add_argument("--generate-only", action="store_true", help="Write the collection's tar and stop.")
    parser.add_argument("--reuse", action="store_true", help="Skip the build; query an existing index.")
    parser.add_argument("--query-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.index = args.index or Path(f"/tmp/coderiv-scale-{args.docs}")
    if args.query_only:
        query(args)
        return
    if args.generate_only:
        print(materialize(args.docs, args.queries, args.words))
        return
    if not args.reuse:
        build(args)
    subprocess.run([sys.executable, __file__, "--query-only", "--docs", str(args.docs), "--index", str(args.index),
                    "--queries", str(args.queries), "--words", str(args.words), "--measures", args.measures], check=True)


if __name__ == "__main__":
    main()
