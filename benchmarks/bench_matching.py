"""Matching statistics at paper 002's scale: a 1 MB suspicious document against 3.5 MB of
candidates (paper 002 needed 1.9 s on a 433 MHz machine). Prints seconds per step.

Texts are taken from the dev collection (``../shared/corpora/corpus.tar.gz`` by default): the
suspicious document is 1 MB of it, the candidates 35 slices of 100 kB from elsewhere in the
collection, each with 10 kB copied from the suspicious document, so there is overlap to find.

    .venv/bin/python benchmarks/bench_matching.py [CORPUS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from coderiv.overlap.matching import matching_statistics, matching_statistics_many, maximal_matches, normalize
from coderiv.text.collection import iter_collection
from coderiv.text.extract import visible_text


def main() -> None:
    corpus = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared/corpora/corpus.tar.gz")
    parts, size = [], 0
    for doc in iter_collection(corpus):
        text = visible_text(doc.data, doc.doc_id).text
        parts.append(text)
        size += len(text)
        if size > 6_000_000:
            break
    pool = "\n\n".join(parts)
    suspicious = pool[:1_000_000]
    candidates = []
    for k in range(35):
        body = pool[1_500_000 + k * 100_000 : 1_590_000 + k * 100_000]
        copied = suspicious[k * 25_000 : k * 25_000 + 10_000]
        candidates.append(body[:45_000] + copied + body[45_000:])
    total = sum(len(c) for c in candidates)
    print(f"suspicious {len(suspicious) / 1e6:.2f} M characters, {len(candidates)} candidates, {total / 1e6:.2f} M characters")

    cpu0 = time.process_time()
    t0 = time.perf_counter()
    s_norm = normalize(suspicious)
    c_norms = [normalize(c) for c in candidates]
    t1 = time.perf_counter()
    many = matching_statistics_many(c_norms, s_norm)
    t2 = time.perf_counter()
    passages = sum(len(maximal_matches(ms)) for ms in many)
    t3 = time.perf_counter()
    print(f"normalize: {t1 - t0:.3f} s")
    print(f"matching statistics, one suffix sort for all candidates: {t2 - t1:.3f} s")
    print(f"maximal passages >= 60 characters: {t3 - t2:.3f} s ({passages} passages)")
    print(f"total: {t3 - t0:.3f} s wall, {time.process_time() - cpu0:.3f} s CPU")
    t4 = time.perf_counter()
    for c in c_norms:
        matching_statistics(c, s_norm)
    print(f"for comparison, one candidate at a time: {time.perf_counter() - t4:.3f} s")


if __name__ == "__main__":
    main()
