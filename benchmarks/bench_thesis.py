"""A thesis archive's scale (issue 27): long documents, thesis-length queries, the report, and
``pairs`` (building its chunk store included) against datasketch's MinHash + LSH.

    python benchmarks/bench_thesis.py [--docs 2500] [--words 8000] [--queries 20] [--workers N]

On the deterministic synthetic collection of ``bench_scale.py`` with ~``--words``-word documents
(families of near-copies injected), each step in a fresh process, measured by ``/usr/bin/time``
(wall seconds, CPU seconds = user + system of the process and its waited-for workers, peak RSS)
with the 1-minute load average at its start and end:

1. ``coderiv index`` (terms only);
2. ``--queries`` whole documents of the collection as queries, cosine and identity5 exact top-20
   (median / p90 ms and median CPU ms a query, analysis excluded, the compiled loops loaded as in
   a long-lived process);
3. ``coderiv pairs --method resemblance --full`` on that index: the first run builds the 4-term
   chunk store it needs (re-reading the collection), the second has it; beside them, that build
   alone (``coderiv index --report-ready`` into another folder), whose peak memory bounds the
   first run's from below;
4. datasketch MinHash-128 + LSH at 0.5 on the same documents and 4-term shingles
   (:mod:`lsh_baseline`), and its recall of the exact pairs of resemblance ≥ 50% that ``pairs``
   found (``pairs`` is exact: recall 1 by construction);
5. ``coderiv report`` of one collection document (JSON), twice: the first builds the report's
   chunk store, as a user's first report on a terms-only index does, the second has it.

Then the issue's two goals: pairs with its store ÷ LSH, time (wall and CPU) ≤ 0.5, and peak
memory ≤ 4.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_scale import materialize
from common import machine, tar_texts

CODERIV = [sys.executable, "-m", "coderiv"]


def measured(command: list[str]) -> dict[str, Any]:
    """Wall s, CPU s (user + system of the process and its waited-for workers), peak RSS MB (all
    by ``/usr/bin/time``), (1-minute load before, after) and the last line ``command`` printed."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %M", *command], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-400:]}")
    user, system, rss = re.findall(r"TIME (\S+) (\S+) (\S+)", done.stderr)[-1]
    lines = done.stdout.strip().splitlines()
    return {"wall_s": wall, "cpu_s": float(user) + float(system), "rss_mb": int(rss) / 1024,
            "load": (load, os.getloadavg()[0]), "last": lines[-1] if lines else ""}


def phase_queries(index_dir: Path, tar: Path, count: int) -> dict[str, Any]:
    """Median / p90 wall ms and median CPU ms of exact top-20 queries, per measure."""
    from coderiv import Index, Searcher
    from coderiv.ranking import compiled_probes
    from coderiv.ranking.measures import get_measure
    from coderiv.ranking.topk import pruned_top_k

    index = Index.open(index_dir)
    searcher = Searcher(index)
    texts = json.loads(tar.with_suffix(".queries.json").read_text("utf-8"))
    prepared = [searcher.prepare(text) for _, text in sorted(texts.items())[:count]]
    compiled_probes.load()
    rows = {}
    for name in ("cosine", "identity5"):
        measure = get_measure(name)
        pruned_top_k(index, prepared[0], measure, 20)  # first use: pages mapped, loops warm
        walls, cpus = [], []
        for query in prepared:
            wall, cpu = time.perf_counter(), time.process_time()
            pruned_top_k(index, query, measure, 20)
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
        walls.sort()
        rows[name] = {"median_ms": statistics.median(walls), "p90_ms": walls[min(len(walls) - 1, round(0.9 * (len(walls) - 1)))],
                      "cpu_ms": statistics.median(cpus), "terms": statistics.median(len(q.positions) for q in prepared)}
    return rows


def phase_lsh(index_dir: Path, tar: Path) -> dict[str, Any]:
    """LSH's candidates over the collection, and their recall of coderiv's exact pairs."""
    from coderiv import Index
    from coderiv.pairs.table import PairTable
    from coderiv.text.analysis import Analyzer
    from lsh_baseline import exact_pairs, lsh_candidates, recall

    index = Index.open(index_dir)
    candidates = lsh_candidates(tar_texts(tar), Analyzer(index.settings))
    return recall(exact_pairs(PairTable.open(index, "resemblance")), candidates)


