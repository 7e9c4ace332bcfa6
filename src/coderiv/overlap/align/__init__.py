"""Text alignment (docs/alignment.md): the passages of a suspicious text copied from a source,
across edits, one module per step of the PAN 2012-2015 text-alignment systems (Potthast et al.,
PAN overviews 2012-2014: seeding, extension, filtering):

- :mod:`.words`: the words of a raw text with their character offsets (the unit of every step);
- :mod:`.seeds`: word n-grams the two texts share (Kasprzak & Brandejs 2010; Torrejón & Ramos 2012-13);
- :mod:`.extend`: seeds joined into chains, close in both texts (valid intervals, Kasprzak & Brandejs);
- :mod:`.filter`: short chains dropped, overlapping ones resolved (Sanchez-Perez et al. 2014);
- :mod:`.edges`: each passage grown over the identical words just outside it;
- :mod:`.terms`, :mod:`.sentences`, :mod:`.sentence_seeds`: sentence pairs similar in their stemmed
  content words (Sanchez-Perez, Sidorov & Gelbukh, PAN 2014), seeds that survive rewording;
- :mod:`.clusters`, :mod:`.summaries`: those seeds clustered into fragments, summaries with a wide source gap;
- :mod:`.combine`: fragments and n-gram passages joined into one set of passages, filtered;
- :mod:`.diff`, :mod:`.passage`, :mod:`.kinds`: the passage's words marked identical or changed, its
  offsets, its kind of reuse (verbatim, edited, paraphrased, summarised);
- :mod:`.pipeline`: the steps in order, with their settings and why (:func:`align_texts`);
- :mod:`.pan_format`, :mod:`.pan`: PAN's detection XML and its folder interface (``coderiv align``).
"""

from coderiv.overlap.align.kinds import REUSE_KINDS, Reuse
from coderiv.overlap.align.passage import AlignedPassage, WordSpan
from coderiv.overlap.align.pipeline import DEFAULT_SETTINGS, AlignSettings, align_sources, align_texts, align_words

__all__ = [
    "DEFAULT_SETTINGS", "REUSE_KINDS", "AlignSettings", "AlignedPassage", "Reuse", "WordSpan", "align_sources", "align_texts",
    "align_words",
]
