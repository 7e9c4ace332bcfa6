"""Hypothesis strategies shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

#: A small vocabulary so that random documents share terms (and repeat them).
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "lam", "mu"]

document = st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join)
collection = st.lists(document, min_size=1, max_size=12)
