"""Absolute percentages (SPEC §3's self-score rule) and the one ``--min-percent`` rule.

Every method reports 100 · S(q,d) / S(q,q): the query scored against itself is 100%. A
threshold is a percentage, and a document passes it when its percentage, computed this way, is
at least the threshold less a relative 1e-12: summing the same contributions in another order
may give 29.999999999999996% for an exact 30%, and that document must pass. Searchers that
prune by raw score use :func:`score_floor`, the same rule written for raw scores.

A percentage above 100 by no more than rounding noise (a copy of the query summed in another
order than its self-score: 100.00000000000006) is 100: for the ideal measures (cosine, the
identity measures) and every share of the query the definition bounds the value at 100, and
for ``inner`` and ``normalized``, which can pass 100 for real, such noise is not a difference.
A real excess (a long document under ``inner``: 180%) is kept as it is (SPEC §3).
"""

from __future__ import annotations

import numpy as np

#: Relative slack of the threshold comparison (floating-point noise, never a real difference).
THRESHOLD_SLACK = 1e-12
#: Relative excess over 100% that is rounding noise of the sums, never a real difference.
ROUNDING_SLACK = 1e-9


def percent(scores: np.ndarray | float, own: float) -> np.ndarray:
    """100 · S(q,d) / S(q,q); all zeros when the self-score is 0 (SPEC §3); an excess over 100
    within :data:`ROUNDING_SLACK` is 100 (issue 43: ``100.00000000000006``)."""
    if own <= 0:
        return np.zeros_like(np.asarray(scores, np.float64))
    raw = 100.0 * np.asarray(scores, np.float64) / own
    return np.where((raw > 100.0) & (raw <= 100.0 * (1 + ROUNDING_SLACK)), 100.0, raw)


def meets_threshold(percentages: np.ndarray, min_percent: float) -> np.ndarray:
    """Which percentages pass ``--min-percent`` (at or above it, up to rounding noise)."""
    return np.asarray(percentages) >= min_percent * (1 - THRESHOLD_SLACK)


def score_floor(own: float, min_percent: float) -> float:
    """The raw score a document needs to pass ``min_percent`` given the self-score ``own``."""
    return own * min_percent / 100.0 * (1 - THRESHOLD_SLACK) if own > 0 else 0.0
