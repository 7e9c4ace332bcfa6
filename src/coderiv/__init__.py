"""coderiv: find the coderivatives of a document — its versions, revisions, mirrors and
plagiarisms — in a collection.

The pipeline (see ``docs/architecture.md``): a collection (:mod:`coderiv.collection`) is
analysed (:mod:`coderiv.analysis`) into keys (:mod:`coderiv.keys`: terms, fingerprint minutiae,
chunk ids), stored as inverted postings (:mod:`coderiv.postings`) in an atomic, memory-mapped
index (:mod:`coderiv.index`, written by :mod:`coderiv.writer`); a query document is ranked
against it (:mod:`coderiv.query`, :mod:`coderiv.pruning`) with a measure from the registry
(:mod:`coderiv.scoring`), every score an absolute percentage of the query's self-score.
Fingerprints (:mod:`coderiv.fingerprint_search`), exact overlap (:mod:`coderiv.matching`,
:mod:`coderiv.verify`), evaluation (:mod:`coderiv.evaluate`) and n-to-n pairs
(:mod:`coderiv.pairs`) work on the same index.
"""

__version__ = "0.1.0"

from . import chunks  # noqa: E402,F401  (registers the "chunks" key kind)
from . import fingerprint  # noqa: E402,F401  (registers the "fingerprint" key kind)
from .analysis import AnalysisSettings, Analyzer  # noqa: E402
from .errors import (  # noqa: E402
    AnalysisMismatchError,
    CoderivError,
    CorruptIndexError,
    IndexNotFoundError,
    InputError,
    UnknownNameError,
)
from .index import Index, UpdateReport, resolve_index_path  # noqa: E402
from .fingerprint_search import FingerprintSearcher  # noqa: E402  (registers fingerprint evaluation)
from .keys import StoreSpec  # noqa: E402
from .query import Match, QueryResult, Searcher, search  # noqa: E402
from .scoring import DEFAULT_MEASURE, MEASURES, Measure, get_measure  # noqa: E402
from .compare import compare_texts  # noqa: E402
from .matching import Passage, normalize, shared_passages  # noqa: E402
from .verify import verify_result  # noqa: E402  (registers the "verified:" evaluation family)

__all__ = [
    "DEFAULT_MEASURE",
    "MEASURES",
    "AnalysisMismatchError",
    "AnalysisSettings",
    "Analyzer",
    "CoderivError",
    "CorruptIndexError",
    "FingerprintSearcher",
    "Index",
    "IndexNotFoundError",
    "InputError",
    "Match",
    "Measure",
    "Passage",
    "QueryResult",
    "Searcher",
    "StoreSpec",
    "UnknownNameError",
    "UpdateReport",
    "__version__",
    "compare_texts",
    "get_measure",
    "normalize",
    "resolve_index_path",
    "search",
    "shared_passages",
    "verify_result",
]
