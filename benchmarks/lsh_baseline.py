"""datasketch's MinHash + LSH, the approximate baseline that ``pairs`` is measured against
(bench_pairs.py --lsh, bench_thesis.py): the same documents, coderiv's analysis, 4-term shingles,
128 permutations, threshold 0.5; and the recall of its candidate pairs against the exact pairs of
resemblance ≥ 50% in coderiv's stored table."""

from __future__ import annotations

from collections.abc import Iterable

from coderiv.pairs.table import PairTable
from coderiv.text.analysis import Analyzer

Pair = tuple[str, str]


def lsh_candidates(documents: Iterable[tuple[str, str]], analyzer: Analyzer, threshold: float = 0.5, num_perm: int = 128) -> set[Pair]:
    """Candidate pairs (ids ordered) of MinHash-``num_perm`` + LSH at ``threshold`` over each
    document's 4-term shingles; ``documents`` yields (id, text)."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    sketches = {}
    for doc_id, text in documents:
        terms = analyzer.terms(text)
        shingles = {" ".join(terms[i : i + 4]).encode() for i in range(max(1, len(terms) - 3))}
        sketch = MinHash(num_perm=num_perm)
        sketch.update_batch(list(shingles))
        lsh.insert(doc_id, sketch)
        sketches[doc_id] = sketch
    candidates = set()
    for doc_id, sketch in sketches.items():
        for other in lsh.query(sketch):
            if other != doc_id:
                candidates.add((min(doc_id, other), max(doc_id, other)))
    return candidates


def exact_pairs(table: PairTable, min_percent: float = 50.0) -> set[Pair]:
    """The pairs (ids ordered) of a stored pairs table at or above ``min_percent``."""
    exact = set()
    for doc_id in table.doc_ids:
        for _, percent, other in table.similar(doc_id):
            if percent >= min_percent:
                exact.add((min(doc_id, other), max(doc_id, other)))
    return exact


def recall(exact: set[Pair], candidates: set[Pair]) -> dict[str, float | int]:
    """How many of the exact pairs LSH proposed, and the share."""
    found = len(exact & candidates)
    return {"candidates": len(candidates), "exact_pairs": len(exact), "candidates_at_least_50": found,
            "recall": found / len(exact) if exact else 1.0}
