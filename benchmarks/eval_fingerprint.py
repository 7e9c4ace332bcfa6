"""Paper 004's fingerprint experiments (Tables 4, 5, 6) on a collection, plus winnowing, and the
size of every fingerprint store against the term index.

Builds (or updates) one index holding every store the tables need, evaluates each method with
``coderiv.evaluation.evaluate`` (SPEC §4) and prints Markdown tables. Run by hand, never by pytest:

    python benchmarks/eval_fingerprint.py /work/shared/corpora /tmp/fpeval/idx

Takes about a minute to build on 2 cores and a minute to evaluate.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from coderiv import Index
from coderiv.evaluation.evaluate import Topics, evaluate_method
from coderiv.keys.fingerprint import STRATEGIES, parse_fingerprint

TABLE4 = [f"{s}:g=3" for s in STRATEGIES] + ["winnowing:g=3,w=4", "winnowing:g=3,w=16"]
TABLE5 = [f"anchor:g={g}" for g in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20)]
TABLE6 = ["first-r-sliding:g=4,r=15", "anchor:g=4", "winnowing:g=4"]


def method(store: str, full_query: bool = False) -> str:
    return "fingerprint:" + store.replace(",", ":") + (":full-query" if full_query else "")


def row(label: str, result) -> str:
    ratio = "n/a" if result.ratio is None else f"{result.ratio:.2f}"
    return (f"| {label} | {result.precision:.2f} | {result.recall:.2f} | {result.hfm:.2f}% | "
            f"{result.sep:.2f}% | {ratio} |")


def store_bytes(index: Index, name: str) -> int:
    folder = index.generation / index.manifest["stores"][name]["dir"]
    return sum(p.stat().st_size for p in folder.iterdir())


def main(corpora: str, index_path: str) -> None:
    root = Path(corpora)
    stores = [parse_fingerprint(s) for s in dict.fromkeys(TABLE4 + TABLE5 + TABLE6)]
    start = time.perf_counter()
    Index.update_from(root / "corpus.tar.gz", index_path, stores=stores)
    print(f"index ready in {time.perf_counter() - start:.0f} s")
    index = Index.open(index_path)
    topics = Topics.read(root / "queries.tsv", root / "qrels.tsv")
    header = "| method | P(s) | R(20) | HFM | Sep. | Sep./HFM |\n|---|---|---|---|---|---|"

    def run(label: str, name: str) -> None:
        t = time.perf_counter()
        result = evaluate_method(index, name, topics)
        print(row(label, result), f"<!-- {time.perf_counter() - t:.1f} s -->", flush=True)

    print("\nTable 4 (g = 3, r = 15)\n" + header)
    for s in TABLE4:
        run(s, method(s))
    print("\nTable 5 (anchor)\n" + header)
    for s in TABLE5:
        run(s, method(s))
    print("\nTable 6 (g = 4)\n" + header)
    for m in ("cosine", "identity5"):
        run(m, m)
    for s in TABLE6:
        run(s, method(s))
    run("anchor:g=4 / full query", method("anchor:g=4", True))
    run("first-r-sliding:g=4,r=15 / full query", method("first-r-sliding:g=4,r=15", True))

    consistency(index, topics, root)

    terms = store_bytes(index, "terms")
    print(f"\nStore sizes ({index.n_docs} documents, {index.manifest['source_bytes']} source bytes)")
    print("| store | keys | postings | bytes | vs terms |\n|---|---|---|---|---|")
    for name in ["terms", *sorted(n for n in index.specs if n != "terms")]:
        meta = index.manifest["stores"][name]
        size = store_bytes(index, name)
        print(f"| {name} | {meta['keys']:,} | {meta['postings']:,} | {size:,} | {100 * size / terms:.1f}% |")


CONSISTENCY = ["identity5", "cosine", "fingerprint:anchor:g=4", "fingerprint:first-r-sliding:g=4:r=15",
               "fingerprint:winnowing:g=4", "fingerprint:full:g=3", "fingerprint:lowest-hash:g=3"]


def consistency(index: Index, topics: Topics, root: Path) -> None:
    """Per-query counts (as the evaluation page gives them for the ranking measures), and the
    same methods with the moved files of stats.json judged relevant (label-noise experiment)."""
    stats = json.loads((root / "stats.json").read_text("utf-8"))
    moved = {q["query_id"]: {d["doc_id"] if isinstance(d, dict) else d for d in q["unlabeled_jaccard_ge_0.5"]}
             for q in stats["per_query"]}
    relabeled = Topics(topics.queries, {q: r | moved.get(q, set()) for q, r in topics.qrels.items()})
    print("\nPer-query consistency (official qrels)")
    print("| method | P(s) < 1 | Sep. <= 0 | median HFM | median lowest relevant |\n|---|---|---|---|---|")
    for name in CONSISTENCY:
        qs = evaluate_method(index, name, topics).queries
        print(f"| {name} | {sum(q.precision < 1 for q in qs)} | {sum(q.sep <= 0 for q in qs)} | "
              f"{statistics.median(q.hfm for q in qs):.2f}% | {statistics.median(q.lowest_relevant for q in qs):.2f}% |")
    print("\nWith the 27 moved files judged relevant\n| method | P(s) | R(20) | HFM | Sep. | Sep./HFM |\n|---|---|---|---|---|---|")
    for name in CONSISTENCY:
        print(row(name, evaluate_method(index, name, relabeled)))


if __name__ == "__main__":
    main(*sys.argv[1:3])
