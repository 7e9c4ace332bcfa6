"""coderiv: find the coderivatives of a document — its versions, revisions, mirrors and
plagiarisms — in a collection.

The pipeline (see ``docs/architecture.md``): a collection (:mod:`coderiv.text.collection`) is
analysed (:mod:`coderiv.text.analysis`) into keys (:mod:`coderiv.keys.kinds`: terms, fingerprint minutiae,
chunk ids), stored as inverted postings (:mod:`coderiv.index.postings`) in an atomic, memory-mapped
index (:mod:`coderiv.index.index`, written by :mod:`coderiv.index.writer`); a query document is ranked
against it (:mod:`coderiv.ranking.search`, :mod:`coderiv.ranking.pruning`) with a measure from the registry
(:mod:`coderiv.ranking.measures`), every score an absolute percentage of the query's self-score.
Fingerprints (:mod:`coderiv.ranking.fingerprint_search`), exact overlap (:mod:`coderiv.overlap.matching`,
:mod:`coderiv.overlap.verify`), evaluation (:mod:`coderiv.evaluation.evaluate`) and n-to-n pairs
(:mod:`coderiv.pairs.engine`) work on the same index.
"""

from coderiv._version import __version__
from coderiv.errors import (  # noqa: E402
    AnalysisMismatchError,
    CoderivError,
    CorruptIndexError,
    IndexNotFoundError,
    InputError,
    UnknownNameError,
)
from coderiv.index.index import Index, UpdateReport, resolve_index_path  # noqa: E402
from coderiv.keys import (
    chunks,  # noqa: E402,F401  (registers the "chunks" key kind)
    fingerprint,  # noqa: E402,F401  (registers the "fingerprint" key kind)
)
from coderiv.keys.kinds import StoreSpec  # noqa: E402
from coderiv.overlap.compare import compare_texts  # noqa: E402
from coderiv.overlap.matching import Passage, normalize, shared_passages  # noqa: E402
from coderiv.overlap.verify import verify_result  # noqa: E402  (registers the "verified:" evaluation family)
from coderiv.ranking.fingerprint_search import FingerprintSearcher  # noqa: E402  (registers fingerprint evaluation)
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES, Measure, get_measure  # noqa: E402
from coderiv.ranking.results import Match, QueryResult  # noqa: E402
from coderiv.ranking.search import Searcher, search  # noqa: E402
from coderiv.text.analysis import AnalysisSettings, Analyzer  # noqa: E402

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
