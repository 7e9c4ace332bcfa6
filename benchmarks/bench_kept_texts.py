"""Reading the dev collection's reStructuredText again, with the texts the index kept, against
reading it as plain text (issue 43 item 5).

Four readings of the dev tar, each ``coderiv index`` in a child process, timed in wall seconds
and CPU seconds of the whole process tree (the analysis workers included):

1. ``render`` first build: docutils renders every page and the workers keep each text
   (``extracted.sqlite``, :mod:`coderiv.text.extracted_cache`);
2. ``render`` again: the same index rebuilt with other analysis settings (``--no-stop``: every
   document is read and analysed again), the texts taken from the cache;
3. ``text`` first build and 4. ``text`` again (``--markup text``: the pages' sources decoded as
   plain text), the same two steps, for the ratio like for like.

Then one ``coderiv report`` of a dev document on the render index with its kept texts, and with
the cache file moved aside (the candidates rendered again), each in a fresh process.

    python benchmarks/bench_kept_texts.py [--corpora ../shared/corpora] [--out /tmp/coderiv-bench-kept]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import machine

ROOT = Path(__file__).resolve().parents[1]
#: The dev document the report checks (a long SQLAlchemy page: hundreds of candidates).
REPORT_DOC = "sqlalchemy-2.0.0/doc/build/orm/session_basics.rst"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _coderiv(*args: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``coderiv`` command in a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cpu, wall = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "coderiv", *args], capture_output=True, text=True, check=True, env=env)
    return time.perf_counter() - wall, _children_cpu() - cpu


def _load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora")
    parser.add_argument("--out", type=Path, default=Path("/tmp/coderiv-bench-kept"))
    args = parser.parse_args()
    tar = args.corpora / "corpus.tar.gz"
    print(machine())
    print(f"start {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {_load()}")
    rows = []
    for markup in ("render", "text"):
        index = args.out / markup
        shutil.rmtree(index, ignore_errors=True)
        first = _coderiv("index", str(tar), "--index", str(index), "--markup", markup, "-q")
        again = _coderiv("index", str(tar), "--index", str(index), "--no-stop", "--rebuild", "-q")
        rows.append((markup, first, again))
        print(f"{markup:6}: first build {first[0]:6.1f} s wall, {first[1]:6.1f} s CPU; read again {again[0]:6.1f} s wall, "
              f"{again[1]:6.1f} s CPU (load {_load()})")
    (_, _, render_again), (_, _, text_again) = rows
    print(f"render read again / text read again: wall {render_again[0] / text_again[0]:.2f}x, "
          f"CPU {render_again[1] / text_again[1]:.2f}x")
    (_, render_first, _), (_, text_first, _) = rows
    print(f"render first / text first: wall {render_first[0] / text_first[0]:.1f}x, CPU {render_first[1] / text_first[1]:.1f}x")
    index = args.out / "render"
    query = args.out / "query.rst"
    with __import__("tarfile").open(tar) as archive:
        member = archive.extractfile(REPORT_DOC)
        assert member is not None
        query.write_bytes(member.read())
    report = ["report", str(query), "--index", str(index), "--format", "json", "-q"]
    _coderiv(*report)  # the chunk store added once (from the kept texts)
    kept = _coderiv(*report)
    cache = index / "extracted.sqlite"
    cache.rename(index / "aside.sqlite")
    try:
        rendered = _coderiv(*report)
    finally:
        (index / "aside.sqlite").rename(cache)
    print(f"report of {REPORT_DOC}: with the kept texts {kept[0]:.2f} s wall, {kept[1]:.2f} s CPU; "
          f"rendering its candidates again {rendered[0]:.2f} s wall, {rendered[1]:.2f} s CPU (load {_load()})")


if __name__ == "__main__":
    main()
