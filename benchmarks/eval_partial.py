"""Partial copies: do whole-document measures miss the donors that passage matching finds?

For every plagiarism case of the dev collection (a new document made of paragraphs of 4 donors,
SPEC §9), the collection is ranked against the case text by a whole-document measure and by
passage matching (SPEC §7). The releases of one file are one result (the ranking keeps the
first of each path, since every release of a donor holds the same paragraphs), and a donor is
*found* when its file is among the first 10 results. Prints, per method, the share of donors
found, for the own documents (~40% of a case) and the sources (~20% each), and the mean
percentage the best release of each donor gets (every indexed release of its file). Takes
about three minutes on 2 cores, two of them reading (rendering) the collection for its passages.

The shipped ``plagiarism/cases.jsonl`` holds raw reStructuredText, which no longer matches the
documents as the index reads them (rendered); generate the cases as ``docs/evaluation.md`` does:

    coderiv index ../shared/corpora/corpus.tar.gz --index /tmp/devidx
    coderiv generate ../shared/corpora/corpus.tar.gz --cases 100 --seed 0 -o /tmp/cases.jsonl
    .venv/bin/python benchmarks/eval_partial.py /tmp/devidx /tmp/cases.jsonl
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from coderiv.evaluation.plagiarism import read_cases
from coderiv.index.index import Index
from coderiv.overlap.verify import DocumentTexts
from coderiv.ranking.kernel import top_k
from coderiv.ranking.passage_windows import PassageIndex
from coderiv.ranking.search import Searcher

TOP = 10


def _file(doc_id: str) -> str:
    """``PROJECT-VERSION/path`` -> ``PROJECT/path``: the releases of one file."""
    release, _, path = doc_id.partition("/")
    return release.rsplit("-", 1)[0] + "/" + path


def main() -> None:
    shared = Path(__file__).resolve().parents[2] / "shared/corpora"
    if len(sys.argv) < 2:
        sys.exit("usage: eval_partial.py INDEX [CASES]  (an index of the dev corpus)")
    index = Index.open(sys.argv[1])
    cases = read_cases(sys.argv[2] if len(sys.argv) > 2 else shared / "plagiarism/cases.jsonl")
    start = time.perf_counter()
    texts = DocumentTexts(index.source, preload=True).get(index.doc_ids)
    terms = [index.analyzer.terms(texts[d]) for d in index.doc_ids]
    passages = PassageIndex(terms)
    print(f"passage index: {passages.n} passages, {time.perf_counter() - start:.1f} s", file=sys.stderr)
    searcher = Searcher(index)
    methods = {
        "identity5 (whole document)": lambda text: searcher.percentages(searcher.prepare(text), "identity5"),
        "cosine (whole document)": lambda text: searcher.percentages(searcher.prepare(text), "cosine"),
        "passages (identity5, 50%)": lambda text: passages.percentages(index.analyzer.terms(text), "identity5"),
        "passages (cosine, 50%)": lambda text: passages.percentages(index.analyzer.terms(text), "cosine"),
        "passages (cosine, 25%)": lambda text: passages.percentages(index.analyzer.terms(text), "cosine", 25.0),
    }
    releases: dict[str, list[int]] = {}  # a file -> the document numbers of its releases
    for number, doc_id in enumerate(index.doc_ids):
        releases.setdefault(_file(doc_id), []).append(number)
    print(f"| method | donors found in the top {TOP} | own document found | sources found | mean % of the best version |")
    print("|---|---:|---:|---:|---:|")
    for name, rank in methods.items():
        start = time.perf_counter()
        found = {"own": [], "source": []}
        best = []
        for case in cases:
            pct = rank(case["text"])
            files: list[str] = []
            for d in top_k(pct, None).tolist():
                path = _file(index.doc_ids[d])
                if path not in files:
                    files.append(path)
                    if len(files) == TOP:
                        break
            for donor in case["sources"]:
                versions = releases.get(_file(donor["doc_id"]), [])
                found[donor["role"]].append(_file(donor["doc_id"]) in files)
                best.append(max(pct[v] for v in versions))
        every = found["own"] + found["source"]
        print(
            f"| {name} | {np.mean(every):.2f} | {np.mean(found['own']):.2f} | {np.mean(found['source']):.2f} "
            f"| {np.mean(best):.1f}% |"
        )
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
