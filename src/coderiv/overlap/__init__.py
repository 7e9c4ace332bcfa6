"""Exact overlap between a few texts: matching statistics and shared passages
(:mod:`.matching`), shingles, chunks and Patricia (:mod:`.pairwise`), comparing two documents
(:mod:`.compare`), and verifying ranked candidates (:mod:`.verify`)."""

from coderiv.overlap.compare import compare_texts
from coderiv.overlap.matching import Passage, normalize, shared_passages
from coderiv.overlap.verify import VerifiedSearcher, verify_result, verify_results

__all__ = ["Passage", "VerifiedSearcher", "compare_texts", "normalize", "shared_passages", "verify_result", "verify_results"]
