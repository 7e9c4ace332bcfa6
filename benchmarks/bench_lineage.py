"""Lineage on the dev collection: inferred parents and order against the true release order.

    python benchmarks/bench_lineage.py [--corpus /work/shared/corpora] [--index /tmp/coderiv-dev-lineage]

A family is one path of one project in all its releases (docs.tsv); its true history is the
release order (the version numbers). For every family present in two releases or more, the
lineage of the family's documents is derived twice: with the release order as dates, and from
the text alone. Printed per setting:

* parent accuracy: share of documents (first release excluded) whose parent is the same page in
  the previous release; also over the documents whose text differs from that previous release
  (an unchanged page gives no text evidence of order: its link is a ``tie``), and counting a
  parent as right when it has the same text as the previous release (identical copies cannot be
  told apart by their text);
* root accuracy: share of families whose root is their first release;
* direction accuracy of the inferred links: share whose parent is of an earlier release, by
  basis and confidence (the calibration of :func:`coderiv.pairs.lineage.text_confidence`);
* Kendall's tau-b between depth in the tree and release order, mean over families (3+ releases).

Then the time of ``coderiv lineage --all`` (pair-table groups at --min 50) over the whole index.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from coderiv import Index
from coderiv.pairs.dates import DocDate
from coderiv.pairs.lineage import TEXT, Lineage, derive_lineage, index_lineages, index_profiles
from coderiv.pairs.methods import get_method
from coderiv.pairs.run import run_pairs
from common import machine


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def families(corpus: Path, indexed: set[str]) -> dict[tuple[str, str], list[str]]:
    """(project, path) → doc ids in release order, for paths in two releases or more."""
    members: dict[tuple[str, str], list[tuple[tuple[int, ...], str]]] = defaultdict(list)
    with open(corpus / "docs.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["doc_id"] in indexed:
                members[(row["project"], row["path"])].append((version_key(row["version"]), row["doc_id"]))
    return {f: [d for _, d in sorted(m)] for f, m in members.items() if len(m) >= 2}


def depth_of(lineage: Lineage) -> dict[str, int]:
    return {link.doc_id: depth for depth, link in lineage.preorder()}


def evaluate(
    fams: dict[tuple[str, str], list[str]], lineages: dict[tuple[str, str], Lineage], identical: set[str], same: dict[str, bytes]
) -> None:
    right = total = right_changed = changed = roots = up_to_copies = 0
    buckets: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    taus = []
    for family, order in fams.items():
        lineage = lineages[family]
        parent = lineage.parent_of()
        position = {d: i for i, d in enumerate(order)}
        roots += parent[order[0]] is None
        for previous, doc in zip(order, order[1:]):
            total += 1
            right += parent[doc] == previous
            up_to_copies += parent[doc] is not None and same[parent[doc]] == same[previous]
            if doc not in identical:
                changed += 1
                right_changed += parent[doc] == previous
        for link in lineage.links:
            if link.parent is None:
                continue
            label = link.basis if link.basis != TEXT else f"text, confidence {min(int(link.confidence * 10) / 10, 0.8):.1f}+"
            buckets[label][0] += position[link.parent] < position[link.doc_id]
            buckets[label][1] += 1
        if len(order) >= 3:
            depth = depth_of(lineage)
            tau = kendalltau([depth[d] for d in order], list(range(len(order)))).statistic
            if not np.isnan(tau):
                taus.append(tau)
    print(f"  parent accuracy: {right}/{total} = {100 * right / total:.1f}%;"
          f" documents changed since the previous release: {right_changed}/{changed} = {100 * right_changed / changed:.1f}%")
    print(f"  parent has the text of the previous release (right up to identical copies): {up_to_copies}/{total}"
          f" = {100 * up_to_copies / total:.1f}%")
    print(f"  root accuracy: {roots}/{len(fams)} = {100 * roots / len(fams):.1f}%")
    print(f"  Kendall tau-b of depth vs release order (families of 3+, {len(taus)} with a defined tau): mean {np.mean(taus):.3f}")
    print("  links whose parent is of an earlier release, by basis:")
    for label in sorted(buckets):
        good, count = buckets[label]
        print(f"    {label:28s} {good:5d}/{count:<5d} = {100 * good / count:.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpora"))
    parser.add_argument("--index", type=Path, default=Path("/tmp/coderiv-dev-lineage"))
    args = parser.parse_args()
    if not (args.index / "CURRENT").exists():
        Index.update_from(args.corpus / "corpus.tar.gz", args.index, stores=[get_method("chunks").store])
        run_pairs(Index.open(args.index), "chunks")
    index = Index.open(args.index)
    fams = families(args.corpus, set(index.doc_ids))
    print(machine())
    print(f"{len(fams)} families in 2+ releases, {sum(len(f) for f in fams.values())} documents")
    profiles = index_profiles(index, [d for f in fams.values() for d in f])
    identical = {doc for order in fams.values() for prev, doc in zip(order, order[1:])
                 if np.array_equal(profiles[prev].chunks, profiles[doc].chunks)}
    same = {d: hashlib.sha256(p.chunks.tobytes()).digest() for d, p in profiles.items()}
    print(f"{len(identical)} documents have the same chunks as the previous release (no text evidence of order)")
    start = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
    for setting in ("release order as dates", "text only"):
        t0 = time.perf_counter()
        lineages = {}
        for family, order in fams.items():
            dates = {d: DocDate(start + dt.timedelta(days=i), "release") for i, d in enumerate(order)} if setting != "text only" else None
            lineages[family] = derive_lineage([profiles[d] for d in order], dates)
        print(f"{setting} ({time.perf_counter() - t0:.2f} s):")
        evaluate(fams, lineages, identical, same)
    # End to end, as `coderiv lineage --all` answers: the pair table's groups, not the families.
    release_dates = {d: DocDate(start + dt.timedelta(days=i), "release") for order in fams.values() for i, d in enumerate(order)}
    previous = {doc: prev for order in fams.values() for prev, doc in zip(order, order[1:])}
    for label, dates in (("release order as dates", release_dates), ("text only", None)):
        t0 = time.perf_counter()
        found = index_lineages(index, everything=True, min_percent=50, dates=dates)
        seconds = time.perf_counter() - t0
        parent = {doc: p for lineage in found for doc, p in lineage.parent_of().items()}
        right = sum(parent.get(doc) == prev for doc, prev in previous.items())
        print(f"lineage --all --min 50, {label}: {len(found)} groups, {len(parent)} documents in {seconds:.2f} s; "
              f"parent = previous release for {right}/{len(previous)} = {100 * right / len(previous):.1f}%")


if __name__ == "__main__":
    main()
