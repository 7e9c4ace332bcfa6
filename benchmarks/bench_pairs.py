"""n-to-n pairs at scale: a synthetic collection with injected families (coderiv.evaluation.synthetic),
its chunk store, and ``coderiv pairs`` single-process, on a Dask LocalCluster, and incremental.

    python benchmarks/bench_pairs.py --docs 10000 [--index /tmp/coderiv-pairs-10k] [--reuse]
    python benchmarks/bench_pairs.py --docs 100000 --method resemblance --lsh [--memory GB]

Every phase runs in a fresh process, so its peak RSS is its own. Prints: index build time;
pairs wall time and peak memory (single process; LocalCluster of --dask-workers processes, and
whether its table is identical); recall of the injected family pairs in the top-k; groups at
--min against the injected families; an incremental run after adding 1% more documents, its time
and whether it equals a full recomputation.

``--lsh`` (needs the ``bench`` extra: datasketch) instead compares ``pairs --method resemblance``
with datasketch's MinHash (128 permutations) + LSH at threshold 0.5 on the same documents and the
same terms (coderiv's analysis, 4-term shingles), each in a fresh process: wall and CPU time,
peak RSS, the time ratio, and the recall of LSH's candidate pairs against the exact pairs of
resemblance ≥ 50% in coderiv's table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from coderiv import Index
from coderiv.evaluation.synthetic import SyntheticCollection
from coderiv.pairs import compiled
from coderiv.pairs.groups import find_groups
from coderiv.pairs.methods import METHODS
from coderiv.pairs.run import compute_pairs, run_pairs
from coderiv.pairs.table import PairTable
from common import machine, peak_rss_mb, timed
from lsh_baseline import exact_pairs, lsh_candidates, recall


def phase_build(args: argparse.Namespace, n_docs: int) -> dict:
    collection = SyntheticCollection(n_docs)
    store = METHODS[args.method].store
    seconds, report = timed(lambda: Index.update_from(collection.documents(), args.index, stores=[store], workers=2))
    return {"seconds": seconds, "docs": report.n_docs, "added": len(report.added), "rss_mb": peak_rss_mb()[0]}


def phase_pairs(args: argparse.Namespace, n_docs: int) -> dict:
    index = Index.open(args.index)
    engine_name = "serial"
    cpu_seconds = 0.0
    if args.engine == "dask":
        from coderiv.pairs.dask_backend import dask_client, dask_engine

        with dask_client("local", workers=args.dask_workers) as client:
            seconds, report = timed(lambda: run_pairs(index, args.method, args.top, full=True, engine=dask_engine(client)))
        engine_name = f"LocalCluster({args.dask_workers} processes)"
    elif args.engine == "incremental":
        seconds, report = timed(lambda: run_pairs(index, args.method, args.top))
    elif args.engine == "timed":  # full run under --memory, with its CPU time
        import time

        cpu = time.process_time()
        seconds, report = timed(lambda: run_pairs(index, args.method, args.top, full=True, memory=args.memory_bytes))
        cpu_seconds = time.process_time() - cpu
    else:
        seconds, report = timed(lambda: run_pairs(index, args.method, args.top, full=True))
    table = PairTable.open(index, args.method)
    digest = {name: float(np.asarray(table.arrays[name], np.float64).sum()) for name in ("row_ptr", "targets", "values")}
    result = {
        "engine": engine_name, "seconds": seconds, "rss_mb": peak_rss_mb()[0], "mode": report.mode,
        "recomputed_rows": report.recomputed_rows, "blocks": report.blocks, "shared_pairs": report.shared_pairs,
        "max_df": report.max_df, "skipped_keys": report.skipped_keys, "skipped_postings": report.skipped_postings,
        "entries": int(table.manifest["entries"]), "digest": digest, "compiled": compiled.loaded(),
    }
    if args.engine == "timed":
        result["cpu_seconds"] = cpu_seconds
        return result
    if args.engine == "incremental":
        full, _ = compute_pairs(index, args.method, args.top)
        result["equals_full"] = all(np.array_equal(table.arrays[n], full.arrays[n]) for n in ("row_ptr", "targets", "values"))
    if args.engine != "dask":
        result.update(quality(table, SyntheticCollection(n_docs), args.min))
    return result


def phase_lsh(args: argparse.Namespace, n_docs: int) -> dict:
    """datasketch MinHash-128 + LSH at 0.5 over the collection's 4-term shingles; recall of its
    candidate pairs against the exact resemblance ≥ 50% pairs of coderiv's stored table."""
    import time

    from coderiv.text.analysis import Analyzer

    analyzer = Analyzer(Index.open(args.index).settings)
    start, cpu = time.perf_counter(), time.process_time()
    documents = ((doc.doc_id, doc.data.decode("utf-8")) for doc in SyntheticCollection(n_docs).documents())
    candidates = lsh_candidates(documents, analyzer)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    rss = peak_rss_mb()[0]
    exact = exact_pairs(PairTable.open(Index.open(args.index), "resemblance"))
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "rss_mb": rss, **recall(exact, candidates)}


def quality(table: PairTable, collection: SyntheticCollection, min_percent: float) -> dict:
    """Recall of the injected family pairs in the top-k, and groups against families."""
    found = total = 0
    percents = []
    for family in collection.families():
        for a in family:
            row = {other: pct for _, pct, other in table.similar(a)}
            for b in family:
                if a != b:
                    total += 1
                    if b in row:
                        found += 1
                        percents.append(row[b])
    families = {tuple(f) for f in collection.families()}
    groups = {tuple(g.doc_ids) for g in find_groups(table, min_percent)}
    return {
        "family_pairs": total, "recall": found / total if total else 1.0,
        "family_pair_median_percent": float(np.median(percents)) if percents else 0.0,
        "families": len(families), "groups": len(groups), "groups_equal_to_a_family": len(groups & families),
    }


