"""Edges of an aligned passage: grown over the identical words just outside its seeds.

An edit next to a copy's first or last word leaves no n-gram there, so the seeds stop short of
the copy; each passage is grown over the identical words next to it, skipping one differing word
when the word beyond is identical, never into the neighbouring passage (ours: a one-word local
alignment at each edge; on the development pairs, noise cases 0.994 -> 0.998, 30% edits 0.960 ->
0.962, docs/alignment.md).
"""

from __future__ import annotations

from coderiv.overlap.align.extend import Chain


def grow_edges(chain: Chain, a: list[str], b: list[str], low: int, high: int) -> tuple[int, int, int, int]:
    """The chain's bounds grown over the identical words next to them, one differing word
    skipped when the word beyond it is identical again (an edit next to the passage's edge
    leaves no 3-gram there); never past ``low``/``high`` in A (the neighbouring passages)."""
    a0, a1, b0, b1 = chain.susp_start, chain.susp_end, chain.src_start, chain.src_end
    while True:
        if a0 > low and b0 > 0 and a[a0 - 1] == b[b0 - 1]:
            a0, b0 = a0 - 1, b0 - 1
        elif a0 - 1 > low and b0 > 1 and a[a0 - 2] == b[b0 - 2]:
            a0, b0 = a0 - 2, b0 - 2
        else:
            break
    while True:
        if a1 < high and b1 < len(b) and a[a1] == b[b1]:
            a1, b1 = a1 + 1, b1 + 1
        elif a1 + 1 < high and b1 + 1 < len(b) and a[a1 + 1] == b[b1 + 1]:
            a1, b1 = a1 + 2, b1 + 2
        else:
            break
    return a0, a1, b0, b1
