"""What kind of reuse an aligned passage is: verbatim, edited, paraphrased or summarised.

The kinds follow the obfuscation types of PAN's corpora (Potthast et al., PAN overviews
2012-2014: none, random, translation, summary) as a reader can check them from the passage
itself, from its word counts and its identical words (:mod:`.diff`):

- ``verbatim``: every word identical, on both sides (PAN's ``none``);
- ``summarised``: the source side at least ``summary_ratio`` (3) times as long as the suspicious
  side, the shape :mod:`.summaries` looks for (PAN's ``summary``: 5-15 times shorter);
- ``edited``: at least ``edited_share`` (half) of the suspicious side's words identical, in the
  same order (word edits: PAN's ``random`` operations, a sentence rewritten here and there);
- ``paraphrased``: fewer (PAN's ``translation``, a machine paraphrase, or a person's rewording).

The thresholds are ours: on the PAN 2013 training pairs, random obfuscation keeps a median of
about two thirds of the words and cyclic translation about two fifths (docs/alignment.md).
"""

from __future__ import annotations

from typing import Literal

Reuse = Literal["verbatim", "edited", "paraphrased", "summarised"]

#: Every kind, in the order reports list them.
REUSE_KINDS: tuple[Reuse, ...] = ("verbatim", "edited", "paraphrased", "summarised")

#: PAN's obfuscation names for the kinds (``coderiv align``'s ``obfuscation`` attribute is the kind).
PAN_OBFUSCATION: dict[Reuse, str] = {"verbatim": "none", "edited": "random", "paraphrased": "translation", "summarised": "summary"}


def reuse_kind(a_words: int, b_words: int, same_words: int, summary_ratio: float = 3.0, edited_share: float = 0.5) -> Reuse:
    """The kind of a passage of ``a_words`` suspicious and ``b_words`` source words, of which
    ``same_words`` are identical (module docstring)."""
    if a_words and same_words == a_words == b_words:
        return "verbatim"
    if b_words >= summary_ratio * max(a_words, 1):
        return "summarised"
    if same_words >= edited_share * a_words:
        return "edited"
    return "paraphrased"
