"""The report with aligned passages (issue 24), measured three ways.

1. **Source recall on PAN 2013** (``shared/corpora/pan13-dev.tar.gz``): the 1,949 source
   documents are indexed (with the chunk store); each of the 85 suspicious documents gets its
   report (default options); a pair (suspicious, source) is *found* when the source, or one of its
   grouped versions, is among the report's sources. Beside it: the same recall for the
   containment search's top 20.
2. **The overall figure on generated cases** (``shared/corpora/corpus.tar.gz``, the dev
   collection): ``generate_pan`` pastes 1-2 passages of a document into a document of another
   project at the level asked (``low``: random word operations at 10% of the positions); the
   sources are indexed; the truth is the share of the suspicious document's words inside the
   pasted passages; the report's overall figure is set beside it (sum of reported / sum of true,
   and the mean absolute difference in points).
3. **A thesis-length report**: 20 suspicious documents of PAN 2013 joined (about 30,000 words)
   against the PAN source index: the time to build it.

    python benchmarks/eval_report_alignment.py [--pairs 100] [--level low] [--sample 600] [--work /tmp/ev-bench]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tarfile
import time
from pathlib import Path

from coderiv.evaluation.pan_generate import generate_pan
from coderiv.index.index import Index
from coderiv.overlap.align.pan_format import pair_file_name, read_pair, read_pairs, read_raw
from coderiv.ranking.containment import chunk_store_spec
from coderiv.ranking.searchers import chunk_searcher
from coderiv.report import build_report
from coderiv.text.collection import iter_collection
from coderiv.text.exclusions import word_bounds
from common import machine

SHARED = Path(__file__).resolve().parents[2] / "shared"


def build_index(folder: Path, out: Path) -> Index:
    if not (out / "CURRENT").exists():
        Index.update_from(folder, out, stores=[chunk_store_spec()], workers=1)
    return Index.open(out)


def pan_recall(work: Path) -> None:
    root = work / "pan13-dev"
    if not root.exists():
        with tarfile.open(SHARED / "corpora/pan13-dev.tar.gz") as tar:
            tar.extractall(work, filter="data")
    t = time.perf_counter()
    index = build_index(root / "src", work / "pan-idx")
    print(f"PAN 2013 source index: {index.n_docs} documents ({time.perf_counter() - t:.1f} s)")
    pairs = read_pairs(root / "pairs")
    wanted: dict[str, set[str]] = {}
    for susp, src in pairs:
        wanted.setdefault(susp, set()).add(src)
    containment = chunk_searcher(index)
    found = top20 = 0
    seconds: list[float] = []
    sources: list[int] = []
    for susp, srcs in sorted(wanted.items()):
        text = read_raw(root / "susp" / susp)
        t = time.perf_counter()
        report = build_report(index, text, susp)
        seconds.append(time.perf_counter() - t)
        listed = {s.doc_id for s in report.sources} | {v.doc_id for s in report.sources for v in s.versions}
        sources.append(len(report.sources))
        found += len(srcs & listed)
        ranked = {m.doc_id for m in containment.rank(containment.prepare(text), 20).matches}
        top20 += len(srcs & ranked)
    n = sum(len(s) for s in wanted.values())
    print(f"| pan13-dev source recall | report {found / n:.3f} ({found}/{n}) | containment top 20 {top20 / n:.3f} "
          f"| sources per report: median {statistics.median(sources):.0f}, max {max(sources)} "
          f"| report time median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s |")
    thesis = "\n\n".join(read_raw(root / "susp" / s) for s in sorted(wanted)[:20])
    t = time.perf_counter()
    report = build_report(index, thesis, "thesis")
    print(f"thesis: {len(word_bounds(thesis)[0]):,} words, {len(report.sources)} sources, overall {report.overall:.1f}%, "
          f"{report.candidates} candidates aligned: {time.perf_counter() - t:.2f} s")


def generated(work: Path, count: int, level: str, sample: int) -> None:
    """Each case against an index of its own source alone (the overall figure), and the true
    source's share against an index of every case's source (other sources as distractors; the
    generator's hosts are collection documents too, so there a host's other releases explain
    the host's own text and the overall figure means nothing)."""
    out = work / f"gen-{level}"
    if not (out / "pairs").exists():
        t = time.perf_counter()
        generate_pan(iter_collection(SHARED / "corpora/corpus.tar.gz"), out, count, level, seed=7, sample=sample)
        print(f"generated {count} {level} pairs ({time.perf_counter() - t:.0f} s)")
    shared_index = build_index(out / "src", work / f"gen-{level}-idx")
    rows: list[tuple[float, float, float]] = []  # truth, overall (own index), source share (shared index)
    for susp, src in read_pairs(out / "pairs"):
        text = read_raw(out / "susp" / susp)
        starts, ends = word_bounds(text)
        cases = read_pair(out / "truth" / pair_file_name(susp, src))
        inside = sum(int(((starts >= c.this_offset) & (ends <= c.this_end)).sum()) for c in cases)
        truth = 100.0 * inside / len(starts)
        one = work / f"gen-{level}-one"
        shutil.rmtree(one, ignore_errors=True)
        (one / "docs").mkdir(parents=True)
        shutil.copy(out / "src" / src, one / "docs" / src)
        own = build_index(one / "docs", one / "idx")
        overall = build_report(own, text, susp).overall
        shared = build_report(shared_index, text, susp)
        share = sum(s.matched_percent for s in shared.sources if src in {s.doc_id, *(v.doc_id for v in s.versions)})
        rows.append((truth, overall, share))
    truth_sum = sum(r[0] for r in rows)
    for name, k in (("overall figure, own source indexed", 1), ("true source's matched share, all sources indexed", 2)):
        ratios = [r[k] / r[0] for r in rows if r[0]]
        print(f"| generated {level}, {len(rows)} pairs (dev collection, seed 7): {name} | truth mean {truth_sum / len(rows):.1f}% "
              f"| report mean {sum(r[k] for r in rows) / len(rows):.1f}% | reported / true {sum(r[k] for r in rows) / truth_sum:.3f} "
              f"| mean abs. difference {statistics.mean(abs(r[k] - r[0]) for r in rows):.2f} points "
              f"| cases within 10% of the truth {sum(1 for x in ratios if 0.9 <= x <= 1.1) / len(ratios):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--level", default="low")
    parser.add_argument("--sample", type=int, default=600)
    parser.add_argument("--work", type=Path, default=Path("/tmp/ev-bench"))
    parser.add_argument("--skip-pan", action="store_true")
    parser.add_argument("--skip-generated", action="store_true")
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    if args.fresh:
        shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"load {open('/proc/loadavg').read().split()[:3]}")
    if not args.skip_generated:
        generated(args.work, args.pairs, args.level, args.sample)
    if not args.skip_pan:
        pan_recall(args.work)


if __name__ == "__main__":
    main()
