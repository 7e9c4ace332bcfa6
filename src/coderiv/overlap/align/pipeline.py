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

Then, for copies whose words did not survive (issue 40: random word operations, machine
paraphrase, summaries), the PAN 2014 winner's steps (Sanchez-Perez, Sidorov & Gelbukh, CLEF 2014
Working Notes, CEUR-WS Vol-1180):

5. **sentence seeds** (:mod:`.terms`, :mod:`.sentences`, :mod:`.sentence_seeds`): sentence pairs
   whose tf-isf cosine and Dice over stemmed, stopword-free words are both at least 0.33;
6. **clustering** (:mod:`.clusters`): seeds grouped with a distance of 4 sentences in each text,
   each fragment validated (cosine 0.34), an invalid one clustered again more tightly;
7. **summaries** (:mod:`.summaries`): fragments whose source side is much longer, from a
   clustering with a source gap as wide as the source;
8. **combining** (:mod:`.combine`): a fragment joins the n-gram passages it overlaps into one
   passage unless they already explain it; alone it must have 150 characters; overlaps resolved;
9. **bridging** (:mod:`.bridges`): neighbouring passages joined across a gap of at most 200 words
   of which the source holds half the content words.

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

import numpy as np

from coderiv.overlap.align.bridges import bridge
from coderiv.overlap.align.clusters import fragments
from coderiv.overlap.align.combine import Bounds, Candidate, combine
from coderiv.overlap.align.edges import grow_edges
from coderiv.overlap.align.extend import Chain, chain_seeds
from coderiv.overlap.align.filter import resolve_overlaps
from coderiv.overlap.align.passage import AlignedPassage, build_passage
from coderiv.overlap.align.seeds import Seeds, find_seeds
from coderiv.overlap.align.sentence_seeds import sentence_seeds
from coderiv.overlap.align.sentences import Sentences, split_sentences
from coderiv.overlap.align.summaries import with_summaries
from coderiv.overlap.align.terms import term_ids
from coderiv.overlap.align.words import Words, split_words


@dataclass(frozen=True)
class AlignSettings:
    """The parameters of the steps (module docstring and each step's module: defaults and why)."""

    n: int = 3
    max_gap: int = 20
    max_occurrences: int = 8
    long_gap: int = 30
    gap_ratio: float = 0.5
    min_words: int = 15
    #: the seeds that survive rewording (:mod:`.sentence_seeds`, :mod:`.clusters`, :mod:`.summaries`)
    reworded: bool = True
    min_cosine: float = 0.33
    min_dice: float = 0.33
    min_similarity: float = 0.34
    sentence_gap: int = 4
    summary_gap: int = 1000
    summary_ratio: float = 3.0
    min_chars: int = 150
    cover: float = 0.8
    bridge_gap: int = 200
    bridge_held: float = 0.5

    def __post_init__(self) -> None:
        if self.n < 1 or self.max_gap < 0 or self.max_occurrences < 1 or self.min_words < 1:
            raise ValueError("alignment needs n >= 1, max_gap >= 0, max_occurrences >= 1 and min_words >= 1")
        if self.sentence_gap < 0 or self.summary_gap < self.sentence_gap or self.min_chars < 0:
            raise ValueError("alignment needs 0 <= sentence_gap <= summary_gap and min_chars >= 0")


DEFAULT_SETTINGS = AlignSettings()


@dataclass(frozen=True)
class SentenceView:
    """A text's words as terms (:mod:`.terms`) and its sentences (:mod:`.sentences`)."""

    terms: np.ndarray
    sentences: Sentences


def sentence_view(words: Words) -> SentenceView:
    """The normalised terms and sentences of ``words`` (computed once per text)."""
    return SentenceView(term_ids(words), split_sentences(words))


def align_texts(a: str, b: str, settings: AlignSettings = DEFAULT_SETTINGS) -> list[AlignedPassage]:
    """The passages of ``a`` (suspicious) aligned with ``b`` (source), in ``a``'s order."""
    vocabulary: dict[str, int] = {}
    wa, wb = split_words(a, vocabulary), split_words(b, vocabulary)
    return align_words(wa, wb, settings)


