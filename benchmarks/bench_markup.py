"""Indexing the dev collection with markup rendered or read as text (issue 28 item 3), and what
the choice costs in effectiveness.

Each build is a fresh ``coderiv index --markup M`` of the whole tar in a child process, in the
order render, text, render, text (the machine is shared: A B A B), timed in wall seconds and in
CPU seconds of the whole process tree (the analysis workers included, from ``RUSAGE_CHILDREN``).
Then ``coderiv evaluate`` (the dev collection's 50 queries and judgements, SPEC §4) runs on each
index: the queries are documents of the index, so each side is read the same way.

    python benchmarks/bench_markup.py [--corpora ../shared/corpora] [--out /tmp/coderiv-bench-markup]
        [--rounds 2] [--measures identity5,cosine]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import machine

ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _coderiv(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "coderiv", *args], capture_output=True, text=True, check=True, env=env)


def build(tar: Path, index: Path, markup: str) -> tuple[float, float, str]:
    """Wall and CPU seconds of one fresh build, and its summary line."""
    shutil.rmtree(index, ignore_errors=True)
    cpu, wall = _children_cpu(), time.perf_counter()
    done = _coderiv("index", str(tar), "--index", str(index), "--markup", markup, "-q")
    return time.perf_counter() - wall, _children_cpu() - cpu, done.stdout.splitlines()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora")
    parser.add_argument("--out", type=Path, default=Path("/tmp/coderiv-bench-markup"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--measures", default="identity5,cosine")
    args = parser.parse_args()
    tar = args.corpora / "corpus.tar.gz"
    print(machine())
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}  ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    times: dict[str, list[tuple[float, float]]] = {"render": [], "text": []}
    for _ in range(args.rounds):
        for markup in ("render", "text"):
            wall, cpu, line = build(tar, args.out / markup, markup)
            times[markup].append((wall, cpu))
            print(f"index --markup {markup:6}  {wall:7.1f} s wall  {cpu:7.1f} s CPU   {line}", flush=True)
    for markup, runs in times.items():
        print(f"{markup:6}: best {min(w for w, _ in runs):.1f} s wall, {min(c for _, c in runs):.1f} s CPU over {len(runs)} runs")
    render_cpu, text_cpu = (min(c for _, c in times[m]) for m in ("render", "text"))
    print(f"text / render CPU: 1 / {render_cpu / text_cpu:.1f}")
    for markup in ("render", "text"):
        info = json.loads(_coderiv("info", "--index", str(args.out / markup), "--format", "json").stdout)
        print(f"{markup}: {info['documents']} documents, {info['distinct_terms']} distinct terms, "
              f"{info['term_occurrences']} term occurrences")
        done = _coderiv("evaluate", "--index", str(args.out / markup), "--queries", str(args.corpora / "queries.tsv"),
                        "--qrels", str(args.corpora / "qrels.tsv"), "-m", args.measures, "--format", "tsv")
        for row in done.stdout.splitlines():
            print(f"  {markup:6} {row}")
    print(f"load average at end: {open('/proc/loadavg').read().split()[:3]}  ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")


if __name__ == "__main__":
    main()
