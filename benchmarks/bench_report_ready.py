"""A report-ready index against a terms-only one, side by side (issue 27), on long documents.

    python benchmarks/bench_report_ready.py [--docs 2500] [--words 8000] [--rounds 2] [--queries 1]

Builds the deterministic synthetic collection of ``bench_scale.py`` (thesis-length documents by
default: ~8,000 words) with ``coderiv index SRC`` (A) and ``coderiv index SRC --report-ready`` (B),
alternating A B A B, each in a fresh process; prints for every build its wall seconds, its CPU
seconds (user + system of the process and its workers: what the other jobs of a shared machine
disturb least) and the 1-minute load average at its start and end; then the ratios B ÷ A of the
medians, the index on disk ÷ the raw text of each, and the peak RSS (``/usr/bin/time -v``) of a
one-document ``coderiv query`` and ``coderiv report`` process on each index.
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

from bench_scale import materialize
from common import machine

CODERIV = [sys.executable, "-m", "coderiv"]


def run_measured(command: list[str]) -> tuple[float, float, tuple[float, float], str]:
    """(wall s, CPU s of the process and its waited-for workers by ``/usr/bin/time``, (1-minute
    load before, after), stderr) of ``command``."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "TIME %U %S %M", *command], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-400:]}")
    user, system, _ = re.findall(r"TIME (\S+) (\S+) (\S+)", done.stderr)[-1]
    return wall, float(user) + float(system), (load, os.getloadavg()[0]), done.stderr


def peak_rss_mb(command: list[str]) -> float:
    """Peak resident memory (MB) of ``command``'s process, by ``/usr/bin/time -v``."""
    done = subprocess.run(["/usr/bin/time", "-v", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-400:]}")
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)[1]) / 1024  # type: ignore[index]


def index_info(index: Path) -> dict[str, object]:
    done = subprocess.run([*CODERIV, "info", "--index", str(index), "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2500)
    parser.add_argument("--words", type=int, default=8000, help="Mean words per document.")
    parser.add_argument("--rounds", type=int, default=2, help="A B pairs, alternating.")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    tar = materialize(args.docs, 50, args.words)
    query_text = next(iter(json.loads(tar.with_suffix(".queries.json").read_text("utf-8")).values()))
    raw = tar.stat().st_size
    print(f"machine: {machine()}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; collection: {args.docs} documents of "
          f"~{args.words} words, {raw / 1e6:.0f} MB tar", flush=True)
    work = Path(tempfile.mkdtemp(prefix="coderiv-ready-"))
    query = work / "query.txt"
    query.write_text(query_text, "utf-8")
    workers = ["--workers", str(args.workers)] if args.workers else []
    kinds = {"terms-only": [], "report-ready": ["--report-ready"]}
    figures: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    try:
        for round_ in range(1, args.rounds + 1):
            for kind, flags in kinds.items():
                index = work / kind
                shutil.rmtree(index, ignore_errors=True)
                wall, cpu, load, _ = run_measured([*CODERIV, "index", str(tar), "--index", str(index), "-q", *workers, *flags])
                figures[kind].append((wall, cpu))
                print(f"  round {round_} {kind:<12}: wall {wall:6.1f} s, CPU {cpu:6.1f} s, load {load[0]:.1f}→{load[1]:.1f}", flush=True)
        wall_a, cpu_a = (statistics.median(x) for x in zip(*figures["terms-only"]))
        wall_b, cpu_b = (statistics.median(x) for x in zip(*figures["report-ready"]))
        print(f"report-ready ÷ terms-only build (medians): wall {wall_b / wall_a:.2f}×, CPU {cpu_b / cpu_a:.2f}×")
        for kind in kinds:
            info = index_info(work / kind)
            on_disk = int(info["index_bytes"])  # type: ignore[call-overload]
            print(f"{kind}: index {on_disk / 1e6:.0f} MB = {on_disk / raw:.2f}× the raw text (tar)", flush=True)
        for kind in kinds:
            index = work / kind
            query_mb = peak_rss_mb([*CODERIV, "query", str(query), "--index", str(index)])
            print(f"{kind}: one-query process peak RSS {query_mb:.0f} MB (load {os.getloadavg()[0]:.1f})", flush=True)
        report_mb = peak_rss_mb([*CODERIV, "report", str(query), "--index", str(work / "report-ready"), "--format", "json", "-q"])
        print(f"report-ready: one-report process peak RSS {report_mb:.0f} MB (load {os.getloadavg()[0]:.1f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
