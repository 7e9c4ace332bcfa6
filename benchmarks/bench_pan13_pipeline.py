"""The whole pipeline on PAN 2013's training corpus (issue 40): ``coderiv report`` of suspicious
documents against an index of all the corpus's sources, its credited passages judged as PAN
detections against the truth of the sub-corpus's pairs, and the time a report takes.

Each chosen suspicious document (every ``--every``-th one with a case in the sub-corpus) gets its
report (default options); its detections are the report's counted passages credited to a source
(what ``report --format pan`` writes), named by the source's document id; the cases are those of
the sub-corpus's pairs of that document, and the detections judged are those of these pairs (as
PAN's per-obfuscation measures judge them: a suspicious document also copies, with other
obfuscations, from sources of other sub-corpora). The index is built once (``coderiv index SRC
--report-ready``) into ``--index``.

    .venv/bin/python benchmarks/bench_pan13_pipeline.py [--corpus /tmp/pan13-train/pan13-train]
        [--index /tmp/pan13-train-index] [--every 10] [--only 03,04,05]

The PAN 2013 *test* corpora are held out: this script reads the training corpus only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from coderiv.evaluation.pan import measure
from coderiv.index.index import Index
from coderiv.overlap.align.pan_format import DETECTED, Feature, read_folder, read_raw
from coderiv.ranking.containment import chunk_store_spec
from coderiv.report import build_report
from coderiv.report.model import Report
from common import machine


def detections(report: Report, name: str) -> list[Feature]:
    """The report's counted passages with words credited to their source, as PAN detections."""
    return [
        Feature(name, p.query_start, p.query_end - p.query_start, p.doc_id, p.source_start, p.source_end - p.source_start, DETECTED)
        for source in report.sources for p in source.passages if p.excluded is None and p.credited_words > 0
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/pan13-train/pan13-train"))
    parser.add_argument("--index", type=Path, default=Path("/tmp/pan13-train-index"))
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--only", default="03,04,05")
    args = parser.parse_args()
    if not (args.index / "CURRENT").exists():
        Index.update_from(args.corpus / "src", args.index, stores=[chunk_store_spec()])
    index = Index.open(args.index)
    print(f"{machine()}, load {os.getloadavg()[0]:.2f}, {index.n_docs} sources indexed, every {args.every} document(s)")
    print("| sub-corpus | documents | cases | detections | plagdet | precision | recall | granularity | s per report (median / max) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    every_case: dict[str, list[tuple[str, Feature]]] = {}  # a suspicious document's cases, with their sub-corpus
    for folder in sorted(p for p in args.corpus.iterdir() if p.is_dir() and p.name[:2].isdigit()):
        for features in read_folder(folder).values():
            for f in features:
                if f.name == "plagiarism" and f.source_reference:
                    every_case.setdefault(f.this_reference, []).append((folder.name, f))
    for folder in sorted(p for p in args.corpus.iterdir() if p.is_dir() and p.name[:2] in args.only.split(",")):
        chosen = sorted(n for n, cs in every_case.items() if any(sub == folder.name for sub, _ in cs))[:: args.every]
        cases, found, seconds = [], [], []
        for name in chosen:
            text = read_raw(args.corpus / "susp" / name)
            t = time.perf_counter()
            report = build_report(index, text, name)
            seconds.append(time.perf_counter() - t)
            cases += [f for sub, f in every_case[name] if sub == folder.name]
            found += detections(report, name)
        pairs = {(c.this_reference, c.source_reference) for c in cases}
        m = measure(cases, [d for d in found if (d.this_reference, d.source_reference) in pairs])
        print(f"| {folder.name} | {len(chosen)} | {m.cases} | {m.detections} | {m.plagdet:.3f} | {m.precision:.3f} | "
              f"{m.recall:.3f} | {m.granularity:.3f} | {statistics.median(seconds):.2f} / {max(seconds):.2f} |", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
