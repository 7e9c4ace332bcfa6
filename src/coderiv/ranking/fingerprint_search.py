"""Querying a fingerprint store (SPEC §5): score = distinct minutiae shared with the query.

One vectorized pass, as for ranked queries (:func:`coderiv.ranking.search.all_scores`): the query's
minutiae are looked up in the store, their postings gathered in one operation and counted per
document with ``np.bincount`` (each minutia's postings list a document at most once, so the
count is the number of *distinct* shared minutiae).

**Absolute percentages** follow the self-score rule of SPEC §3: the query is scored against
itself as the collection would hold it, S(q,q) = |F_query(q) ∩ F(q)|, where F is the store's
strategy and F_query the query's (the same strategy, or ``full`` with ``full_query``). With the
store's own strategy that is |F(q)|, and no document scores more than 100%. With a full query it
is still |F(q)| for every strategy whose phrases are g-word phrases, so a copy of the query
scores 100%; a document whose fingerprint holds *more* of the query's phrases than the query's
own fingerprint (all-substrings on a shifted repetition of the query) scores above 100%, and is
reported as it is, like ``inner`` in SPEC §3.

**rarest-in-collection** is exact: its store keeps every distinct minutia of each document, and
the fingerprint of each document — its r minutiae in the fewest documents of the collection,
ties to the smallest minutia — is selected from the live store when it is opened
(:func:`rarest_selection`), so it is always that of the current collection, after any update.
A query's fingerprint is chosen the same way, its minutiae absent from the collection counting
as the rarest (as if the query were added to the collection).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coderiv.errors import CoderivError, InputError
from coderiv.index.format.postings import Postings, from_forward
from coderiv.index.index import Index
from coderiv.keys.fingerprint import STRATEGIES, fingerprint_function, normalize_params, parse_params
from coderiv.keys.kinds import StoreSpec
from coderiv.ranking.percent import percent
from coderiv.ranking.results import EMPTY_FINGERPRINT, QueryResult
from coderiv.text.analysis import AnalysisSettings, AnalyzedDocument


def fingerprint_stores(index: Index) -> list[StoreSpec]:
    """The index's fingerprint stores, by name."""
    return sorted((s for s in index.specs.values() if s.kind == "fingerprint"), key=lambda s: s.name)


def find_store(index: Index, strategy: str | None = None) -> StoreSpec:
    """The fingerprint store matching ``strategy`` (``anchor``, ``anchor:g=4``, a full store
    name, or None when the index has a single fingerprint store)."""
    stores = fingerprint_stores(index)
    hint = "build one with 'coderiv index SOURCE --fingerprint STRATEGY[:g=G,...]'"
    if not stores:
        raise CoderivError(f"the index at {index.root} has no fingerprint store; {hint}")
    if strategy is None:
        if len(stores) > 1:
            raise InputError(f"the index has several fingerprint stores; choose one with --strategy: {[s.name for s in stores]}")
        return stores[0]
    given = parse_params(strategy)
    canonical = normalize_params(given)  # validates names and values
    wanted = {k: canonical[k] for k in given if k in canonical}  # anchor:g=3 picks the g=3 store
    matching = [s for s in stores if all(s.param_dict.get(k) == v for k, v in wanted.items())]
    if not matching:
        raise InputError(f"the index has no fingerprint store for {strategy!r}; it has {[s.name for s in stores]}; {hint}")
    exact = [s for s in matching if s.param_dict == canonical]  # winnowing:g=3 means w=8 among w=4, 8, 16
    if len(matching) > 1 and len(exact) == 1:
        return exact[0]
    if len(matching) > 1:
        raise InputError(f"{strategy!r} matches several fingerprint stores; name one: {[s.name for s in matching]}")
    return matching[0]


def rarest_keys(keys: np.ndarray, doc_freqs: np.ndarray, r: int) -> np.ndarray:
    """The r keys with the smallest document frequency (ties: smallest key), sorted."""
    order = np.lexsort((keys, doc_freqs))
    return np.sort(keys[order[:r]])


def rarest_selection(pool: Postings, r: int) -> Postings:
    """Every document's r rarest-in-collection minutiae from a store of all its minutiae.

    One lexicographic sort of all postings by (document, document frequency, minutia); a
    posting is kept when fewer than r of its document's postings come before it.
    """
    df = pool.doc_freqs
    key_of = np.repeat(np.arange(pool.n_keys), df)
    docs = np.asarray(pool.docs).astype(np.int64)
    order = np.lexsort((key_of, df[key_of], docs))  # keys are sorted, so key index = key order
    sorted_docs = docs[order]
    first = np.searchsorted(sorted_docs, sorted_docs, side="left")
    kept = order[np.arange(len(order)) - first < r]
    kept = kept[np.lexsort((key_of[kept], docs[kept]))]
    bounds = np.searchsorted(docs[kept], np.arange(pool.n_docs + 1))
    keys = np.asarray(pool.keys)[key_of[kept]]
    per_doc = [
        (keys[bounds[d] : bounds[d + 1]], np.ones(bounds[d + 1] - bounds[d], np.int32)) for d in range(pool.n_docs)
    ]
    return from_forward(per_doc)


@dataclass
class PreparedFingerprint:
    """A query's fingerprint (distinct minutiae, sorted) and its self-score."""

    keys: np.ndarray
    self_score: int
    length: int  # the query's terms after analysis


