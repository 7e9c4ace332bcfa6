"""n-to-n: every document's most similar documents through the inverted index (:mod:`.engine`),
the stored table (:mod:`.table`), running it (:mod:`.run`), on Dask (:mod:`.dask_backend`, extra
``dask``), and groups of coderivatives (:mod:`.groups`)."""

from coderiv.pairs.engine import DEFAULT_METHOD, METHODS
from coderiv.pairs.groups import find_groups
from coderiv.pairs.run import run_pairs, similar
from coderiv.pairs.table import PairTable

__all__ = ["DEFAULT_METHOD", "METHODS", "PairTable", "find_groups", "run_pairs", "similar"]
