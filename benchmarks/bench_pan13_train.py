"""Text alignment on PAN 2013's text-alignment training corpus, per sub-corpus (issue 40):
plagdet, precision, recall, granularity, detections and the time per pair, beside the PAN 2014
winner's published plagdet (Sanchez-Perez, Sidorov & Gelbukh, CLEF 2014 Working Notes, CEUR-WS
Vol-1180: none 0.894, random 0.889, translation 0.884, summary 0.577, whole corpus 0.877).

Each pair is aligned as ``coderiv align`` aligns it (:func:`coderiv.overlap.align.align_texts` on
the raw texts, detections written as PAN XML) and judged as ``coderiv evaluate --pan`` judges
it (:func:`coderiv.evaluation.pan.evaluate_folders` on the truth XMLs of the pairs aligned).
The time per pair is the alignment's alone (reading and writing files left out), in CPU time of
the process (``time.process_time``): on a machine shared with other work, wall time per pair
moved 2-4x with the load, CPU time far less.

    tar xzf ../shared/corpora/pan13-train.tar.gz -C /tmp/pan13-train
    .venv/bin/python benchmarks/bench_pan13_train.py [--corpus /tmp/pan13-train/pan13-train]
        [--every K] [--only 03,05] [--out DIR]

``--every K`` keeps every K-th pair of each sub-corpus (a fixed subset, the same on every run).
The PAN 2013 *test* corpora are held out: this script reads the training corpus only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from coderiv.evaluation.pan import PanMeasures, evaluate_folders
from coderiv.overlap.align import align_texts
from coderiv.overlap.align.pan import detections
from coderiv.overlap.align.pan_format import pair_file_name, read_pairs, read_raw, write_pair
from common import machine

#: The PAN 2014 winner's plagdet on this corpus (README of the corpus; the paper's Table 3).
WINNER = {"01": None, "02": 0.894, "03": 0.889, "04": 0.884, "05": 0.577, "all": 0.877}


def run(folder: Path, corpus: Path, every: int, out: Path, truth: Path) -> tuple[list[float], int]:
    """Align every ``every``-th pair of ``folder``; detections into ``out``, the pairs' truth
    XMLs linked into ``truth``. Returns the alignment's seconds per pair and the pair count."""
    pairs = read_pairs(folder / "pairs")[::every]
    seconds = []
    texts: dict[str, str] = {}
    for susp, src in pairs:
        if susp not in texts:
            texts = {susp: read_raw(corpus / "susp" / susp)}
        b = read_raw(corpus / "src" / src)
        t = time.process_time()
        found = align_texts(texts[susp], b)
        seconds.append(time.process_time() - t)
        write_pair(out, susp, src, detections(susp, src, found))
        name = pair_file_name(susp, src)
        os.symlink(folder / name, truth / name)
    return seconds, len(pairs)


def line(label: str, m: PanMeasures, seconds: list[float], winner: float | None) -> str:
    mean = 1000 * statistics.fmean(seconds) if seconds else 0.0
    median = 1000 * statistics.median(seconds) if seconds else 0.0
    p99 = 1000 * sorted(seconds)[int(0.99 * (len(seconds) - 1))] if seconds else 0.0
    best = f"{winner:.3f}" if winner is not None else "-"
    return (f"| {label} | {len(seconds)} | {m.cases} | {m.detections} | {m.plagdet:.3f} | {m.precision:.3f} | "
            f"{m.recall:.3f} | {m.granularity:.3f} | {best} | {median:.1f} / {mean:.1f} / {p99:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/pan13-train/pan13-train"))
    parser.add_argument("--every", type=int, default=1, help="keep every K-th pair of each sub-corpus")
    parser.add_argument("--only", default="", help="comma-separated sub-corpus prefixes (01..05); all by default")
    parser.add_argument("--out", type=Path, default=None, help="keep the detections here (default: a temporary folder)")
    args = parser.parse_args()
    folders = sorted(p for p in args.corpus.iterdir() if p.is_dir() and p.name[:2].isdigit())
    if args.only:
        folders = [p for p in folders if p.name[:2] in args.only.split(",")]
    print(f"{machine()}, load {os.getloadavg()[0]:.2f}, every {args.every} pair(s)")
    print("| sub-corpus | pairs | cases | detections | plagdet | precision | recall | granularity | PAN 2014 winner "
          "| CPU ms per pair (median / mean / p99) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    work = Path(tempfile.mkdtemp(prefix="pan13-train-"))
    out = args.out or work / "detections"
    all_truth, all_found, all_seconds = work / "truth-all", work / "found-all", []
    all_truth.mkdir()
    all_found.mkdir()
    try:
        for folder in folders:
            truth, found = work / f"truth-{folder.name}", out / folder.name
            truth.mkdir()
            found.mkdir(parents=True, exist_ok=True)
            seconds, _ = run(folder, args.corpus, args.every, found, truth)
            all_seconds += seconds
            for p in truth.iterdir():
                os.symlink(p.resolve(), all_truth / p.name)
            for p in found.iterdir():
                shutil.copy(p, all_found / p.name)
            m = evaluate_folders(truth, found).overall
            print(line(folder.name, m, seconds, WINNER.get(folder.name[:2])), flush=True)
        if len(folders) > 1:
            whole = evaluate_folders(all_truth, all_found).overall
            print(line("whole corpus", whole, all_seconds, WINNER["all"] if not args.only else None))
    finally:
        shutil.rmtree(work)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
