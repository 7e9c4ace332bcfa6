"""Extension for text alignment: seeds joined into chains, each chain one candidate passage
(filtering the chains is :mod:`.filter`).

**Extension rule.** Seeds are taken in the suspicious text's order. A seed (i, j) joins a chain
when it starts at most *g* words after the end of the chain's last seed in the suspicious text,
and lies at most *g* words outside the chain's span in the source (before its start or after its
end); of several such chains it joins the nearest (smallest of the two distances, relative to
*g*), otherwise it starts a chain. The allowed gap *g* is ``max_gap`` words, growing with the
chain to ``gap_ratio`` times the words its seeds cover, at most ``long_gap``
(:func:`allowed_gap`): an established passage bridges a heavily edited sentence, a chance match
of two n-grams does not reach far. So a copied passage stays one chain across any edits that
leave a shared n-gram at least every *g* words in both texts (changed, inserted, deleted and
locally reordered words, damaged characters, re-wrapped lines), while two copies more than
``long_gap`` words apart in either text stay two. This is the *valid interval* of Kasprzak &
Brandejs (PAN 2010: common features with gaps of at most 49 features between neighbours, in both
documents), with the source side allowed to reorder inside the chain's span, as Torrejón & Ramos
allow (PAN 2012-13), and a gap that grows with the passage, as Sanchez-Perez, Sidorov & Gelbukh's
recursive extension lets a long passage absorb a dissimilar sentence (PAN 2014).

**Bounds.** A chain's passage is the bounding box of its longest run of seeds increasing in both
texts (:meth:`Chain.monotone`): a repeated n-gram of the source found just before or after the
copy joins the chain but does not widen the passage. The seeds that run leaves out make the next
run, and so on (:meth:`Chain.pieces`): a sentence moved inside a copy becomes a passage of its
own, while a chance seed left over is too short to pass the filter.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

from coderiv.overlap.align.seeds import Seeds


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

    def monotone(self) -> Chain:
        """The chain's longest run of seeds increasing in both texts (the longest increasing
        subsequence of source positions in suspicious order): the seeds that bound the passage,
        so that a chance seed joined on the side (a repeated n-gram of the source just before
        the copy) does not widen it."""
        if all(a < b for a, b in zip(self.susp, self.susp[1:])) and all(a < b for a, b in zip(self.src, self.src[1:])):
            return self  # already increasing in both (a verbatim copy): nothing to drop
        order = sorted(range(len(self.susp)), key=lambda k: (self.susp[k], -self.src[k]))
        tails: list[int] = []  # tails[m]: the seed ending the best run of length m + 1
        tail_src: list[int] = []
        before = [-1] * len(order)
        for k in order:
            m = bisect_left(tail_src, self.src[k])
            before[k] = tails[m - 1] if m else -1
            if m == len(tails):
                tails.append(k)
                tail_src.append(self.src[k])
            else:
                tails[m], tail_src[m] = k, self.src[k]
        run = []
        k = tails[-1] if tails else -1
        while k >= 0:
            run.append(k)
            k = before[k]
        run.reverse()
        return Chain([self.susp[k] for k in run], [self.src[k] for k in run], self.n)

    def pieces(self, most: int = 4) -> list[Chain]:
        """The chain as runs increasing in both texts: its :meth:`monotone` run, then that of the
        seeds left over, and so on (at most ``most`` runs). A sentence moved inside a copied
        passage is left over by the first run and comes back as a passage of its own; a lone
        chance seed is left over too, and dropped by the minimum length."""
        out = []
        rest = self
        for _ in range(most):
            run = rest.monotone()
            out.append(run)
            if run is rest or len(run.susp) == len(rest.susp):
                break
            taken = set(zip(run.susp, run.src))
            left = [(i, j) for i, j in zip(rest.susp, rest.src) if (i, j) not in taken]
            rest = Chain([i for i, _ in left], [j for _, j in left], self.n)
        return out

    def covered(self) -> int:
        """Words of the suspicious text inside one of the chain's seeds."""
        total, reach = 0, -1
        for i in self.susp:
            end = i + self.n
            total += end - max(i, reach)
            reach = end
        return total


def allowed_gap(covered: int, max_gap: int, long_gap: int, gap_ratio: float) -> int:
    """The gap a chain covering ``covered`` words may bridge: ``max_gap``, growing with the chain
    to ``gap_ratio`` times its words, at most ``long_gap``."""
    return max(max_gap, min(long_gap, int(gap_ratio * covered)))


def chain_seeds(seeds: Seeds, max_gap: int, long_gap: int = 0, gap_ratio: float = 0.0) -> list[Chain]:
    """The chains of the extension rule (module docstring), in order of their first seed."""
    chains: list[Chain] = []
    # chain, [last susp end, src start, src end, words covered, allowed gap]
    active: list[tuple[Chain, list[int]]] = []
    n = seeds.n
    for i, j in zip(seeds.susp.tolist(), seeds.src.tolist()):
        best: tuple[Chain, list[int]] | None = None
        best_cost = 0.0
        still = []
        for entry in active:
            state = entry[1]
            gap_i = i - state[0]
            if gap_i > state[4]:
                continue  # too far behind: closed for good
            still.append(entry)
            if j < state[1]:
                dist_j = state[1] - (j + n)
            elif j > state[2]:
                dist_j = j - state[2]
            else:
                dist_j = 0
            if dist_j > state[4]:
                continue
            cost = max(gap_i, dist_j) / state[4]
            if best is None or cost < best_cost:
                best, best_cost = entry, cost
        active = still
        if best is None:
            chain = Chain([i], [j], n)
            chains.append(chain)
            active.append((chain, [i + n, j, j + n, n, allowed_gap(n, max_gap, long_gap, gap_ratio)]))
        else:
            chain, state = best
            chain.susp.append(i)
            chain.src.append(j)
            state[3] += i + n - max(i, state[0])
            state[0] = max(state[0], i + n)
            state[1] = min(state[1], j)
            state[2] = max(state[2], j + n)
            state[4] = allowed_gap(state[3], max_gap, long_gap, gap_ratio)
    return chains
