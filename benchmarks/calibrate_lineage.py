"""Calibrate text-only lineage confidence on the dev collection (issue 28 item 5).

    python benchmarks/calibrate_lineage.py [--corpus /work/shared/corpora] [--index /tmp/coderiv-dev-lineage] [--write]

Every group of the chunks pair table (``coderiv lineage --all --min 50``: groups linked both
ways, the default, and linked either way, ``--one-way``, whose larger groups hold the links of
low containment) gets its lineage from the text alone; the text links of both, each pair once,
are measured. A text link parent → child is right when both are
pages of one project and the parent's release is the earlier (docs.tsv; releases give the true
order). Printed: accuracy by |growth| bin (the raw score), and by containment of the child in
its parent; then the isotonic (pool-adjacent-violators) fit of the containment cap (each
|growth| bin keeps its own share: the relation is not monotone). With ``--write`` the table goes to
``src/coderiv/data/lineage_calibration.json`` with its provenance.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
from pathlib import Path

import numpy as np

from coderiv import Index
from coderiv.pairs.lineage import TEXT, TIE, index_lineages
from coderiv.pairs.methods import get_method
from coderiv.pairs.run import run_pairs
from common import machine

#: Bin edges: |growth| (0..1) and containment of the child in its parent (percent).
GROWTH_EDGES = [0.0, 0.01, 0.02, 0.05, 0.10, 0.20, 1.0]
CONTAINMENT_EDGES = [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def isotonic(accuracy: list[float], weights: list[int]) -> list[float]:
    """Pool adjacent violators: the nondecreasing sequence closest to ``accuracy`` (weighted)."""
    blocks = [[a * w, w, 1] for a, w in zip(accuracy, weights)]  # sum, weight, bins
    merged: list[list[float]] = []
    for block in blocks:
        merged.append(block)
        while len(merged) > 1 and merged[-2][0] / max(merged[-2][1], 1) > merged[-1][0] / max(merged[-1][1], 1):
            last = merged.pop()
            merged[-1] = [merged[-1][0] + last[0], merged[-1][1] + last[1], merged[-1][2] + last[2]]
    out: list[float] = []
    for total, weight, bins in merged:
        out += [total / weight if weight else 0.5] * int(bins)
    return out


def table(label: str, edges: list[float], values: np.ndarray, right: np.ndarray) -> tuple[list[float], list[int]]:
    accuracy, counts = [], []
    print(f"  by {label}:")
    for low, high in zip(edges, edges[1:]):
        inside = (values >= low) & ((values < high) if high != edges[-1] else (values <= high))
        n = int(inside.sum())
        acc = float(right[inside].mean()) if n else 0.5
        accuracy.append(acc)
        counts.append(n)
        print(f"    [{low:g}, {high:g}{']' if high == edges[-1] else ')'}: {n:5d} links, {100 * acc:.1f}% right")
    return accuracy, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/corpora"))
    parser.add_argument("--index", type=Path, default=Path("/tmp/coderiv-dev-lineage"))
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not (args.index / "CURRENT").exists():
        Index.update_from(args.corpus / "corpus.tar.gz", args.index, stores=[get_method("chunks").store])
        run_pairs(Index.open(args.index), "chunks")
    index = Index.open(args.index)
    with open(args.corpus / "docs.tsv", encoding="utf-8") as handle:
        release = {row["doc_id"]: (row["project"], version_key(row["version"])) for row in csv.DictReader(handle, delimiter="\t")}
    lineages = index_lineages(index, everything=True, min_percent=50)
    one_way = index_lineages(index, everything=True, min_percent=50, mutual=False)
    rows = []  # growth, in_parent, right, basis
    seen = set()
    for lineage in lineages + one_way:
        for link in lineage.links:
            if link.parent is None or link.basis not in (TEXT, TIE) or (link.parent, link.doc_id) in seen:
                continue
            seen.add((link.parent, link.doc_id))
            (pp, pv), (cp, cv) = release[link.parent], release[link.doc_id]
            growth = (link.parent_in - link.in_parent) / 100
            rows.append((abs(growth), link.in_parent, pp == cp and pv < cv, link.basis, link.confidence))
    print(machine())
    text = [r for r in rows if r[3] == TEXT]
    ties = [r for r in rows if r[3] == TIE]
    print(f"{len(lineages)} groups both ways, {len(one_way)} one way; {len(text)} distinct text links, {len(ties)} ties "
          f"({100 * np.mean([r[2] for r in ties]):.1f}% of ties point to an earlier release)")
    growth = np.array([r[0] for r in text])
    inside = np.array([r[1] for r in text])
    right = np.array([r[2] for r in text], bool)
    old = 0.6 + 0.25 * np.minimum(1.0, growth / 0.1)  # the confidence before issue 28: 0.6 up to 0.85
    print("  the former confidence (0.6 + 0.25 min(1, |growth| / 0.1)):")
    for low, high in ((0.6, 0.7), (0.7, 0.8), (0.8, 0.851)):
        sel = (old >= low) & (old < high)
        print(f"    [{low:.1f}, {min(high, 0.85):.2f}{']' if high > 0.85 else ')'}: {int(sel.sum()):5d} links, "
              f"mean confidence {old[sel].mean():.3f}, {100 * right[sel].mean():.1f}% right")
    g_acc, g_n = table("|growth|", GROWTH_EDGES, growth, right)
    c_acc, c_n = table("containment of the child in its parent (%)", CONTAINMENT_EDGES, inside, right)
    g_fit, c_fit = g_acc, isotonic(c_acc, c_n)  # growth: each bin its own share (150+ links each)
    print(f"  isotonic cap by containment: {[round(v, 3) for v in c_fit]}")
    calibrated = np.array([min(g_fit[min(np.searchsorted(GROWTH_EDGES, g, 'right') - 1, len(g_fit) - 1)],
                               c_fit[min(np.searchsorted(CONTAINMENT_EDGES, c, 'right') - 1, len(c_fit) - 1)])
                           for g, c in zip(growth, inside)])
    print("  calibrated confidence → observed accuracy:")
    for low, high in ((0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)):
        sel = (calibrated >= low) & (calibrated < high)
        if sel.any():
            print(f"    [{low:.1f}, {min(high, 1.0):.1f}): {int(sel.sum()):5d} links, mean confidence "
                  f"{calibrated[sel].mean():.3f}, {100 * right[sel].mean():.1f}% right")
    if args.write:
        data = {
            "provenance": (
                f"benchmarks/calibrate_lineage.py on the dev collection (../shared/corpora/corpus.tar.gz, {index.n_docs} "
                f"documents), text-only lineage of the {len(lineages)} groups of 'coderiv lineage --all --min 50' "
                f"and the {len(one_way)} of its "
                f"--one-way (each parent-child pair once); a link is "
                f"right when its parent is an earlier release of the same project (docs.tsv); {machine()}; "
                f"{dt.date.today().isoformat()}"
            ),
            "links": len(text),
            "growth_edges": GROWTH_EDGES,
            "growth_links": g_n,
            "growth_accuracy": [round(v, 4) for v in g_acc],
            "growth_confidence": [round(v, 4) for v in g_fit],
            "containment_edges": CONTAINMENT_EDGES,
            "containment_links": c_n,
            "containment_accuracy": [round(v, 4) for v in c_acc],
            "containment_cap": [round(v, 4) for v in c_fit],
        }
        path = Path(__file__).resolve().parents[1] / "src/coderiv/data/lineage_calibration.json"
        path.write_text(json.dumps(data, indent=1) + "\n", "utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
