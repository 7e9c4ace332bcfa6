"""Groups on the dev collection: one-way against mutual links, scored against release families.

    python benchmarks/bench_groups_dev.py [--corpus /work/shared/corpora] [--index /tmp/coderiv-dev-lineage] [--min 50]

A family is one path of one project in all its releases (docs.tsv). Two documents of one
family are a true pair; ``coderiv groups`` puts a pair together when both are in one group.
Printed for ``--one-way`` and the default (mutual) at each threshold: number of groups, the
largest group's size, documents grouped, and pairwise precision (share of grouped pairs that
are of one family) and recall (share of family pairs grouped together). The index needs its
chunks pair table (``coderiv pairs``); it is built if absent.
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from pathlib import Path

from coderiv import Index
from coderiv.pairs.groups import find_groups
from coderiv.pairs.methods import get_method
from coderiv.pairs.run import run_pairs
from coderiv.pairs.table import PairTable
from common import machine


def family_of(corpus: Path, indexed: set[str]) -> dict[str, tuple[str, str]]:
    """Each indexed document's family: (project, path)."""
    with open(corpus / "docs.tsv", encoding="utf-8") as handle:
        return {row["doc_id"]: (row["project"], row["path"]) for row in csv.DictReader(handle, delimiter="\t") if row["doc_id"] in indexed}


def pairs_of(sizes: Counter[object]) -> int:
    return sum(n * (n - 1) // 2 for n in sizes.values())


def score(groups: list[list[str]], family: dict[str, tuple[str, str]]) -> tuple[float, float]:
    """Pairwise precision and recall of ``groups`` against the families."""
    grouped = sum(len(g) * (len(g) - 1) // 2 for g in groups)
    right = sum(pairs_of(Counter(family[d] for d in g)) for g in groups)
    true = pairs_of(Counter(family.values()))
    return right / grouped if grouped else 1.0, right / true


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpora"))
    parser.add_argument("--index", type=Path, default=Path("/tmp/coderiv-dev-lineage"))
    parser.add_argument("--min", dest="mins", type=float, action="append")
    args = parser.parse_args()
    if not (args.index / "CURRENT").exists():
        Index.update_from(args.corpus / "corpus.tar.gz", args.index, stores=[get_method("chunks").store])
        run_pairs(Index.open(args.index), "chunks")
    index = Index.open(args.index)
    family = family_of(args.corpus, set(index.doc_ids))
    table = PairTable.open(index.pairs_index(), "chunks")
    print(machine())
    print(f"{len(family)} documents, {len(set(family.values()))} families, {pairs_of(Counter(family.values()))} same-family pairs")
    print("| --min | links | groups | largest | documents grouped | pairwise precision | pairwise recall |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for min_percent in args.mins or [30.0, 50.0, 70.0]:
        for label, mutual in (("one way (--one-way)", False), ("both ways (default)", True)):
            groups = [g.doc_ids for g in find_groups(table, min_percent, mutual)]
            precision, recall = score(groups, family)
            print(f"| {min_percent:g} | {label} | {len(groups)} | {max(map(len, groups), default=0)} | "
                  f"{sum(map(len, groups))} | {100 * precision:.1f}% | {100 * recall:.1f}% |")


if __name__ == "__main__":
    main()
