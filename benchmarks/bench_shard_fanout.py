"""Query fan-out on a sharded index: one index against K shards scored one after the other,
on threads of this process, and on the workers of a real Dask cluster (``dask scheduler`` and
two ``dask worker`` processes on loopback, started with Dask's command-line tools).

Writes a synthetic collection, builds one index and K shards (in this process), checks every
sharded answer equals one index's, and prints per-query wall time (median / p90) and this
process's CPU time per query. Run by hand from the repository root:

    PYTHONPATH=src python benchmarks/bench_shard_fanout.py --docs 100000 --shards 4
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from coderiv.evaluation.synthetic import SyntheticCollection
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.index import Index
from coderiv.index.shards import ShardedIndex
from coderiv.ranking.fanout import DaskFanout, ThreadFanout
from coderiv.ranking.search import MeasureSearcher
from coderiv.ranking.sharded import ShardedMeasureSearcher
from coderiv.system.cluster import dask_client, process_cluster
from common import latency_summary, machine, timed


def run(searcher: Any, queries: list[tuple[str, str]], expected: list[list[str]] | None) -> tuple[list[float], float, list[list[str]]]:
    """Wall time of each query (("doc", id): an indexed document, ("text", text): a text; top
    10), CPU seconds of this process per query, the lists."""
    wall, lists = [], []
    cpu = time.process_time()
    for kind, value in queries:
        prepare = searcher.prepare_doc if kind == "doc" else searcher.prepare
        t, result = timed(lambda p=prepare, v=value: searcher.rank(p(v), 10))
        wall.append(t)
        lists.append([(m.doc_id, round(m.percent, 6)) for m in result.matches])
    if expected is not None:
        assert lists == expected, "a sharded answer differs from one index's"
    return wall, (time.process_time() - cpu) / len(queries), lists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=None, help="Build (or reuse) the indexes in this folder.")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-fanout-"))
    try:
        source = work / "src"
        if not source.exists():
            source.mkdir(parents=True)
            for doc in SyntheticCollection(args.docs).documents():
                (source / doc.doc_id).parent.mkdir(parents=True, exist_ok=True)
                (source / doc.doc_id).write_bytes(doc.data)
        size = sum(p.stat().st_size for p in source.rglob("*") if p.is_file())
        print(machine())
        print(f"{args.docs} documents, {size / 1e6:.1f} MB, K = {args.shards}")
        if not (work / "one").exists():
            t, _ = timed(lambda: Index.update_from(source, work / "one", workers=args.workers))
            print(f"build one index: {t:.1f} s")
        if not (work / "many").exists():
            t, _ = timed(lambda: build_sharded(source, work / "many", args.shards, workers=args.workers))
            print(f"build {args.shards} shards: {t:.1f} s")
        one, many = Index.open(work / "one"), ShardedIndex.open(work / "many")
        ids = one.doc_ids[:: max(1, len(one.doc_ids) // args.queries)][: args.queries]
        texts = one.source_texts().get(ids)
        kinds = {"--doc": [("doc", d) for d in ids], "text": [("text", texts[d]) for d in ids]}
        with process_cluster(args.workers) as cluster, dask_client(cluster.address) as client:
            for measure, kind in [(m, k) for m in ["identity5", "cosine"] for k in kinds]:
                queries = kinds[kind]
                single = MeasureSearcher(one, measure)
                run(single, queries, None)  # warm up: the pages every query touches come in
                wall, cpu, expected = run(single, queries, None)
                rows = [("one index", wall, cpu)]
                for label, fanout in [
                    ("shards one after the other", ThreadFanout(many, threads=1)),
                    (f"shards on {min(os.cpu_count() or 1, args.shards)} threads", ThreadFanout(many)),
                    (f"shards on Dask ({args.workers} workers, loopback)", DaskFanout(many, client)),
                ]:
                    searcher = ShardedMeasureSearcher(many, measure, fanout=fanout)
                    run(searcher, queries, None)  # warm up: workers open the index, pages come in
                    wall, cpu, _ = run(searcher, queries, expected)
                    rows.append((label, wall, cpu))
                load = os.getloadavg()[0]
                for label, wall, cpu in rows:
                    print(f"{measure} {kind} top 10, {label}: {latency_summary(wall)}; "
                          f"client CPU {cpu * 1e3:.1f} ms/query; load {load:.2f}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
