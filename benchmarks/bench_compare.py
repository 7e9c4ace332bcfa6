"""How ``coderiv compare``'s time and memory grow with the texts' length (issue 10 item 12):
one fresh ``coderiv compare --format json`` process per size and method set, its CPU seconds
(user + system) and peak RSS read from ``wait4``. Prints a Markdown table for docs/overlap.md
and docs/performance.md.

Texts are synthetic Zipfian prose (:mod:`coderiv.evaluation.synthetic`'s vocabulary and
sentences): A, and B an edited copy of A (10% of words replaced, deleted or inserted), or one
text of one line compared with itself (the issue's worst case: no newline, every passage shared).

    nice -n 10 .venv/bin/python benchmarks/bench_compare.py [--sizes 1,2,4,8] [--passages 0.5,1]

Sizes are megabytes of A and B together. Run it under ``/usr/bin/time -v`` or watch memory:
8 MB takes about 0.6 GB; ``passages`` is quadratic (keep its sizes small).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from coderiv.evaluation.synthetic import _edit, _text, vocabulary
from common import machine

CODERIV = [sys.executable, "-c", "import sys; from coderiv.cli.main import main; sys.argv[0] = 'coderiv'; main()"]
LINEAR = ["shingles", "containment", "chunks", "patricia", "matching"]


def zipf_text(n_chars: int, seed: int, edited: bool) -> tuple[str, str]:
    """A text of about ``n_chars`` characters and an edited copy of it (or itself)."""
    words = np.array(vocabulary(50_000, seed))
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -1.07)
    cdf /= cdf[-1]
    rng = np.random.default_rng(seed)
    ids = np.searchsorted(cdf, rng.random(n_chars // 9))  # about 9 characters a word with its space
    a = _text(words[ids])
    b = _text(words[_edit(ids, 0.1, cdf, rng)]) if edited else a
    return a, b


def run(a: Path, b: Path, methods: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one ``coderiv compare`` process."""
    args = [*CODERIV, "compare", "--format", "json", str(a), str(b)]
    for m in methods:
        args += ["-m", m]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"compare failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,2,4,8", help="MB of A and B together, linear methods")
    parser.add_argument("--passages", default="0.5,1", help="MB of A and B together, passages alone")
    args = parser.parse_args()
    print(f"# {machine()}; {time.strftime('%d %b %Y %H:%M UTC', time.gmtime())}; load {os.getloadavg()[0]:.1f}")
    print("| A and B together | texts | methods | wall | CPU | CPU per MB | peak RSS | RSS per MB |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    cases = [(float(s), "edited copy", LINEAR) for s in args.sizes.split(",") if s]
    cases += [(float(s), "one line, itself", ["matching"]) for s in args.sizes.split(",") if s]
    cases += [(float(s), "edited copy", ["passages"]) for s in args.passages.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        for size, texts, methods in cases:
            half = int(size * 1_000_000 / 2)
            a_text, b_text = zipf_text(half, 2003, edited=texts == "edited copy")
            if texts.startswith("one line"):
                a_text = b_text = a_text.replace("\n", " ")
            a, b = Path(tmp, "a.txt"), Path(tmp, "b.txt")
            a.write_text(a_text, encoding="utf-8")
            b.write_text(b_text, encoding="utf-8")
            total = (len(a_text) + len(b_text)) / 1e6
            wall, cpu, rss = run(a, b, methods)
            label = "all but passages" if methods == LINEAR else " ".join(methods)
            print(
                f"| {total:.1f} MB | {texts} | {label} | {wall:.1f} s | {cpu:.1f} s | {cpu / total:.2f} s "
                f"| {rss:,.0f} MB | {rss / total:.0f} MB |",
                flush=True,
            )


if __name__ == "__main__":
    main()
