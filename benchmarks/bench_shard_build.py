"""Building a sharded index on a real Dask cluster against one process, on one collection.

Runs, side by side under the same load: (1) ``coderiv index SRC`` in one process with
``--workers`` analysis processes; (2) ``coderiv index SRC --shards K --dask tcp://127.0.0.1:PORT``
against a cluster started here with Dask's own tools (``dask scheduler`` and ``--cluster-workers``
``dask worker --nthreads 1`` processes on loopback). For each: wall time, CPU time (the client's
and, for the cluster, every worker process's and their children's), peak resident memory
(VmHWM, sampled over each process tree), the index's size (``--local-shards``: also the K
shards built in one process, to tell the sharding's cost from Dask's); then checks that both indexes give
the same top 10 for ``--queries`` indexed documents as queries (identity5 and cosine), and
prints the per-document costs the projection in docs/scale.md starts from. Run by hand:

    PYTHONPATH=src nice -n 10 python benchmarks/bench_shard_build.py --source /tmp/coderiv-synthetic-100000.tar
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from coderiv.system.cluster import process_cluster
from common import machine


class TreeSampler:
    """Peak VmHWM (MB, resident with mapped files) and peak RssAnon (MB: heap and arrays, not
    the mapped index files the kernel can drop) of every process of some trees, and their CPU
    seconds at the end."""

    def __init__(self, pids: list[int], interval: float = 0.25) -> None:
        self.roots = [psutil.Process(pid) for pid in pids]
        self.peaks: dict[int, float] = {}
        self.anon: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> list[psutil.Process]:
        found = []
        for root in self.roots:
            try:
                found += [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                pass
        return found

    def _sample(self) -> None:
        for process in self._tree():
            try:
                with open(f"/proc/{process.pid}/status", encoding="utf-8") as status:
                    for line in status:
                        if line.startswith("VmHWM:"):
                            self.peaks[process.pid] = max(self.peaks.get(process.pid, 0.0), int(line.split()[1]) / 1024)
                        elif line.startswith("RssAnon:"):
                            self.anon[process.pid] = max(self.anon.get(process.pid, 0.0), int(line.split()[1]) / 1024)
                self.names.setdefault(process.pid, " ".join(process.cmdline()[1:4])[:60])
            except (OSError, psutil.Error):
                pass

    def cpu(self) -> float:
        total = 0.0
        for process in self._tree():
            try:
                t = process.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def run_measured(args: list[str]) -> tuple[float, float, str, str]:
    """Wall seconds, CPU seconds (process and children), peak RSS / anonymous MB of the largest
    process, output."""
    before = os.times()
    start = time.perf_counter()
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        with TreeSampler([process.pid]) as sampler:
            out, _ = process.communicate()
    wall = time.perf_counter() - start
    after = os.times()
    if process.returncode:
        raise SystemExit(f"{' '.join(args)} failed:\n{out}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    peak = f"{max(sampler.peaks.values(), default=0.0):.0f} MB ({max(sampler.anon.values(), default=0.0):.0f} MB anonymous)"
    return wall, cpu, peak, out


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def same_answers(one: Path, many: Path, queries: int) -> int:
    from coderiv.index.index import Index
    from coderiv.index.shards import ShardedIndex
    from coderiv.ranking.search import MeasureSearcher
    from coderiv.ranking.sharded import ShardedMeasureSearcher

    single, sharded = Index.open(one), ShardedIndex.open(many)
    assert single.doc_ids == sharded.doc_ids
    ids = single.doc_ids[:: max(1, len(single.doc_ids) // queries)][:queries]
    checked = 0
    for measure in ("identity5", "cosine"):
        s1, sk = MeasureSearcher(single, measure), ShardedMeasureSearcher(sharded, measure)
        for doc_id in ids:
            r1, rk = s1.rank(s1.prepare_doc(doc_id), 10), sk.rank(sk.prepare_doc(doc_id), 10)
            assert [m.doc_id for m in r1.matches] == [m.doc_id for m in rk.matches], doc_id
            # the same percentages up to the last bits of a sum taken in another order
            assert all(math.isclose(a.percent, b.percent, rel_tol=1e-12) for a, b in zip(r1.matches, rk.matches)), doc_id
            checked += 1
    return checked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True, help="folder, archive or fsspec URL to index")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="analysis processes of the one-process build")
    parser.add_argument("--cluster-workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the indexes (printed folder)")
    parser.add_argument("--local-shards", action="store_true",
                        help="also build the K shards in one process (the sharding's own CPU, without Dask)")
    args = parser.parse_args()
    coderiv = [str(Path(sys.executable).parent / "coderiv")]
    work = Path(tempfile.mkdtemp(prefix="bench-shard-build-"))
    print(machine())
    print(f"source {args.source}; K = {args.shards}; one process with {args.workers} analysis processes; "
          f"cluster of {args.cluster_workers} dask workers (--nthreads 1) on 127.0.0.1")
    try:
        print(f"load before: {os.getloadavg()}")
        wall, cpu, peak, out = run_measured([*coderiv, "index", args.source, "--index", str(work / "one"),
                                             "--workers", str(args.workers), "--quiet"])
        one_size = folder_bytes(work / "one")
        documents = int(out.split()[0])
        print(f"one process: wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {peak}, index {one_size / 1e6:.1f} MB; "
              f"load {os.getloadavg()}")
        if args.local_shards:
            lwall, lcpu, lpeak, _ = run_measured([*coderiv, "index", args.source, "--index", str(work / "here"),
                                                  "--shards", str(args.shards), "--workers", "1", "--quiet"])
            print(f"{args.shards} shards in one process, one after the other (1 analysis process): wall {lwall:.1f} s, "
                  f"CPU {lcpu:.1f} s, peak RSS {lpeak}; load {os.getloadavg()}")
            shutil.rmtree(work / "here")
        with process_cluster(args.cluster_workers) as cluster:
            workers = TreeSampler([w.pid for w in cluster.workers])
            cpu0 = workers.cpu()
            with workers:
                cwall, ccpu, cpeak, cout = run_measured([*coderiv, "index", args.source, "--index", str(work / "many"),
                                                         "--shards", str(args.shards), "--dask", cluster.address, "--quiet"])
                wcpu = workers.cpu() - cpu0
            print(f"load after the cluster build: {os.getloadavg()}")
        many_size = folder_bytes(work / "many")
        print(cout.strip().splitlines()[0])
        print(f"{args.shards} shards on the cluster: wall {cwall:.1f} s, client CPU {ccpu:.1f} s, workers' CPU {wcpu:.1f} s, "
              f"client peak RSS {cpeak}, index {many_size / 1e6:.1f} MB")
        for pid, mb in sorted(workers.peaks.items()):
            print(f"  worker process {pid} ({workers.names.get(pid, '?')}): peak RSS {mb:.0f} MB "
                  f"({workers.anon.get(pid, 0.0):.0f} MB anonymous)")
        from coderiv.index.shards import ShardedIndex

        facts = ShardedIndex.open(work / "many").info()
        print(f"collection: {facts['distinct_terms']} distinct terms, {facts['postings']} postings")
        checked = same_answers(work / "one", work / "many", args.queries)
        print(f"same top 10 (ids, percentages to 1e-12) on both indexes for {checked} queries (identity5, cosine)")
        print(f"per document: one process {1e3 * cpu / documents:.2f} ms CPU, {one_size / documents / 1e3:.2f} kB index; "
              f"sharded {1e3 * (ccpu + wcpu) / documents:.2f} ms CPU, {many_size / documents / 1e3:.2f} kB index")
        print(f"wall ratio sharded / one process: {cwall / wall:.2f}")
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
