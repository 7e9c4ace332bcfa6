"""Sharded index: build and query times, one index vs K shards, this process vs Dask workers.

Writes a synthetic collection to a folder, builds (1) one index, (2) K shards in this process,
(3) K shards on a LocalCluster of 2 worker processes, then times ranked --doc queries on the
single and the sharded index and checks they return the same top 10. Run by hand:

    PYTHONPATH=src python benchmarks/bench_shards.py --docs 5000 --shards 4
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from coderiv.evaluation.synthetic import SyntheticCollection
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.index import Index
from coderiv.index.shards import ShardedIndex
from coderiv.ranking.search import MeasureSearcher
from coderiv.ranking.sharded import ShardedMeasureSearcher
from common import latency_summary, machine, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-shards-"))
    try:
        source = work / "src"
        source.mkdir()
        size = 0
        for doc in SyntheticCollection(args.docs).documents():
            (source / doc.doc_id).parent.mkdir(parents=True, exist_ok=True)
            (source / doc.doc_id).write_bytes(doc.data)
            size += len(doc.data)
        print(machine())
        print(f"{args.docs} documents, {size / 1e6:.1f} MB, K = {args.shards}, {args.workers} workers")
        t, _ = timed(lambda: Index.update_from(source, work / "one", workers=args.workers))
        print(f"build one index ({args.workers} analysis processes): {t:.1f} s")
        t, _ = timed(lambda: build_sharded(source, work / "local", args.shards, workers=args.workers))
        print(f"build {args.shards} shards in this process ({args.workers} analysis processes): {t:.1f} s")
        t, _ = timed(lambda: build_sharded(source, work / "dask", args.shards, workers=args.workers, dask_address="local"))
        print(f"build {args.shards} shards on a LocalCluster of {args.workers} worker processes: {t:.1f} s")
        one, many = Index.open(work / "one"), ShardedIndex.open(work / "dask")
        ids = one.doc_ids[:: max(1, len(one.doc_ids) // args.queries)][: args.queries]
        for measure in ["identity5", "cosine"]:
            s1, sk = MeasureSearcher(one, measure), ShardedMeasureSearcher(many, measure)
            t1, tk = [], []
            for doc_id in ids:
                a, r1 = timed(lambda s=s1, d=doc_id: s.rank(s.prepare_doc(d), 10))
                b, rk = timed(lambda s=sk, d=doc_id: s.rank(s.prepare_doc(d), 10))
                assert [m.doc_id for m in r1.matches] == [m.doc_id for m in rk.matches]
                t1.append(a)
                tk.append(b)
            print(f"query {measure} --doc, top 10: one index {latency_summary(t1)}; {args.shards} shards {latency_summary(tk)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