def run_phase(args: argparse.Namespace, phase: str, n_docs: int, engine: str = "serial") -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--docs", str(n_docs), "--index", str(args.index),
           "--method", args.method, "--top", str(args.top), "--engine", engine,
           "--dask-workers", str(args.dask_workers), "--min", str(args.min)]
    if args.memory is not None:
        cmd += ["--memory", str(args.memory)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def compare_lsh(args: argparse.Namespace) -> None:
    """pairs --method resemblance against datasketch MinHash-128 + LSH at 0.5, side by side."""
    args.method = "resemblance"
    if not args.reuse:
        shutil.rmtree(args.index, ignore_errors=True)
        b = run_phase(args, "build", args.docs)
        print(f"index build (terms + resemblance store, 2 workers): {b['seconds']:.1f} s, peak RSS {b['rss_mb']:.0f} MB")
    exact = run_phase(args, "pairs", args.docs, "timed")
    lsh = run_phase(args, "lsh", args.docs)
    loop = "compiled loop" if exact["compiled"] else "scipy product, no numba"
    print(f"coderiv pairs --method resemblance (exact, top {args.top}, {loop}): {exact['seconds']:.1f} s wall, "
          f"{exact['cpu_seconds']:.1f} s CPU, peak RSS {exact['rss_mb']:.0f} MB, {exact['shared_pairs']} sharing pairs")
    print(f"datasketch MinHash-128 + LSH(0.5) (approximate): {lsh['seconds']:.1f} s wall, {lsh['cpu_seconds']:.1f} s CPU, "
          f"peak RSS {lsh['rss_mb']:.0f} MB, {lsh['candidates']} candidate pairs")
    print(f"time ratio coderiv / LSH: wall {exact['seconds'] / lsh['seconds']:.2f}, CPU {exact['cpu_seconds'] / lsh['cpu_seconds']:.2f}")
    print(f"LSH recall of the exact pairs with resemblance >= 50%: {lsh['recall']:.4f} "
          f"({lsh['candidates_at_least_50']} of {lsh['exact_pairs']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--index", type=Path, default=None)
    parser.add_argument("--method", default="chunks", choices=sorted(METHODS))
    parser.add_argument("--top", type=int, default=100)
    parser.add_argument("--min", type=float, default=50.0)
    parser.add_argument("--dask-workers", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="Keep an existing index of the same size.")
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--lsh", action="store_true", help="Compare resemblance with datasketch MinHash + LSH (0.5).")
    parser.add_argument("--memory", type=float, default=None, help="pairs --memory GB (default 4).")
    parser.add_argument("--phase", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="serial", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.index = args.index or Path(f"/tmp/coderiv-pairs-{args.docs}")
    args.memory_bytes = None if args.memory is None else int(args.memory * (1 << 30))
    if args.phase:
        fn = {"build": phase_build, "pairs": phase_pairs, "lsh": phase_lsh}[args.phase]
        print(json.dumps(fn(args, args.docs)))
        return

    print(f"machine: {machine()}")
    print(f"collection: SyntheticCollection({args.docs}) (~900 words, Zipf vocabulary, 20% in families of 2-6, 10% edits)")
    if not args.reuse:
        shutil.rmtree(args.index, ignore_errors=True)
        b = run_phase(args, "build", args.docs)
        print(f"index build (terms + {METHODS[args.method].store.name}, 2 workers): {b['seconds']:.1f} s, peak RSS {b['rss_mb']:.0f} MB")
    if args.lsh:
        compare_lsh(args)
        return
    single = run_phase(args, "pairs", args.docs)
    print(f"pairs {args.method}, top {args.top}, single process: {single['seconds']:.1f} s, peak RSS {single['rss_mb']:.0f} MB; "
          f"{single['blocks']} blocks, {single['shared_pairs']} pairs share chunks, {single['entries']} entries kept")
    print(
        f"  boilerplate: {single['skipped_keys']} keys in more than {single['max_df']} documents skipped "
        f"({single['skipped_postings']} postings)"
    )
    print(f"  recall of injected family pairs in the top {args.top}: {single['recall']:.4f} of {single['family_pairs']} "
          f"(median {single['family_pair_median_percent']:.1f}%)")
    print(
        f"  groups at >= {args.min:g}%: {single['groups']}; equal to an injected family: "
        f"{single['groups_equal_to_a_family']} of {single['families']} families"
    )
    if not args.skip_dask:
        dask = run_phase(args, "pairs", args.docs, "dask")
        same = dask["digest"] == single["digest"] and dask["entries"] == single["entries"]
        print(f"pairs on {dask['engine']}: {dask['seconds']:.1f} s, client peak RSS {dask['rss_mb']:.0f} MB; identical table: {same}")
    grown = args.docs + max(1, args.docs // 100)
    b = run_phase(args, "build", grown)
    inc = run_phase(args, "pairs", grown, "incremental")
    print(f"index update to {grown} documents (+{b['added']}): {b['seconds']:.1f} s")
    print(f"incremental pairs: {inc['seconds']:.1f} s, peak RSS {inc['rss_mb']:.0f} MB, {inc['recomputed_rows']} of {grown} rows "
          f"recomputed; equals a full recomputation: {inc['equals_full']}; recall {inc['recall']:.4f}")


if __name__ == "__main__":
    main()
