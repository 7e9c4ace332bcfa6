"""Groups of the dev collection against its release-version families.

    python benchmarks/bench_pairs_dev.py [--corpus /work/shared/corpora] [--index /tmp/coderiv-dev-pairs]

A family is one path of one project in all its releases (docs.tsv: project, version, path), the
collection's own notion of coderivatives. For each method and --min threshold, ``coderiv groups``
is compared with the families by pairwise precision and recall (pairs of documents put in the
same group vs pairs in the same family) and by how many groups are exactly a family.
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter, defaultdict
from pathlib import Path

from coderiv import Index
from coderiv.pairs.groups import find_groups
from coderiv.pairs.methods import METHODS
from coderiv.pairs.run import run_pairs
from coderiv.pairs.table import PairTable
from common import machine, peak_rss_mb, timed


def families(corpus: Path) -> dict[str, tuple[str, str]]:
    """doc id → (project, path): its release-version family."""
    with open(corpus / "docs.tsv", encoding="utf-8") as handle:
        return {row["doc_id"]: (row["project"], row["path"]) for row in csv.DictReader(handle, delimiter="\t")}


def pairs_in(sizes: list[int]) -> int:
    return sum(s * (s - 1) // 2 for s in sizes)


def compare(groups: list[list[str]], family_of: dict[str, tuple[str, str]]) -> dict[str, float]:
    """Pairwise precision/recall of the groups against the families; exact matches."""
    members: dict[tuple[str, str], set[str]] = defaultdict(set)
    for doc_id, family in family_of.items():
        members[family].add(doc_id)
    together = sum(pairs_in(list(Counter(family_of[d] for d in g).values())) for g in groups)
    predicted = pairs_in([len(g) for g in groups])
    true = pairs_in([len(m) for m in members.values()])
    exact = sum(1 for g in groups if set(g) == members[family_of[g[0]]])
    multi = sum(1 for m in members.values() if len(m) > 1)
    return {
        "precision": together / predicted if predicted else 1.0,
        "recall": together / true if true else 1.0,
        "groups": len(groups),
        "exact": exact,
        "families": multi,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpora"))
    parser.add_argument("--index", type=Path, default=Path("/tmp/coderiv-dev-pairs"))
    parser.add_argument("--methods", default="chunks,resemblance,identity5")
    parser.add_argument("--mins", default="30,50,70")
    args = parser.parse_args()
    methods = args.methods.split(",")
    print(f"machine: {machine()}")
    seconds, report = timed(lambda: Index.update_from(
        args.corpus / "corpus.tar.gz", args.index, stores=[METHODS[m].store for m in methods], workers=2))
    print(f"index: {report.n_docs} documents, {seconds:.1f} s")
    index = Index.open(args.index)
    family_of = {d: f for d, f in families(args.corpus).items() if d in index.doc_numbers}
    for method in methods:
        seconds, run = timed(lambda method=method: run_pairs(index, method, full=True))
        print(f"\n{method}: pairs {seconds:.1f} s, {run.shared_pairs} pairs share keys; boilerplate: "
              f"{run.skipped_keys} keys in more than {run.max_df} documents skipped ({run.skipped_postings} postings)")
        table = PairTable.open(index, method)
        for mutual in (False, True):
            for threshold in [float(x) for x in args.mins.split(",")]:
                groups = [g.doc_ids for g in find_groups(table, threshold, mutual)]
                r = compare(groups, family_of)
                flag = " --mutual" if mutual else ""
                print(f"  groups --min {threshold:g}{flag}: {r['groups']} groups, {r['exact']} exactly a family "
                      f"(of {r['families']} families of 2+), pairwise precision {r['precision']:.3f}, recall {r['recall']:.3f}")
    print(f"\npeak RSS {peak_rss_mb()[0]:.0f} MB")


if __name__ == "__main__":
    main()