def align_sources(a: str, sources: Mapping[str, str], settings: AlignSettings = DEFAULT_SETTINGS) -> dict[str, list[AlignedPassage]]:
    """The passages of ``a`` aligned with each source (name -> text), ``a`` split into words
    and sentences once."""
    vocabulary: dict[str, int] = {}
    wa = split_words(a, vocabulary)
    view = sentence_view(wa) if settings.reworded else None
    return {name: align_words(wa, split_words(text, vocabulary), settings, view) for name, text in sources.items()}


def align_words(
    wa: Words, wb: Words, settings: AlignSettings = DEFAULT_SETTINGS, view_a: SentenceView | None = None,
) -> list[AlignedPassage]:
    """:func:`align_texts` on words already split with one shared vocabulary (a caller aligning
    one suspicious text with several sources splits it once, and may pass its sentence view)."""
    seeds = find_seeds(wa, wb, settings.n, settings.max_occurrences)
    chains = chain_seeds(seeds, settings.max_gap, settings.long_gap, settings.gap_ratio)
    chains = [piece for c in chains if c.covered() >= settings.min_words for piece in c.pieces()]
    kept = resolve_overlaps(chains, settings.min_words)
    ngram: list[tuple[Bounds, Chain]] = []
    for k, chain in enumerate(kept):
        low = kept[k - 1].susp_end if k else 0
        high = kept[k + 1].susp_start if k + 1 < len(kept) else len(wa)
        ngram.append((grow_edges(chain, wa.folded, wb.folded, low, high), chain))
    if not settings.reworded or len(wa) == 0 or len(wb) == 0:
        return [build_passage(chain, wa, wb, bounds) for bounds, chain in ngram]
    view_a = view_a or sentence_view(wa)
    view_b = sentence_view(wb)
    candidates = combine(
        ngram, reworded_bounds(wa, wb, settings, view_a, view_b), np.append(wa.starts, len(wa.text)).tolist(),
        settings.min_chars, settings.cover,
    )
    candidates = bridge(candidates, view_a.terms, view_b.terms, settings.bridge_gap, settings.bridge_held)
    return [build_passage(_chain_of(c, seeds), wa, wb, c.bounds) for c in candidates]


def reworded_bounds(
    wa: Words, wb: Words, settings: AlignSettings = DEFAULT_SETTINGS, view_a: SentenceView | None = None,
    view_b: SentenceView | None = None,
) -> list[tuple[Bounds, list[Bounds]]]:
    """The validated sentence fragments of the pair, summaries included, as word bounds, each
    with the word bounds of its seed sentence pairs."""
    va = view_a or sentence_view(wa)
    vb = view_b or sentence_view(wb)
    seeds = sentence_seeds(
        va.terms, va.sentences, vb.terms, vb.sentences, settings.min_cosine, settings.min_dice,
        max_occurrences=settings.max_occurrences,
    )
    if len(seeds) == 0:
        return []
    gap = settings.sentence_gap
    found = fragments(seeds, gap, gap, 0, settings.min_similarity)
    found = with_summaries(
        found, seeds, va.sentences, vb.sentences, gap, settings.summary_gap, settings.summary_ratio,
    )
    sa, sb = va.sentences, vb.sentences
    return [
        (
            (int(sa.first[f.a0]), int(sa.end[f.a1 - 1]), int(sb.first[f.b0]), int(sb.end[f.b1 - 1])),
            [(int(sa.first[i]), int(sa.end[i]), int(sb.first[j]), int(sb.end[j])) for i, j in f.seed_pairs],
        )
        for f in found
    ]


def _chain_of(candidate: Candidate, seeds: Seeds) -> Chain:
    """The n-gram chain a candidate came from, or for one a fragment made, the longest
    increasing run of the n-gram seeds inside it (the anchors of its word marking)."""
    if candidate.chain is not None:
        return candidate.chain
    a0, a1, b0, b1 = candidate.bounds
    n = seeds.n
    inside = (seeds.susp >= a0) & (seeds.susp + n <= a1) & (seeds.src >= b0) & (seeds.src + n <= b1)
    return Chain(seeds.susp[inside].tolist(), seeds.src[inside].tolist(), n).monotone()
