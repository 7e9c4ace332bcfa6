"""Extension that follows reordered sentences: sentence seeds clustered into fragments with a
distance in sentences, each fragment validated, an invalid one clustered again more tightly
(Sanchez-Perez, Sidorov & Gelbukh, PAN 2014: the winner's *extension*, "clustering" and
"validation" with *recursive extension*).

**Clustering.** The seeds (:mod:`.sentence_seeds`) are sorted by their sentence of one text and
cut wherever two neighbours are more than ``gap`` sentences apart; each group is then sorted and
cut the same way in the other text, and so on, alternating, until no group is cut. A group is a
fragment: from its first to its last sentence in each text. Inside a fragment the sentences may
come in any order on either side, so a copy whose sentences were shuffled, merged or split stays
one fragment, while two copies more than ``gap`` sentences apart in either text stay two.

**Validation.** A fragment is kept when its seeds hold at least ``min_seeds`` distinct sentences
of each text (2, ours: on the training pairs nine in ten fragments of one sentence pair were
chance, two sentences that share a few rare words; a copied sentence alone is left to the n-gram
seeds; and a text's words shuffled into one "sentence" matches every sentence of the original,
but is one sentence) and the tf-isf vectors of its two sides (the sums of its
sentences' vectors) have cosine at least ``min_similarity`` (0.34, the paper's ``th3``); one that
is not is clustered again with the gap one sentence smaller, down to ``min_gap``, and the pieces
validated in turn (the recursion of the paper: a fragment that joined two copies through a
dissimilar stretch comes apart into the two). The gap shrinks by one sentence, as the paper's,
while it is below 8, and by a quarter above (the wide gap of summaries: 24, 18, 14, 11, ...).

Defaults: ``gap`` = 4 sentences in both texts, the paper's ``src_gap`` and ``susp_gap``; the
wider source gap of summaries is :mod:`.summaries`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coderiv.overlap.align.sentence_seeds import SentenceSeeds


@dataclass(frozen=True)
class Fragment:
    """Sentences ``[a0, a1)`` of A aligned with ``[b0, b1)`` of B: ``seeds`` sentence pairs
    (``seed_pairs``: their sentence of A and of B), the two sides' tf-isf cosine ``similarity``."""

    a0: int
    a1: int
    b0: int
    b1: int
    seeds: int
    similarity: float
    seed_pairs: tuple[tuple[int, int], ...] = ()


def _cut(group: np.ndarray, positions: np.ndarray, gap: int) -> list[np.ndarray]:
    order = group[np.argsort(positions[group], kind="stable")]
    steps = np.diff(positions[order])
    return np.split(order, np.flatnonzero(steps > gap) + 1)


def cluster(susp: np.ndarray, src: np.ndarray, gap_a: int, gap_b: int, group: np.ndarray | None = None) -> list[np.ndarray]:
    """Seed numbers grouped by the alternating cuts (module docstring)."""
    groups = [np.arange(len(susp)) if group is None else group]
    side, quiet = 0, 0
    while quiet < 2:  # until a pass over each text cuts nothing
        positions, gap = (susp, gap_a) if side == 0 else (src, gap_b)
        cut = [piece for g in groups for piece in _cut(g, positions, gap)]
        quiet = quiet + 1 if len(cut) == len(groups) else 1
        groups, side = cut, 1 - side
    return groups


def similarity(seeds: SentenceSeeds, a0: int, a1: int, b0: int, b1: int) -> float:
    """Cosine of the tf-isf vectors of sentences [a0, a1) of A and [b0, b1) of B."""
    va, vb = seeds.weights_a.row_sum(a0, a1), seeds.weights_b.row_sum(b0, b1)
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norm if norm else 0.0


def containment(seeds: SentenceSeeds, a0: int, a1: int, b0: int, b1: int) -> float:
    """Share of the tf-isf weight of sentences [a0, a1) of A whose terms occur in sentences
    [b0, b1) of B: how much of a summary its source passage explains."""
    va, vb = seeds.weights_a.row_sum(a0, a1), seeds.weights_b.row_sum(b0, b1)
    total = float(va.sum())
    return float(va[vb > 0].sum()) / total if total else 0.0


def fragments(
    seeds: SentenceSeeds, gap_a: int = 4, gap_b: int = 4, min_gap: int = 0, min_similarity: float = 0.34,
    min_seeds: int = 2, contained: bool = False,
) -> list[Fragment]:
    """The validated fragments of the seeds, in A's order (module docstring); ``contained``:
    validated by :func:`containment` instead of the cosine (summaries)."""
    out: list[Fragment] = []
    pending = [(g, gap_a, gap_b) for g in cluster(seeds.susp, seeds.src, gap_a, gap_b)]
    while pending:
        group, ga, gb = pending.pop()
        a, b = seeds.susp[group], seeds.src[group]
        a0, a1, b0, b1 = int(a.min()), int(a.max()) + 1, int(b.min()), int(b.max()) + 1
        sim = (containment if contained else similarity)(seeds, a0, a1, b0, b1)
        if sim >= min_similarity and min(len(np.unique(a)), len(np.unique(b))) >= min_seeds:
            out.append(Fragment(a0, a1, b0, b1, len(group), sim, tuple(sorted(zip(a.tolist(), b.tolist())))))
        elif len(group) > min_seeds and max(ga, gb) > min_gap and sim < min_similarity:
            ga, gb = max(ga - max(1, ga // 4), min_gap), max(gb - max(1, gb // 4), min_gap)
            pending.extend((g, ga, gb) for g in cluster(seeds.susp, seeds.src, ga, gb, group))
    return sorted(out, key=lambda f: (f.a0, f.b0))
