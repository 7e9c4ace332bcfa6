"""Summaries: a fragment whose suspicious side is much shorter than its source side, extended
with a wider gap on the source side (Sanchez-Perez, Sidorov & Gelbukh, PAN 2014: the winner's
*adaptive behaviour*, a second run with ``src_gap`` = 24 sentences kept when the pair looks like a
summary; Suchomel, Kasprzak & Brandejs were the best on summaries at PAN 2013 with a similar
wide source interval).

A person's summary keeps a few sentences' worth of the source's content words, each near a
different part of a long source passage, so the seeds of one summary lie many sentences apart in
the source and the ordinary gap (:mod:`.clusters`, 4 sentences) cuts it into pieces. A second
clustering keeps the gap of 4 sentences in the suspicious text and allows ``source_gap`` in the
source; its fragments are validated by :func:`.clusters.containment` (the share of the summary's
tf-isf weight whose terms the source side holds) at least ``min_contained``, since the cosine of
a short summary with a long source passage is small however faithful the summary. A fragment of
it replaces the ordinary fragments it overlaps in the suspicious text when it has the shape of a
summary: its source side at least ``ratio`` times as long as its suspicious side (in words), at
least ``min_seeds`` seeds, of which no ordinary fragment holds ``share`` (a summary's seeds are
scattered over its source; a heavily reworded copy's seeds are together in one ordinary
fragment, and the wide clustering only added chance matches far away in the source: on the
training pairs' translations that widened source sides by thousands of characters), and a
cosine of its two sides of at least ``min_cosine``.

Defaults (tuned on the PAN 2013 training pairs, docs/alignment.md): ``source_gap`` = 1000
sentences, in effect the whole source (the paper's 24 gave summary plagdet 0.489 against 0.536
on every 5th pair: PAN's summaries condense a whole source document, and the containment keeps
unrelated sentences out), ``ratio`` = 3 (a summary of PAN 2013 is 5-15 times shorter than its
source passage; an ordinary copy is about as long, a heavily edited one at most twice),
``min_seeds`` = 3 (two chance seeds far apart are not a summary), ``min_contained`` = 0.6 (0.5
took translation from 0.875 to 0.753: chance summaries of topical text; 0.75 lost summaries),
``share`` = 0.7, ``min_cosine`` = 0.31 (the summary-shaped fragments of the verbatim and
no-plagiarism pairs had cosine 0.21-0.30, most true summaries 0.34-0.56: on all pairs, verbatim
plagdet 0.972 to 0.986, summary 0.606 to 0.562).
"""

from __future__ import annotations

from coderiv.overlap.align.clusters import Fragment, fragments, similarity
from coderiv.overlap.align.sentence_seeds import SentenceSeeds
from coderiv.overlap.align.sentences import Sentences


def _words(sentences: Sentences, start: int, end: int) -> int:
    return int(sentences.end[end - 1] - sentences.first[start])


def is_summary(f: Fragment, sa: Sentences, sb: Sentences, ratio: float, min_seeds: int) -> bool:
    """Whether ``f`` has the shape of a summary (module docstring)."""
    return f.seeds >= min_seeds and _words(sb, f.b0, f.b1) >= ratio * _words(sa, f.a0, f.a1)


def _scattered(wide: Fragment, ordinary: list[Fragment], share: float) -> bool:
    """Whether no ordinary fragment overlapping ``wide`` in A holds ``share`` of its seeds: a
    summary's seeds are scattered over the source, a copy's are together in one fragment (and
    the wide clustering only added chance seeds far away in the source)."""
    held = max((f.seeds for f in ordinary if f.a0 < wide.a1 and wide.a0 < f.a1), default=0)
    return held < share * wide.seeds


def with_summaries(
    ordinary: list[Fragment], seeds: SentenceSeeds, sa: Sentences, sb: Sentences, gap: int = 4,
    source_gap: int = 1000, ratio: float = 3.0, min_seeds: int = 3, min_contained: float = 0.6, share: float = 0.7,
    min_cosine: float = 0.31,
) -> list[Fragment]:
    """``ordinary`` with the summary-shaped fragments of the wide clustering (module docstring)
    in place of those they overlap in A, in A's order."""
    if len(seeds) < min_seeds:
        return ordinary
    wide = [
        f for f in fragments(seeds, gap, source_gap, 0, min_contained, min_seeds, contained=True)
        if is_summary(f, sa, sb, ratio, min_seeds)
    ]
    wide = [w for w in wide if _scattered(w, ordinary, share) and similarity(seeds, w.a0, w.a1, w.b0, w.b1) >= min_cosine]
    if not wide:
        return ordinary
    kept = [f for f in ordinary if not any(w.a0 < f.a1 and f.a0 < w.a1 for w in wide)]
    return sorted(kept + wide, key=lambda f: (f.a0, f.b0))
