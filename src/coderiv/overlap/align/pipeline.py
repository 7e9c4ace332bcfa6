"""Text alignment, the steps in order: one aligned passage per copied passage, across edits (issue 24).

Exact passages (:mod:`coderiv.overlap.matching`) end at every difference, so a copied paragraph with a word
changed per sentence becomes a scatter of fragments. Alignment follows the three steps of the PAN
2012-2015 text-alignment systems (Potthast et al., PAN overviews):

1. **seeding** (:mod:`.seeds`): the word 3-grams the two texts share, case folded;
2. **extension** (:mod:`.extend`): seeds in the same order and close in both texts joined
   into one passage: the next seed at most 20 words after the passage in the suspicious text and
   at most 20 words outside it in the source, 20 growing to 30 for a passage whose seeds cover
   60 words or more;
3. **filtering** (:mod:`.filter`): passages whose seeds cover fewer than 15 words dropped, overlaps in the
   suspicious text resolved strongest first;
4. **edges** (:mod:`.edges`): each passage grown over the identical words just outside it, one differing word
   skipped when the word beyond it is identical (an edit next to a copy's first or last word
   leaves no 3-gram there), never into the neighbouring passage.

Each passage then gets a word-level diff of its two sides (:mod:`.diff`, :mod:`.passage`: its seeds as
anchors, :class:`difflib.SequenceMatcher` between them): which words are identical and which
differ, on each side, as WCopyfind's "imperfections" and Turnitin's highlighting show them, and the share of
identical words.

**What is guaranteed.** A copied passage is reported as one passage whenever its two sides share
a 3-gram at least every 20 words. A replaced word removes the 3-grams of 3 positions and any
other word operation (insert, delete, swap) those of at most 4, so any 7 replacements or any 4
operations anywhere in a copy never split it, nor does one word in four replaced evenly in a copy
of any length (tests/test_align.py checks all three with random edits);
PAN-style random edits at 30% of the positions leave a 3-gram every 20 words in almost every
stretch. Unrelated text is never inside a passage unless it shares 3-grams with the source; a
stretch of more than 30 unrelated words between two copies keeps them two passages.

**Defaults and why** (tuned on the development half of PAN 2013's text-alignment pairs and on
cases generated from the dev collection, docs/alignment.md):

- ``n = 3``: a 3-gram survives when 3 words in a row are untouched: 73% of positions at 10% word
  edits, 34% at 30%; 2-grams seed unrelated text ("of the", "it is") and lowered precision on
  PAN 2013 (0.918 against 0.925); Kasprzak & Brandejs's 5-grams die at 30% edits (17%).
- ``max_gap = 20`` words: at 30% edits the chance that 20 positions in a row hold no surviving
  3-gram is about 1%; 12 left those copies in pieces
  (granularity 1.14), 24 began to join distinct cases of the noise level.
- ``long_gap = 30``, ``gap_ratio = 0.5``: a passage covering 60 words bridges 30; this took the
  30%-edit cases from granularity 1.07 to 1.02 without loss elsewhere. 50 joined distinct cases.
- ``max_occurrences = 8``: an n-gram repeated more than this in a text is boilerplate.
- ``min_words = 15``: about 90 characters, 1.5 times the exact passages' 60-character threshold;
  PAN 2013's shortest cases are about 45 words (20 scored 0.926 against 0.925 there: no reason
  to hide copied sentences of 15-19 words from a report).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from coderiv.overlap.align.edges import grow_edges
from coderiv.overlap.align.extend import chain_seeds
from coderiv.overlap.align.filter import resolve_overlaps
from coderiv.overlap.align.passage import AlignedPassage, build_passage
from coderiv.overlap.align.seeds import find_seeds
from coderiv.overlap.align.words import Words, split_words


@dataclass(frozen=True)
class AlignSettings:
    """The parameters of the three steps (module docstring: defaults and why)."""

    n: int = 3
    max_gap: int = 20
    max_occurrences: int = 8
    long_gap: int = 30
    gap_ratio: float = 0.5
    min_words: int = 15

    def __post_init__(self) -> None:
        if self.n < 1 or self.max_gap < 0 or self.max_occurrences < 1 or self.min_words < 1:
            raise ValueError("alignment needs n >= 1, max_gap >= 0, max_occurrences >= 1 and min_words >= 1")


DEFAULT_SETTINGS = AlignSettings()


def align_texts(a: str, b: str, settings: AlignSettings = DEFAULT_SETTINGS) -> list[AlignedPassage]:
    """The passages of ``a`` (suspicious) aligned with ``b`` (source), in ``a``'s order."""
    vocabulary: dict[str, int] = {}
    wa, wb = split_words(a, vocabulary), split_words(b, vocabulary)
    return align_words(wa, wb, settings)


def align_sources(a: str, sources: Mapping[str, str], settings: AlignSettings = DEFAULT_SETTINGS) -> dict[str, list[AlignedPassage]]:
    """The passages of ``a`` aligned with each source (name -> text), ``a`` split into words once."""
    vocabulary: dict[str, int] = {}
    wa = split_words(a, vocabulary)
    return {name: align_words(wa, split_words(text, vocabulary), settings) for name, text in sources.items()}


def align_words(wa: Words, wb: Words, settings: AlignSettings = DEFAULT_SETTINGS) -> list[AlignedPassage]:
    """:func:`align_texts` on words already split with one shared vocabulary (a caller aligning
    one suspicious text with several sources splits it once)."""
    seeds = find_seeds(wa, wb, settings.n, settings.max_occurrences)
    chains = chain_seeds(seeds, settings.max_gap, settings.long_gap, settings.gap_ratio)
    chains = [piece for c in chains if c.covered() >= settings.min_words for piece in c.pieces()]
    kept = resolve_overlaps(chains, settings.min_words)
    out = []
    for k, chain in enumerate(kept):
        low = kept[k - 1].susp_end if k else 0
        high = kept[k + 1].susp_start if k + 1 < len(kept) else len(wa)
        out.append(build_passage(chain, wa, wb, grow_edges(chain, wa.folded, wb.folded, low, high)))
    return out
