"""Filtering for text alignment: the chains too short dropped, those that overlap resolved.

**Filtering.** A chain becomes a passage when its seeds cover at least ``min_words`` words of
the suspicious text. Passages overlapping in the suspicious text are resolved strongest first
(most words covered by seeds): a weaker passage loses its seeds inside a stronger one and is kept
(its longest remaining piece) only if that still passes, as Sanchez-Perez et al. (PAN 2014)
resolve overlapping cases by keeping the better one.
"""

from __future__ import annotations

import numpy as np

from coderiv.overlap.align.extend import Chain


def resolve_overlaps(chains: list[Chain], min_words: int) -> list[Chain]:
    """Chains passing ``min_words``, overlaps in the suspicious text resolved strongest first,
    in suspicious order."""
    ranked = sorted((c for c in chains if c.covered() >= min_words), key=lambda c: (-c.covered(), c.susp_start))
    taken: list[tuple[int, int]] = []
    kept: list[Chain] = []
    for chain in ranked:
        clash = [(s, e) for s, e in taken if s < chain.susp_end and chain.susp_start < e]
        if clash:
            keep = [k for k, i in enumerate(chain.susp) if all(i + chain.n <= s or i >= e for s, e in clash)]
            if not keep:
                continue
            chain = _split_longest(Chain([chain.susp[k] for k in keep], [chain.src[k] for k in keep], chain.n), clash)
            if chain.covered() < min_words:
                continue
        kept.append(chain)
        taken.append((chain.susp_start, chain.susp_end))
    return sorted(kept, key=lambda c: c.susp_start)


def _split_longest(chain: Chain, clash: list[tuple[int, int]]) -> Chain:
    """The longest run of the chain's seeds not separated by a clashing span."""
    bounds = np.array(sorted(s for s, _ in clash))
    piece = np.searchsorted(bounds, np.array(chain.susp), "right")
    best, best_size = 0, -1
    for p in np.unique(piece).tolist():
        size = int(np.count_nonzero(piece == p))
        if size > best_size:
            best, best_size = p, size
    rows = np.flatnonzero(piece == best).tolist()
    return Chain([chain.susp[k] for k in rows], [chain.src[k] for k in rows], chain.n)
