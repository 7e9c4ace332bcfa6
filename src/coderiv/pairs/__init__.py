"""n-to-n: every document's most similar documents through the inverted index (SPEC §8; paper
003 §2.2–2.4).

Every document's k most similar documents, never by comparing all N² pairs: each key (chunk id
or term) of the index's postings emits the pairs of documents it contains, the pairs are
counted, and each document keeps its top k. The modules, in the order a run (:mod:`.run`) uses
them: the methods and their key weights (:mod:`.methods`); which keys count, boilerplate
skipped (:mod:`.eligibility`); the memory budget and the document ranges it sets
(:mod:`.budget`); counting shared keys by blocks of keys or by a sparse product
(:mod:`.counting`; on Dask: :mod:`.dask_backend`, extra ``dask``); or, with numba
(``coderiv[fast]``), counting and ranking each row in one compiled loop (:mod:`.compiled`,
every method: the same tables again); from counts to ranked rows (:mod:`.row_ranking`); an
incremental run's plan (:mod:`.incremental`); the stored table (:mod:`.table`). On top of the
table: groups of coderivatives (:mod:`.groups`) and their version lineage (:mod:`.lineage`:
which came first and which derives from which, with :mod:`.dates`, :mod:`.arborescence` and the
renderings of :mod:`.lineage_output`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coderiv.lazy_names import lazy_names

if TYPE_CHECKING:
    from coderiv.pairs.dates import DocDate, read_dates_file
    from coderiv.pairs.groups import find_groups
    from coderiv.pairs.lineage import Lineage, Link, Profile, derive_lineage, index_lineages
    from coderiv.pairs.methods import DEFAULT_METHOD, METHODS
    from coderiv.pairs.run import run_pairs, similar
    from coderiv.pairs.table import PairTable

__all__ = [
    "DEFAULT_METHOD", "DocDate", "Lineage", "Link", "METHODS", "PairTable", "Profile", "derive_lineage",
    "find_groups", "index_lineages", "read_dates_file", "run_pairs", "similar",
]


#: the names of the TYPE_CHECKING block above, each imported on first use: a report reading a
#: stored pair table (``coderiv.pairs.table``) does not import the lineage's scipy and the runs
__getattr__, __dir__ = lazy_names(__name__)
