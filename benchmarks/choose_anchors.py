"""How coderiv's 35 fingerprint anchors (``coderiv.keys.fingerprint.ANCHORS``) were chosen, once.

Paper 004 used 35 two-character anchors "selected at random, but extremely common strings such
as 'th' and 'it' were rejected". We do the same, reproducibly and without looking at any
evaluation collection: the 676 pairs of letters a–z are shuffled with a fixed seed and taken in
that order; a pair is kept when the share of terms (after coderiv's default analysis) that begin
with it, in a fixed English reference text, lies in [LOW, HIGH] — common enough to occur in
almost every document, not so common that fingerprints grow large. The reference text is the
GPL-3, Apache-2.0 and GFDL-1.3 licences shipped by Debian in /usr/share/common-licenses.

Run: ``python benchmarks/choose_anchors.py`` (prints the anchors and their shares).
"""

from __future__ import annotations

import random
import string
from collections import Counter
from pathlib import Path

from coderiv.text.analysis import Analyzer

REFERENCE = [Path("/usr/share/common-licenses") / n for n in ("GPL-3", "Apache-2.0", "GFDL-1.3")]
SEED = "coderiv-anchors-v1"
LOW, HIGH = 0.002, 0.01
COUNT = 35


def main() -> None:
    terms = [t for path in REFERENCE for t in Analyzer().terms(path.read_text("utf-8"))]
    starts = Counter(t[:2] for t in terms if len(t) >= 2)
    pairs = [a + b for a in string.ascii_lowercase for b in string.ascii_lowercase]
    random.Random(SEED).shuffle(pairs)
    chosen = [p for p in pairs if LOW <= starts[p] / len(terms) <= HIGH][:COUNT]
    total = sum(starts[p] for p in chosen) / len(terms)
    print(f"{len(terms)} reference terms; {len(chosen)} anchors begin {100 * total:.1f}% of them")
    print(", ".join(f'"{p}"' for p in sorted(chosen)))
    for p in sorted(chosen):
        print(f"{p}\t{100 * starts[p] / len(terms):.2f}%")


if __name__ == "__main__":
    main()