def _row(name: str, m: dict[str, Any], extra: str = "") -> str:
    return (f"| {name} | {m['load'][0]:.1f}→{m['load'][1]:.1f} | {m['wall_s']:.1f} | {m['cpu_s']:.1f} "
            f"| {m['rss_mb']:.0f} | {extra} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2500)
    parser.add_argument("--words", type=int, default=8000, help="Mean words per document.")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--phase", choices=["queries", "lsh"], help=argparse.SUPPRESS)
    parser.add_argument("--index", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--tar", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        result = phase_queries(args.index, args.tar, args.queries) if args.phase == "queries" else phase_lsh(args.index, args.tar)
        print(json.dumps(result))
        return
    tar = materialize(args.docs, max(args.queries, 50), args.words)
    texts = json.loads(tar.with_suffix(".queries.json").read_text("utf-8"))
    print(f"machine: {machine()}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before: {os.getloadavg()}")
    print(f"collection: {args.docs} synthetic documents of ~{args.words} words, {tar.stat().st_size / 1e6:.0f} MB tar; "
          f"{args.queries} whole-document queries", flush=True)
    work = Path(tempfile.mkdtemp(prefix="coderiv-thesis-"))
    index = work / "index"
    query = work / "query.txt"
    query.write_text(next(iter(sorted(texts.items())))[1], "utf-8")
    workers = ["--workers", str(args.workers)] if args.workers else []
    me = [sys.executable, __file__, "--index", str(index), "--tar", str(tar), "--queries", str(args.queries)]
    try:
        build = measured([*CODERIV, "index", str(tar), "--index", str(index), "-q", *workers])
        query_run = measured([*me, "--phase", "queries"])
        queries, query_load = json.loads(query_run["last"]), query_run["load"]
        # the build a first pairs run makes, alone: both stores of a report-ready index (its peak
        # memory bounds the first run's from below)
        ready = measured([*CODERIV, "index", str(tar), "--index", str(work / "ready"), "--report-ready", "-q", *workers])
        shutil.rmtree(work / "ready", ignore_errors=True)
        pairs_cold = measured([*CODERIV, "pairs", "--method", "resemblance", "--full", "--index", str(index), "-q"])
        pairs_warm = measured([*CODERIV, "pairs", "--method", "resemblance", "--full", "--index", str(index), "-q"])
        lsh = measured([*me, "--phase", "lsh"])
        lsh.update(json.loads(lsh["last"]))
        report_cold = measured([*CODERIV, "report", str(query), "--index", str(index), "--format", "json", "-q"])
        report_warm = measured([*CODERIV, "report", str(query), "--index", str(index), "--format", "json", "-q"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")
    print("| step | load | wall s | CPU s | peak RSS MB | |")
    print("|---|---|---|---|---|---|")
    print(_row("coderiv index (terms only)", build))
    for name, q in queries.items():
        print(f"| {name} exact top-20, {q['terms']:.0f} distinct query terms | {query_load[0]:.1f}→{query_load[1]:.1f} | | | "
              f"| median {q['median_ms']:.1f} ms, p90 {q['p90_ms']:.1f} ms; CPU {q['cpu_ms']:.1f} ms a query |")
    print(_row("coderiv index --report-ready (the build a first pairs run makes)", ready))
    print(_row("coderiv pairs --method resemblance, building its chunk store", pairs_cold, "exact: recall 1 by construction"))
    print(_row("coderiv pairs --method resemblance, store present", pairs_warm))
    print(_row("datasketch MinHash-128 + LSH(0.5), 4-term shingles", lsh,
               f"recall {lsh['recall']:.4f} ({lsh['candidates_at_least_50']} of {lsh['exact_pairs']} pairs ≥ 50%), "
               f"{lsh['candidates']} candidates"))
    print(_row("coderiv report (JSON), first: builds the report's chunk store", report_cold))
    print(_row("coderiv report (JSON), store present", report_warm))
    print(f"pairs incl. store ÷ LSH: wall {pairs_cold['wall_s'] / lsh['wall_s']:.2f}, CPU {pairs_cold['cpu_s'] / lsh['cpu_s']:.2f} "
          f"(goal ≤ 0.5); peak memory {pairs_cold['rss_mb'] / lsh['rss_mb']:.2f} (goal ≤ 4)")
    print(f"pairs with its store present ÷ LSH: wall {pairs_warm['wall_s'] / lsh['wall_s']:.2f}, "
          f"CPU {pairs_warm['cpu_s'] / lsh['cpu_s']:.2f}; peak memory {pairs_warm['rss_mb'] / lsh['rss_mb']:.2f}")
    print(f"report-ready build alone ÷ LSH: peak memory {ready['rss_mb'] / lsh['rss_mb']:.2f}")


if __name__ == "__main__":
    main()
