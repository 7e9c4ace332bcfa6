"""Issue 43's four-thesis case: does a batch's summary name the source a thesis copied from?

Four theses are made of a PAN 2013 training source document each (English prose that is not in
the dev collection: the student's own text) with paragraphs of one dev-collection page pasted
into the middle, until they make 10-30% of the thesis. ``coderiv query THESES --exclude-self``
against an index of the dev collection then prints, per thesis, its best match; the script says
whether that is the page copied from (or the same page of another release: the releases hold
the same paragraphs). Before issue 43 the summary named identity5's top, a long changelog or
``EXAMPLES.rst`` at 1.7-1.9%; now it names the document that holds the most of the thesis.

    python benchmarks/eval_batch_best_match.py --index /tmp/dev/idx [--work /tmp/four-theses]

(the index: ``coderiv index ../shared/corpora/corpus.tar.gz --index /tmp/dev/idx --report-ready``)
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tarfile
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def same_page(a: str, b: str) -> bool:
    """Two ids of one page in two releases (``sqlalchemy-1.4.0/doc/x.rst``, ``sqlalchemy-2.0.0/doc/x.rst``)."""
    return a.split("/", 1)[1] == b.split("/", 1)[1] and a.split("-", 1)[0] == b.split("-", 1)[0]


def make_theses(work: Path, seed: int = 7) -> dict[str, str]:
    """Write the four theses into ``work``; return thesis file name -> the page copied."""
    rng = random.Random(seed)
    with tarfile.open(SHARED / "pan13-train.tar.gz") as pan:
        own_names = sorted(m for m in pan.getnames() if m.startswith("pan13-train/src/") and m.endswith(".txt"))[:4]
        owns = [pan.extractfile(name).read().decode("utf-8") for name in own_names]  # type: ignore[union-attr]
    pages = []
    with tarfile.open(SHARED / "corpus.tar.gz") as dev:
        for member in dev.getmembers():
            if not member.isfile() or not member.name.endswith(".rst"):
                continue
            text = dev.extractfile(member).read().decode("utf-8", "replace")  # type: ignore[union-attr]
            paragraphs = [p for p in re.split(r"\n\s*\n", text)
                          if len(p.split()) >= 40 and not p.lstrip().startswith(("..", "=", "-", "*", "|", ":"))]
            if 1500 <= len(text.split()) <= 4000 and len(paragraphs) >= 6:
                pages.append((member.name, paragraphs))
    rng.shuffle(pages)
    work.mkdir(parents=True, exist_ok=True)
    copied_from = {}
    for k, own in enumerate(owns):
        name, paragraphs = pages[k]
        copied: list[str] = []
        for paragraph in paragraphs[:6]:
            if sum(len(c.split()) for c in copied) >= 0.15 * len(own.split()):
                break
            copied.append(paragraph)
        own_paragraphs = re.split(r"\n\s*\n", own)
        middle = len(own_paragraphs) // 2
        thesis = f"thesis{k + 1}.txt"
        (work / thesis).write_text("\n\n".join(own_paragraphs[:middle] + copied + own_paragraphs[middle:]), "utf-8")
        words = sum(len(c.split()) for c in copied)
        print(f"{thesis}: {words} words of {name} in {words + len(own.split())} ({100 * words / (words + len(own.split())):.0f}%)")
        copied_from[thesis] = name
    return copied_from


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--work", default="/tmp/four-theses")
    args = parser.parse_args()
    copied_from = make_theses(Path(args.work))
    run = subprocess.run(
        [sys.executable, "-m", "coderiv", "query", args.work, "--index", args.index, "--exclude-self", "-k", "3",
         "--format", "jsonl"], capture_output=True, text=True, check=True,
    )
    records = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    found = 0
    for record in records:
        thesis = Path(record["query"]).name
        hit = same_page(record["best_match"], copied_from[thesis])
        found += hit
        print(f"{thesis}: best match {record['best_match']} ({record['best_measure']} {record['best_percent']:.1f}%, "
              f"{record['whole_document_measure']} {record['whole_document_percent']:.1f}%), ranked top "
              f"{record['top_ranked']}: {'the page copied' if hit else 'NOT the page copied'}")
    print(f"{found} of {len(records)} summaries name the page copied")


if __name__ == "__main__":
    main()
