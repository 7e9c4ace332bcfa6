"""Hand-built reworded pairs shared by the alignment and report tests (issue 40): a copy whose
sentences were reordered and every third word replaced, and a summary of a long source."""

from __future__ import annotations

SOURCE_SENTENCES = [
    "The harbour town lived on fishing and on the salt works north of the river.",
    "Every spring the boats sailed past the lighthouse and returned heavy with herring.",
    "The women cleaned the fish and packed it in barrels of coarse grey salt.",
    "Merchants from the capital bought the barrels in autumn and shipped them inland by canal.",
    "When the railway reached the coast the canal trade declined within a decade.",
    "Younger families moved to the factories of the capital and the old quarter emptied.",
]
# Every third word replaced (no three words in a row survive: no n-gram seed), and the
# sentences in another order (4, 1, 5, 0, 3, 2).
REWORDED = [
    "When a railway reached this coast the canal's trade declined in a decade.",
    "Every spring, the boats sailed beyond the lighthouse then returned heavy from herring.",
    "Younger families went to the factories in the capital so the old quarters emptied.",
    "That harbour town lived by fishing and by the salt pans north from the river.",
    "Merchants of the capital bought their barrels each autumn and shipped these inland along canal.",
    "Those women cleaned all fish and packed them into barrels with coarse grey salt.",
]
HOST = "My thesis studies regional economies in detail, using archives I consulted myself. "
TAIL = " Chapter two then turns to quantitative methods for estimating wages."
INTRO = "Introduction to coastal history. "
OUTRO = " Further reading follows at the end."


def word(k: int, m: int) -> str:
    """A made-up content word, distinct for each (sentence, place): the stemmer leaves it whole."""
    letters = "bcdfghjklmnpqrstvwz"
    return "".join(letters[d] for d in (k // 19, k % 19, m)) + "ora"


def source_sentence(k: int) -> str:
    w = [word(k, m) for m in range(8)]
    return f"The {w[0]} of the {w[1]} {w[2]} the {w[3]} and the {w[4]} near {w[5]} {w[6]} {w[7]}."


def summary_sentence(k: int) -> str:
    """Five of the source sentence's eight content words, in another order."""
    w = [word(k, m) for m in range(8)]
    return f"In short the {w[3]} {w[0]} and {w[5]} with the {w[6]} {w[1]}."
