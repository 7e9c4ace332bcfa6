"""The commit of a report-ready build (checksums, fsyncs, publish), old code against new.

    python benchmarks/bench_commit.py SRC.tar A=/path/to/old/src B=/path/to/new/src [--rounds 2]

Builds ``coderiv index SRC --report-ready`` in a fresh process per build, each source tree first
on the path, alternating A B A B; the child wraps :func:`coderiv.index.format.storage.commit` and
prints its wall seconds and the process's CPU seconds during it (``time.process_time``: every
thread, the commit's checksum threads included), with the 1-minute load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import machine

CHILD = """
import json, os, sys, time
from coderiv.index.format import storage
real = storage.commit
spent = []
def timed(root, staging):
    wall, cpu = time.perf_counter(), time.process_time()
    size = sum(p.stat().st_size for p in staging.rglob("*") if p.is_file())
    generation = real(root, staging)
    spent.append((time.perf_counter() - wall, time.process_time() - cpu, size))
    return generation
storage.commit = timed
from coderiv.cli import main
try:
    main(["index", sys.argv[1], "--index", sys.argv[2], "--report-ready", "--quiet"], standalone_mode=False)
finally:
    print(json.dumps(spent))
"""


def build(src: Path, tree: str, tar: str) -> tuple[float, float, int, float, float]:
    """(commit wall s, commit CPU s, bytes committed, load before, load after) of one build."""
    folder = Path(tempfile.mkdtemp(prefix="bench-commit-"))
    try:
        load = os.getloadavg()[0]
        env = {**os.environ, "PYTHONPATH": tree}
        done = subprocess.run([sys.executable, "-c", CHILD, tar, str(folder / "i")], env=env, capture_output=True,
                              text=True, check=True)
        spent = json.loads(done.stdout.strip().splitlines()[-1])
        wall, cpu, size = (sum(s[i] for s in spent) for i in range(3))
        return wall, cpu, int(size), load, os.getloadavg()[0]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tar")
    parser.add_argument("trees", nargs="+", help="LABEL=SRC_DIR, run in this order each round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(machine())
    for round_ in range(args.rounds):
        for labelled in args.trees:
            label, tree = labelled.split("=", 1)
            wall, cpu, size, before, after = build(Path(args.tar), tree, args.tar)
            print(f"round {round_ + 1} {label}: commit {wall:.3f} s wall, {cpu:.3f} s CPU, {size / 1e6:.0f} MB, "
                  f"load {before:.2f} -> {after:.2f}", flush=True)


if __name__ == "__main__":
    main()
