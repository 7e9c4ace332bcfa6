"""Which words of an aligned passage are identical and which differ, on each side.

The passage's seeds (its longest run increasing in both texts) are the anchors: runs of seeds on
one diagonal are identical words; the short stretches between two anchors are compared with
:class:`difflib.SequenceMatcher` (Ratcliff-Obershelp, on case-folded words). Anchoring keeps the
cost linear in the passage (difflib on a whole 30,000-word passage took 5 s, anchored 0.1 s) and
the marking faithful to the alignment that joined the passage. A passage that sentence seeds
found (:mod:`.combine`) is anchored on the longest increasing run of the n-gram seeds inside it.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from coderiv.overlap.align.extend import Chain

#: Largest stretch between two anchors (words of A times words of B) compared word by word; a
#: longer one (a reworded passage with few n-grams in common, a summary's long source side) is
#: marked changed as a whole, so the marking stays linear in the passage (difflib is quadratic).
MAX_CELLS = 250_000

#: (same?, first word of A, end of A, first word of B, end of B), positions in words
Block = tuple[bool, int, int, int, int]


def anchors(chain: Chain) -> list[tuple[int, int, int]]:
    """Runs (i, j, length) of identical words from the chain's seeds, increasing and not
    overlapping in both texts (a run overlapping the previous one loses its first words)."""
    runs: list[tuple[int, int, int]] = []
    n = chain.n
    for i, j in zip(chain.susp, chain.src):
        if runs:
            ri, rj, length = runs[-1]
            if i - ri == j - rj and i <= ri + length:  # same diagonal, touching: extend the run
                runs[-1] = (ri, rj, max(length, i + n - ri))
                continue
            cut = max(ri + length - i, rj + length - j, 0)
            if cut >= n:
                continue
            i, j, size = i + cut, j + cut, n - cut
        else:
            size = n
        runs.append((i, j, size))
    return runs


def word_blocks(
    chain: Chain, a_words: list[str], b_words: list[str], bounds: tuple[int, int, int, int] | None = None,
) -> list[Block]:
    """The passage (``bounds`` = a0, a1, b0, b1 in words; by default the chain's own) cut into
    identical and differing blocks, in order, adjacent blocks of one kind merged."""
    blocks: list[Block] = []

    def add(same: bool, i0: int, i1: int, j0: int, j1: int) -> None:
        if i1 == i0 and j1 == j0:
            return
        if blocks and blocks[-1][0] == same:
            blocks[-1] = (same, blocks[-1][1], i1, blocks[-1][3], j1)
        else:
            blocks.append((same, i0, i1, j0, j1))

    a0, a1, b0, b1 = bounds or (chain.susp_start, chain.susp_end, chain.src_start, chain.src_end)
    i_at, j_at = a0, b0
    for i, j, size in [*anchors(chain), (a1, b1, 0)]:
        if (i - i_at) * (j - j_at) > MAX_CELLS:
            add(False, i_at, i, j_at, j)  # a long stretch without an anchor: changed, not diffed
        elif i > i_at or j > j_at:
            matcher = SequenceMatcher(None, a_words[i_at:i], b_words[j_at:j], autojunk=False)
            for tag, x0, x1, y0, y1 in matcher.get_opcodes():
                add(tag == "equal", i_at + x0, i_at + x1, j_at + y0, j_at + y1)
        add(True, i, i + size, j, j + size)
        i_at, j_at = i + size, j + size
    return blocks
