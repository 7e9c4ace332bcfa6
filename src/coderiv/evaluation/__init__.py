"""Measuring methods (SPEC §4): the method table built from the searchers (:mod:`.methods`),
metrics and TREC files (:mod:`.evaluate`), analysis variants (:mod:`.variants`), the plot
(:mod:`.plot`, extra ``plot``), the plagiarism generator and its evaluation (:mod:`.generate`,
:mod:`.plagiarism`), and deterministic synthetic collections (:mod:`.synthetic`)."""

from coderiv.evaluation.evaluate import Topics, evaluate_method, evaluate_run
from coderiv.evaluation.methods import expand_methods, get_method

__all__ = ["Topics", "evaluate_method", "evaluate_run", "expand_methods", "get_method"]
