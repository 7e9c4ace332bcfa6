"""Extension and filtering for text alignment: seeds joined into passages, then the passages
that overlap resolved and the short ones dropped.

**Extension rule.** Seeds are taken in the suspicious text's order. A seed (i, j) joins a chain
when it starts at most ``max_gap`` words after the end of the chain's last seed in the suspicious
text, and lies at most ``max_gap`` words outside the chain's span in the source (before its start
or after its end). Of several such chains it joins the nearest (smallest of the two distances);
otherwise it starts a chain. So a copied passage stays one chain across any edits that leave
a shared n-gram at least every ``max_gap`` words on both sides (changed, inserted, deleted and
locally reordered words, damaged characters, re-wrapped lines), while two copies more than
``max_gap`` words apart in either text stay two. This is the *valid interval* of Kasprzak &
Brandejs (PAN 2010: common features with gaps of at most 49 between neighbours, in both
documents), applied with the chain's whole source span as Torrejón & Ramos's "the source side
may be reordered" allowance (PAN 2013).

**Merging.** Two chains in the same order in both texts whose gap in both is at most
``merge_gap`` words and at most ``merge_ratio`` times the shorter of the two are joined (the
second pass of Kasprzak & Brandejs and of Sanchez-Perez et al. 2014, which re-extend passages
separated by an edited stretch).

**Filtering.** A chain becomes a passage when its seeds cover at least ``min_words`` words of
the suspicious text. Passages overlapping in the suspicious text are resolved strongest first
(most words covered by seeds): a weaker passage loses its seeds inside a stronger one and is kept
only if what remains still passes (Sanchez-Perez et al. 2014, "resolving overlapping cases").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from coderiv.overlap.align_seeds import Seeds


@dataclass
class Chain:
    """Seeds joined into one candidate passage: their positions in both texts (words)."""

    susp: list[int] = field(default_factory=list)
    src: list[int] = field(default_factory=list)
    n: int = 1

    @property
    def susp_start(self) -> int:
        return self.susp[0]

    @property
    def susp_end(self) -> int:
        return self.susp[-1] + self.n

    @property
    def src_start(self) -> int:
        return min(self.src)

    @property
    def src_end(self) -> int:
        return max(self.src) + self.n

    def covered(self) -> int:
        """Words of the suspicious text inside one of the chain's seeds."""
        total, reach = 0, -1
        for i in self.susp:
            end = i + self.n
            total += end - max(i, reach)
            reach = end
        return total


def chain_seeds(seeds: Seeds, max_gap: int) -> list[Chain]:
    """The chains of the extension rule (module docstring), in order of their first seed."""
    chains: list[Chain] = []
    active: list[tuple[Chain, list[int]]] = []  # chain, [last susp end, src start, src end]
    n = seeds.n
    for i, j in zip(seeds.susp.tolist(), seeds.src.tolist()):
        best: tuple[Chain, list[int]] | None = None
        best_cost = max_gap + 1
        still = []
        for entry in active:
            state = entry[1]
            gap_i = i - state[0]
            if gap_i > max_gap:
                continue  # too far behind: closed for good
            still.append(entry)
            if j < state[1]:
                dist_j = state[1] - (j + n)
            elif j > state[2]:
                dist_j = j - state[2]
            else:
                dist_j = 0
            cost = max(gap_i, dist_j)
            if cost < best_cost:
                best, best_cost = entry, cost
        active = still
        if best is None:
            chain = Chain([i], [j], n)
            chains.append(chain)
            active.append((chain, [i + n, j, j + n]))
        else:
            chain, state = best
            chain.susp.append(i)
            chain.src.append(j)
            state[0] = max(state[0], i + n)
            state[1] = min(state[1], j)
            state[2] = max(state[2], j + n)
    return chains


def merge_chains(chains: list[Chain], merge_gap: int, merge_ratio: float) -> list[Chain]:
    """Chains joined by the merging rule (module docstring), in suspicious order."""
    ordered = sorted(chains, key=lambda c: c.susp_start)
    out: list[Chain] = []
    for chain in ordered:
        if out:
            last = out[-1]
            gap_i = chain.susp_start - last.susp_end
            gap_j = chain.src_start - last.src_end
            limit = min(merge_gap, merge_ratio * min(len(last.susp), len(chain.susp)))
            if -chain.n <= gap_i <= limit and -chain.n <= gap_j <= limit:
                pairs = sorted(zip(last.susp + chain.susp, last.src + chain.src))
                last.susp, last.src = [i for i, _ in pairs], [j for _, j in pairs]
                continue
        out.append(Chain(list(chain.susp), list(chain.src), chain.n))
    return out


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
