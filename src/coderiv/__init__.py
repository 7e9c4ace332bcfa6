"""coderiv: find the coderivatives of a document — its versions, revisions, mirrors and
plagiarisms — in a collection.

The package is laid out by stage (see ``docs/architecture.md``), each subpackage importing only
the ones before it: :mod:`coderiv.text` (reading documents, analysis), :mod:`coderiv.keys` (what
a document is indexed by), :mod:`coderiv.index` (the persistent inverted index),
:mod:`coderiv.ranking` (measures, the scoring kernel, the searchers), :mod:`coderiv.overlap`
(exact passages, comparing texts, verification), :mod:`coderiv.pairs` (n-to-n),
:mod:`coderiv.report` (the evidence report), :mod:`coderiv.evaluation` and :mod:`coderiv.cli`. Every score is an absolute percentage of the
query's self-score. This module re-exports the public API.

The names are imported when first used (PEP 562), so ``import coderiv`` and the command line's
start-up do not pay for numpy, scipy and every subpackage up front.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderiv._version import __version__
from coderiv.lazy_names import lazy_names

if TYPE_CHECKING:
    from coderiv.errors import (
        AnalysisMismatchError,
        CoderivError,
        CorruptIndexError,
        IndexNotFoundError,
        InputError,
        MissingExtraError,
        UnknownNameError,
    )
    from coderiv.index import Index, UpdateReport, resolve_index_path
    from coderiv.keys import StoreSpec
    from coderiv.overlap import Passage, compare_texts, normalize, shared_passages, verify_result
    from coderiv.ranking import (
        DEFAULT_MEASURE,
        MEASURES,
        ContainmentSearcher,
        DocumentSearcher,
        FingerprintSearcher,
        Match,
        Measure,
        MeasureSearcher,
        QueryResult,
        Searcher,
        get_measure,
        make_searcher,
        open_with_chunks,
        search,
    )
    from coderiv.report import Report, ReportOptions, build_report, render_html, render_json
    from coderiv.text import AnalysisSettings, Analyzer

__all__ = [
    "DEFAULT_MEASURE",
    "MEASURES",
    "AnalysisMismatchError",
    "AnalysisSettings",
    "Analyzer",
    "CoderivError",
    "ContainmentSearcher",
    "CorruptIndexError",
    "DocumentSearcher",
    "FingerprintSearcher",
    "Index",
    "IndexNotFoundError",
    "InputError",
    "Match",
    "Measure",
    "MeasureSearcher",
    "MissingExtraError",
    "Passage",
    "QueryResult",
    "Report",
    "ReportOptions",
    "Searcher",
    "StoreSpec",
    "UnknownNameError",
    "UpdateReport",
    "__version__",
    "build_report",
    "compare_texts",
    "get_measure",
    "make_searcher",
    "normalize",
    "open_with_chunks",
    "render_html",
    "render_json",
    "resolve_index_path",
    "search",
    "shared_passages",
    "verify_result",
]


__getattr__, __dir__ = lazy_names(__name__)  # the names of the TYPE_CHECKING block above
