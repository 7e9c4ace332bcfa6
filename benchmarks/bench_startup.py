"""Where the start-up of ``coderiv query`` and ``coderiv report`` goes (issue 27): the time
before work starts, which is almost all imports.

    python benchmarks/bench_startup.py [--runs 5]

For each command prints the median wall time of ``coderiv CMD --help`` (interpreter, command
group and the command's module) and of importing everything the command's work needs
(``python -X importtime``: the total, and the self time summed by package), with the 1-minute
load average, alternating the commands run by run (a shared machine's load drifts).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict

from common import machine

#: What each command imports before its work starts (its module, then what its work needs).
WORK_IMPORTS = {
    "query": "import coderiv.cli.query, coderiv.ranking.searchers, coderiv.text.reading",
    "report": "import coderiv.cli.report, coderiv.report, coderiv.report.build, coderiv.text.reading",
}
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)")


def wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def import_profile(statement: str) -> tuple[float, dict[str, float]]:
    """(total seconds of the imports, self seconds by group) from ``-X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], capture_output=True, text=True, check=True)
    groups: dict[str, float] = defaultdict(float)
    total = 0.0
    for own, _, _, name in LINE.findall(done.stderr):
        seconds = int(own) / 1e6
        total += seconds
        parts = name.split(".")
        top = parts[0].lstrip("_")
        group = ".".join(parts[:2]) if parts[0] == "coderiv" else "stdlib" if top in sys.stdlib_module_names else parts[0]
        groups[group] += seconds
    return total, dict(groups)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine()}; date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    helps: dict[str, list[float]] = defaultdict(list)
    totals: dict[str, list[float]] = defaultdict(list)
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    loads = []
    for _ in range(args.runs):
        for name, statement in WORK_IMPORTS.items():
            loads.append(os.getloadavg()[0])
            helps[name].append(wall([sys.executable, "-m", "coderiv", name, "--help"]))
            total, by_group = import_profile(statement)
            totals[name].append(total)
            groups[name].append(by_group)
    print(f"load (1-minute) during the runs: {min(loads):.1f}–{max(loads):.1f}")
    for name in WORK_IMPORTS:
        print(f"coderiv {name}: --help wall {statistics.median(helps[name]):.2f} s (median of {args.runs}); "
              f"imports before work {statistics.median(totals[name]):.2f} s (-X importtime total)")
        last = groups[name][len(groups[name]) // 2]
        top = sorted(last.items(), key=lambda kv: -kv[1])[:12]
        print("   self time by package: " + ", ".join(f"{g} {1000 * s:.0f} ms" for g, s in top))


if __name__ == "__main__":
    main()
