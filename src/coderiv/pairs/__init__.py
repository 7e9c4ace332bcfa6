"""n-to-n: every document's most similar documents through the inverted index (:mod:`.engine`),
the stored table (:mod:`.table`), running it (:mod:`.run`), on Dask (:mod:`.dask_backend`, extra
``dask``), groups of coderivatives (:mod:`.groups`) and their version lineage (:mod:`.lineage`:
which came first and which derives from which, with :mod:`.dates`, :mod:`.arborescence` and the
renderings of :mod:`.lineage_output`)."""

from coderiv.pairs.dates import DocDate, read_dates_file
from coderiv.pairs.engine import DEFAULT_METHOD, METHODS
from coderiv.pairs.groups import find_groups
from coderiv.pairs.lineage import Lineage, Link, Profile, derive_lineage, index_lineages
from coderiv.pairs.run import run_pairs, similar
from coderiv.pairs.table import PairTable

__all__ = [
    "DEFAULT_METHOD", "METHODS", "DocDate", "Lineage", "Link", "PairTable", "Profile", "derive_lineage", "find_groups",
    "index_lineages", "read_dates_file", "run_pairs", "similar",
]
