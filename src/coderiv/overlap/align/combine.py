"""The two kinds of evidence joined into one set of passages, then filtered: the word n-gram
passages (exact where words survive, :mod:`.extend`) and the sentence fragments (which survive
rewording, :mod:`.clusters`, :mod:`.summaries`).

- A fragment that overlaps no n-gram passage in both texts is a passage of its own when its
  suspicious side has at least ``min_chars`` characters (150, Sanchez-Perez, Sidorov & Gelbukh's
  PAN 2014 ``min_plaglen``: shorter matches of reworded text are mostly chance).
- A fragment whose suspicious side the n-gram passages overlapping it cover to at least
  ``cover`` (0.8) adds nothing: those passages stand, with their word-exact bounds (the
  verbatim cases keep their precision).
- So does a fragment over verbatim n-gram passages (at least ``dense`` = 0.9 of their words
  inside n-gram seeds) that cover at least a third of it: the rest of the fragment is a
  neighbouring sentence that shares some words with the source (on the training pairs' verbatim
  cases, widening to such fragments cost 0.03 of precision; a third rather than a half took
  translation from 0.875 to 0.890, its short verbatim stretches no longer widened), and a fragment each of whose seed
  sentences holds a word of one of them when they are verbatim or only one (its seeds are their
  words: two verbatim copies with unrelated text between them stay two passages).
- Otherwise the fragment joins the n-gram passages it overlaps and its seed sentence pairs that
  none of them holds into one passage, the bounding box of them all in each text (a reworded
  copy whose unchanged stretches gave n-gram passages is one detection, not a scatter: PAN's
  granularity). Its other sentences widen nothing: a fragment's first or last sentence may hold
  text around the copy (a sentence of 80 words cut from text without full stops), while two
  copies more than 30 words apart stay two passages, as :mod:`.extend` promises, unless the
  seeds of a sentence between them join them.

Passages that then overlap in the suspicious text are resolved as the winner's filtering
resolves them: two overlapping in both texts are joined; otherwise the one with more suspicious
words is kept (Sanchez-Perez et al. 2014, "resolving overlapping cases").
"""

from __future__ import annotations

from dataclasses import dataclass

from coderiv.overlap.align.extend import Chain

#: Word bounds of a passage: first and end word in A, first and end word in B.
Bounds = tuple[int, int, int, int]


@dataclass(frozen=True)
class Candidate:
    """A passage before its words are marked: its bounds, the n-gram chain it came from (None for
    a passage that a sentence fragment made or widened) and whether a sentence fragment made it."""

    bounds: Bounds
    chain: Chain | None
    reworded: bool


def _overlap(x0: int, x1: int, y0: int, y1: int) -> bool:
    return x0 < y1 and y0 < x1


def _meets(p: Bounds, q: Bounds) -> bool:
    return _overlap(p[0], p[1], q[0], q[1]) and _overlap(p[2], p[3], q[2], q[3])


def _density(bounds: Bounds, chain: Chain) -> float:
    """Share of a passage's suspicious words inside its n-gram seeds (1.0: verbatim)."""
    return chain.covered() / max(bounds[1] - bounds[0], 1)


def _union(boxes: list[Bounds]) -> Bounds:
    return min(b[0] for b in boxes), max(b[1] for b in boxes), min(b[2] for b in boxes), max(b[3] for b in boxes)


def combine(
    ngram: list[tuple[Bounds, Chain]], sentence: list[tuple[Bounds, list[Bounds]]], chars_a: list[int],
    min_chars: int = 150, cover: float = 0.8, dense: float = 0.9,
) -> list[Candidate]:
    """The passages of both kinds (module docstring), in A's order; ``sentence`` holds each
    fragment's bounds and the bounds of its seed sentence pairs, ``chars_a[k]`` is the
    character offset where word k of A starts (one more entry: the text's length)."""
    absorbed: set[int] = set()
    made: list[Candidate] = []
    for f, seeded in sentence:
        inside = [k for k, (b, _) in enumerate(ngram) if _meets(b, f)]
        if not inside:
            if chars_a[f[1]] - chars_a[f[0]] >= min_chars:
                made.append(Candidate(f, None, True))
            continue
        covered = sum(min(f[1], ngram[k][0][1]) - max(f[0], ngram[k][0][0]) for k in inside)
        if covered >= cover * (f[1] - f[0]):
            continue
        verbatim = all(_density(*ngram[k]) >= dense for k in inside)
        if verbatim and 3 * covered >= f[1] - f[0]:
            continue
        unexplained = [s for s in seeded if not any(_overlap(s[0], s[1], *ngram[k][0][:2]) for k in inside)]
        if not unexplained and (verbatim or len(inside) == 1):
            continue
        absorbed.update(inside)
        made.append(Candidate(_union([*unexplained, *(ngram[k][0] for k in inside)]), None, True))
    made += [Candidate(b, chain, False) for k, (b, chain) in enumerate(ngram) if k not in absorbed]
    return _resolve(made)


def _resolve(candidates: list[Candidate]) -> list[Candidate]:
    """Overlaps in A removed: joined when they overlap in B too, else the longer in A kept."""
    out: list[Candidate] = []
    for c in sorted(candidates, key=lambda c: (c.bounds[0], -c.bounds[1])):
        while True:
            if not out or not _overlap(out[-1].bounds[0], out[-1].bounds[1], c.bounds[0], c.bounds[1]):
                out.append(c)
                break
            last = out[-1]
            if _meets(last.bounds, c.bounds):
                out.pop()
                c = Candidate(_union([last.bounds, c.bounds]), None, True)
            elif last.bounds[1] - last.bounds[0] >= c.bounds[1] - c.bounds[0]:
                break
            else:
                out.pop()
    return out