class FingerprintSearcher:
    """Scores an index's documents by minutiae shared with query documents (reuse it for a batch).

    ``store`` names the fingerprint store (see :func:`find_store`); ``full_query`` fingerprints
    the query with the ``full`` strategy at the store's granularity ("anchor strategy/full
    query" in paper 004, Table 6).
    """

    unit = "minutiae"

    def __init__(
        self, index: Index, store: str | StoreSpec | None = None, full_query: bool = False,
        settings: AnalysisSettings | None = None,
    ) -> None:
        if settings is not None:
            index.check_settings(settings)
        self.index = index
        self.spec = store if isinstance(store, StoreSpec) else find_store(index, store)
        self.params = self.spec.param_dict
        self.strategy = STRATEGIES[self.params["strategy"]]
        self.full_query = full_query
        self.fingerprint = fingerprint_function(self.params)
        full_params = {"strategy": "full", "g": self.params["g"]}
        if "m" in self.params:
            full_params["m"] = self.params["m"]
        self.full_fingerprint = fingerprint_function(full_params)
        stored = index.store(self.spec.name)
        self.pool = stored
        self.postings = stored
        if self.strategy.needs_collection:
            self.pool_freqs = stored.doc_freqs
            self.postings = rarest_selection(stored, self.params["r"])

    @property
    def method(self) -> str:
        """The method's name as results show it, e.g. ``fingerprint:g=4,strategy=anchor``."""
        return self.spec.name + ("+full-query" if self.full_query else "")

    def _own(self, doc: AnalyzedDocument) -> np.ndarray:
        """F(q): the query's fingerprint by the store's strategy (collection-aware if need be)."""
        keys = self.fingerprint(doc)
        if self.strategy.needs_collection:
            return self._rarest(keys)
        return keys

    def _rarest(self, pool_keys: np.ndarray) -> np.ndarray:
        pos = self.pool.lookup(pool_keys)
        df = np.where(pos >= 0, self.pool_freqs[np.maximum(pos, 0)], 0)
        return rarest_keys(pool_keys, df, self.params["r"])

    def prepare_analyzed(self, doc: AnalyzedDocument) -> PreparedFingerprint:
        """The fingerprint of an analysed query and its self-score |F_query(q) ∩ F(q)|."""
        own = self._own(doc)
        if not self.full_query:
            return PreparedFingerprint(own, len(own), doc.length)
        keys = self.full_fingerprint(doc)
        return PreparedFingerprint(keys, len(np.intersect1d(keys, own)), doc.length)

    def prepare(self, text: str) -> PreparedFingerprint:
        return self.prepare_analyzed(self.index.analyzer.analyze(text))

    def prepare_doc(self, doc_id: str) -> PreparedFingerprint:
        """A document of the index as the query: its stored fingerprint (re-read from the
        indexed source when the query needs its full fingerprint)."""
        number = self.index.number(doc_id)
        length = int(self.index.doc_lengths[number])
        own = self.postings.doc_keys(number)[0]
        if not self.full_query:
            return PreparedFingerprint(np.asarray(own), len(own), length)
        keys = self._stored_full(number)
        if keys is None:
            text = self.index.source_texts().text(doc_id)
            keys = self.full_fingerprint(self.index.analyzer.analyze(text))
        return PreparedFingerprint(keys, len(np.intersect1d(keys, own)), length)

    def _stored_full(self, number: int) -> np.ndarray | None:
        """A document's full fingerprint at this g, if the index holds one (a ``full`` store, or
        the pool of rarest-in-collection): saves re-reading and re-analysing the document."""
        wanted = {k: v for k, v in self.params.items() if k in ("g", "m")}
        for spec in fingerprint_stores(self.index):
            params = spec.param_dict
            if params["strategy"] in ("full", "rarest-in-collection") and {
                k: v for k, v in params.items() if k in ("g", "m")
            } == wanted:
                return np.asarray(self.index.store(spec.name).doc_keys(number)[0])
        return None

    def _present(self, prepared: PreparedFingerprint) -> np.ndarray:
        """Store positions of the query's minutiae that occur in the collection (ascending)."""
        pos = self.postings.lookup(prepared.keys)
        return np.sort(pos[pos >= 0])

    def scores(self, prepared: PreparedFingerprint) -> tuple[np.ndarray, float]:
        """Every document's count of shared distinct minutiae, and the self-score."""
        n = self.index.n_docs
        pos = self._present(prepared)
        if len(pos) == 0:
            return np.zeros(n), float(prepared.self_score)
        docs, _, _ = self.postings.gather(pos)
        return np.bincount(docs, minlength=n).astype(np.float64), float(prepared.self_score)

    def percentages(self, prepared: PreparedFingerprint) -> np.ndarray:
        """Every document's absolute percentage 100 · shared / S(q,q) (zeros if S(q,q) = 0)."""
        scores, own = self.scores(prepared)
        return percent(scores, own)

    def rank(
        self, prepared: PreparedFingerprint, top: int | None = 10, *, label: str = "", min_percent: float = 0.0
    ) -> QueryResult:
        """The top documents by shared minutiae, with percentages (``top=None``: all scoring);
        ``min_percent`` keeps only documents at or above that percentage."""
        scores, own = self.scores(prepared)
        return QueryResult.ranked(
            scores, own, self.index.doc_ids, top, min_percent, label=label, method=self.method, query_length=prepared.length,
            matched=len(self._present(prepared)), query_terms=len(prepared.keys), empty=EMPTY_FINGERPRINT,
        )

    def search(self, text: str, top: int | None = 10, *, label: str = "") -> QueryResult:
        """Rank the collection against the document ``text`` by shared minutiae."""
        return self.rank(self.prepare(text), top, label=label)


