"""Version lineage: which document of a group came first and which derives from which.

For a group of coderivatives (:mod:`coderiv.pairs.groups`) each document gets its most likely
parent, the evidence and a confidence. The evidence is chunk containment both ways (paper 003's
chunk similarity: the share of one document's distinct 5-word chunks found in the other):

* **closeness** of two documents, the mean of the two containments (symmetric), says which
  documents are neighbours in the history;
* **growth** of p → c, ``containment(p in c) − containment(c in p)`` (antisymmetric), says which
  way an edge runs when no dates are known: revisions mostly grow, so a later version holds most
  of its predecessor and adds material of its own.

The tree is the maximum spanning arborescence (Edmonds' algorithm, :mod:`.arborescence`) of
the directed graph over documents sharing chunks, an edge p → c weighing ``closeness +
GROWTH_WEIGHT × growth``. A date on both ends constrains an edge: only an earlier document can be
a parent (an edge then weighs ``closeness + GROWTH_WEIGHT``, its direction being certain); equal
dates say nothing and leave the edge to the text. So with dates each document's parent is, among
the earlier ones, the one it is closest to (among equally close ones, the latest); without dates
the order is the text's alone, a guess the output says it is, and the confidence is the measured
share of such links that are right (see :func:`text_confidence`). Two
documents with as many chunks each (the same text, most often) give no evidence of order at all
(growth 0): their link is reported as a ``tie`` with confidence 0.5 (a coin flip), its direction
chosen by a fixed hash of the ids, reproducibly and independently of the order the documents
were given in. A virtual root joined to every document at a prohibitive cost makes a group whose
documents do not all share chunks a forest instead of an error.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.sparse import csr_matrix

from coderiv.errors import CoderivError
from coderiv.keys.chunks import ngram_ids
from coderiv.keys.kinds import counted_keys, term_key
from coderiv.overlap.pairwise import DEFAULT_CHUNK_WORDS
from coderiv.pairs.arborescence import max_arborescence
from coderiv.pairs.dates import DocDate, document_dates, recorded_dates
from coderiv.pairs.groups import find_groups
from coderiv.pairs.methods import get_method
from coderiv.pairs.table import PairTable

if TYPE_CHECKING:
    from coderiv.index.format.postings import Postings
    from coderiv.index.index import Index

#: Weight of the growth term against closeness in an edge's weight (tuned on the dev collection,
#: docs/lineage.md): large enough to orient edges, small enough not to pick distant parents.
GROWTH_WEIGHT = 0.25
#: Where the text-only confidences come from: ``data/lineage_calibration.json``, the share of
#: text links that point to an earlier release on the dev collection, by |growth| bin, capped by
#: the share by containment of the child in its parent (benchmarks/calibrate_lineage.py,
#: docs/lineage.md "Confidence without dates").
CALIBRATION_FILE = "data/lineage_calibration.json"
#: Lineage basis labels.
ROOT, DATES, TEXT, TIE = "root", "dates", "text", "tie"
DEFAULT_MIN_PERCENT = 50.0
#: Largest group a lineage is drawn for: the work grows as n³ (846 documents take about 11 s).
MAX_LINEAGE_DOCS = 1000


@dataclass(frozen=True)
class Profile:
    """What lineage needs of one document: its distinct chunk ids and its term counts."""

    doc_id: str
    chunks: np.ndarray
    term_keys: np.ndarray
    term_counts: np.ndarray

    @classmethod
    def from_terms(cls, doc_id: str, terms: Sequence[str], n: int = DEFAULT_CHUNK_WORDS) -> Profile:
        """A profile from analysed terms (the chunks are those of the index's chunk store)."""
        keys, counts = counted_keys(Counter(terms), term_key)
        return cls(doc_id, np.unique(ngram_ids(terms, n, bits=32)) if terms else np.empty(0, np.uint64), keys, counts)


@dataclass(frozen=True)
class Link:
    """One document of a lineage: its parent (None for a root) and the evidence."""

    doc_id: str
    parent: str | None
    basis: str
    confidence: float
    #: percent of this document's chunks found in the parent, and of the parent's in this one
    in_parent: float = 0.0
    parent_in: float = 0.0
    words_added: int = 0
    words_removed: int = 0
    date: DocDate | None = None
    #: closeness to the parent (mean of the two containments, percent), and the next best parent
    #: the document could have had with its closeness (None when there was no other candidate)
    closeness: float = 0.0
    runner_up: tuple[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "parent": self.parent,
            "basis": self.basis,
            "confidence": round(self.confidence, 4),
            "percent_in_parent": round(self.in_parent, 4),
            "percent_of_parent_in_it": round(self.parent_in, 4),
            "words_added": self.words_added,
            "words_removed": self.words_removed,
            "date": self.date.to_dict() if self.date else None,
            "closeness": round(self.closeness, 4),
            "next_best_parent": (
                {"doc_id": self.runner_up[0], "closeness": round(self.runner_up[1], 4)} if self.runner_up else None
            ),
        }


@dataclass(frozen=True)
class Lineage:
    """The derivation forest of one group: links in document id order."""

    links: list[Link]
    group: int | None = None

    @property
    def basis(self) -> str:
        """``dates`` when every parent link rests on dates, ``text`` when none does, else ``mixed``."""
        kinds = {link.basis for link in self.links if link.parent is not None}
        if kinds and kinds <= {DATES}:
            return DATES
        return TEXT if DATES not in kinds else "mixed"

    @property
    def is_guess(self) -> bool:
        """Whether some link's direction is inferred from the text (or a tie), not from dates."""
        return any(link.basis in (TEXT, TIE) for link in self.links)

    def parent_of(self) -> dict[str, str | None]:
        return {link.doc_id: link.parent for link in self.links}

    def children(self) -> dict[str | None, list[str]]:
        """Parent id (None: the roots) → child ids in id order."""
        result: dict[str | None, list[str]] = {}
        for link in self.links:
            result.setdefault(link.parent, []).append(link.doc_id)
        return result

    def preorder(self) -> list[tuple[int, Link]]:
        """(depth, link) from each root down, children in id order."""
        by_id = {link.doc_id: link for link in self.links}
        kids = self.children()
        out: list[tuple[int, Link]] = []
        stack = [(0, doc) for doc in reversed(kids.get(None, []))]
        while stack:
            depth, doc = stack.pop()
            out.append((depth, by_id[doc]))
            stack.extend((depth + 1, child) for child in reversed(kids.get(doc, [])))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "size": len(self.links),
            "basis": self.basis,
            "order_is_a_guess": self.is_guess,
            "roots": self.children().get(None, []),
            "documents": [link.to_dict() for link in self.links],
        }


@dataclass(frozen=True)
class Calibration:
    """Measured accuracy of text-only links: by |growth| bin (the raw score) and, as a cap, by
    the percentage of the child found in its parent (isotonic: more containment, never less trust)."""

    growth_edges: tuple[float, ...]
    growth_confidence: tuple[float, ...]
    containment_edges: tuple[float, ...]
    containment_cap: tuple[float, ...]
    provenance: str

    @staticmethod
    def _bin(edges: tuple[float, ...], value: float) -> int:
        return min(max(int(np.searchsorted(edges, value, side="right")) - 1, 0), len(edges) - 2)

    def confidence(self, growth: float, in_parent: float) -> float:
        """The calibrated confidence of a text link (``in_parent`` in percent)."""
        by_growth = self.growth_confidence[self._bin(self.growth_edges, abs(growth))]
        return min(by_growth, self.cap(in_parent))

    def cap(self, in_parent: float) -> float:
        """The highest confidence a link with ``in_parent`` percent of the child in its parent can carry."""
        return self.containment_cap[self._bin(self.containment_edges, in_parent)]

    @property
    def highest(self) -> float:
        return max(min(g, max(self.containment_cap)) for g in self.growth_confidence)


@lru_cache(maxsize=1)
def calibration() -> Calibration:
    """The shipped calibration table (:data:`CALIBRATION_FILE`)."""
    data = json.loads(resources.files("coderiv").joinpath(CALIBRATION_FILE).read_text("utf-8"))
    return Calibration(
        tuple(data["growth_edges"]), tuple(data["growth_confidence"]), tuple(data["containment_edges"]),
        tuple(data["containment_cap"]), data["provenance"],
    )


def text_confidence(growth: float, in_parent: float = 100.0) -> float:
    """Confidence that a text-only link is right: 0.5 without evidence (a tie), else the share of
    such links found right on the dev collection (:func:`calibration`): by |growth|, capped by
    the containment of the child in its parent (``in_parent``, percent), so that a link where
    little of the child is in its parent never carries a high confidence."""
    if growth == 0:
        return 0.5
    return calibration().confidence(growth, in_parent)


def _id_rank(doc_ids: Sequence[str]) -> np.ndarray:
    """A fixed pseudo-random rank per id (tie breaking that neither input nor id order biases)."""
    digests = [hashlib.sha256(d.encode("utf-8")).digest() for d in doc_ids]
    order = sorted(range(len(doc_ids)), key=lambda i: digests[i])
    rank = np.empty(len(doc_ids), np.float64)
    rank[order] = np.arange(len(doc_ids))
    return rank


def containment_matrix(chunk_sets: Sequence[np.ndarray]) -> np.ndarray:
    """``c[i, j]`` = share of document i's distinct chunks also in document j (0..1)."""
    n = len(chunk_sets)
    sizes = np.array([len(c) for c in chunk_sets], np.float64)
    if n == 0 or not sizes.any():
        return np.zeros((n, n))
    ids, column = np.unique(np.concatenate(chunk_sets), return_inverse=True)
    rows = np.repeat(np.arange(n), sizes.astype(np.int64))
    incidence = csr_matrix((np.ones(len(rows)), (rows, column)), shape=(n, len(ids)))
    shared = np.asarray((incidence @ incidence.T).toarray(), np.float64)
    result: np.ndarray = np.divide(shared, sizes[:, None], out=np.zeros_like(shared), where=sizes[:, None] > 0)
    return result


def _word_changes(child: Profile, parent: Profile) -> tuple[int, int]:
    """(words added, words removed) going from parent to child, by indexed term counts."""
    keys = np.union1d(child.term_keys, parent.term_keys)
    c = np.zeros(len(keys), np.int64)
    p = np.zeros(len(keys), np.int64)
    c[np.searchsorted(keys, child.term_keys)] = child.term_counts
    p[np.searchsorted(keys, parent.term_keys)] = parent.term_counts
    diff = c - p
    return int(diff[diff > 0].sum()), int(-diff[diff < 0].sum())


def edge_weights(inside: np.ndarray, times: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Weights of the edges p → c (``-inf``: no edge), node 0 being a virtual root.

    ``inside`` is :func:`containment_matrix`, ``times`` each document's date as a number (NaN
    when unknown), ``rank`` the tie-breaking rank of each document (see the module docstring).
    Among equally close earlier documents the latest is preferred (by a negligible amount).
    """
    n = len(inside)
    closeness = (inside + inside.T) / 2
    growth = inside - inside.T  # growth[p, c]: how much more of p is in c than of c in p
    known = ~np.isnan(times)
    both = known[:, None] & known[None, :]
    with np.errstate(invalid="ignore"):
        earlier = both & (times[:, None] < times[None, :])
        later = both & (times[:, None] > times[None, :])
    recency = np.argsort(np.argsort(np.where(known, times, -np.inf), kind="stable"), kind="stable")
    direction = np.where(earlier, 1.0, growth)
    tie_break = 1e-9 * (rank[None, :] - rank[:, None]) + np.where(earlier, 1e-6 * recency[:, None], 0.0)
    docs = np.where((inside.T > 0) & ~later, closeness + GROWTH_WEIGHT * direction + tie_break / (n + 1), -np.inf)
    np.fill_diagonal(docs, -np.inf)
    weights = np.full((n + 1, n + 1), -np.inf)
    weights[1:, 1:] = docs
    weights[0, 1:] = -10.0 * (n + 1)  # a root costs more than any set of document edges gains
    return weights


def derive_lineage(profiles: Iterable[Profile], dates: dict[str, DocDate] | None = None, group: int | None = None) -> Lineage:
    """The derivation forest of ``profiles`` (see the module docstring)."""
    docs = sorted(profiles, key=lambda p: p.doc_id)
    ids = [p.doc_id for p in docs]
    if len(set(ids)) != len(ids):
        raise CoderivError("lineage: a document is given twice")
    if len(ids) > MAX_LINEAGE_DOCS:
        raise CoderivError(f"lineage of {len(ids)} documents at once: at most {MAX_LINEAGE_DOCS} are handled")
    dates = dates or {}
    n = len(docs)
    inside = containment_matrix([p.chunks for p in docs])
    growth = inside - inside.T
    when = [dates.get(d) for d in ids]
    times = np.array([w.when.timestamp() if w is not None else np.nan for w in when], np.float64)
    weights = edge_weights(inside, times, _id_rank(ids))
    parents = max_arborescence(weights, 0)[1:] - 1
    parent = {c: int(p) for c, p in enumerate(parents.tolist()) if p >= 0}
    closeness = (inside + inside.T) / 2
    links = []
    for c in range(n):
        p = parent.get(c)
        if p is None:
            links.append(Link(ids[c], None, ROOT, 1.0, date=when[c]))
            continue
        date_p, date_c = when[p], when[c]
        if date_p is not None and date_c is not None and date_p.when < date_c.when:
            basis, confidence = DATES, 1.0
        elif growth[p, c] == 0:
            basis, confidence = TIE, 0.5
        else:
            basis, confidence = TEXT, text_confidence(float(growth[p, c]), 100 * float(inside[c, p]))
        added, removed = _word_changes(docs[c], docs[p])
        others = weights[1:, c + 1].copy()
        others[p] = -np.inf
        runner = int(np.argmax(others))
        runner_up = (ids[runner], 100 * float(closeness[runner, c])) if np.isfinite(others[runner]) else None
        links.append(Link(
            ids[c], ids[p], basis, confidence, 100 * float(inside[c, p]), 100 * float(inside[p, c]),
            added, removed, when[c], 100 * float(closeness[p, c]), runner_up,
        ))
    return Lineage(links, group)


# -- from an index ----------------------------------------------------------------------------
def forward_keys(store: Postings, numbers: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Keys (sorted) and values of each document in ``numbers``, in one pass over the postings."""
    docs = np.asarray(store.docs)
    wanted = np.zeros(store.n_docs, bool)
    wanted[numbers] = True
    positions = np.flatnonzero(wanted[docs])
    owner = docs[positions]
    order = np.argsort(owner, kind="stable")  # keys stay ascending within a document
    positions, owner = positions[order], owner[order]
    keys = store.keys_at(store.key_of(positions))
    values = store.vals.take(positions).astype(np.int64)
    bounds = np.searchsorted(owner, numbers), np.searchsorted(owner, numbers, side="right")
    return {int(d): (keys[a:b], values[a:b]) for d, a, b in zip(numbers.tolist(), *bounds)}


def index_profiles(index: Index, doc_ids: Sequence[str], method: str = "chunks") -> dict[str, Profile]:
    """Profiles of ``doc_ids`` from the index's chunk and term stores."""
    store = get_method(method).store.name
    if store not in index.specs:
        raise CoderivError(f"the index has no {store} store: run 'coderiv pairs --method {method}' first")
    numbers = np.array(sorted(index.doc_numbers[d] for d in doc_ids), np.int64)
    chunks = forward_keys(index.store(store), numbers)
    terms = forward_keys(index.terms, numbers)
    return {
        index.doc_ids[d]: Profile(index.doc_ids[d], chunks[d][0], terms[d][0], terms[d][1]) for d in numbers.tolist()
    }


def index_lineages(
    index: Index,
    doc_id: str | None = None,
    group: int | None = None,
    everything: bool = False,
    min_percent: float = DEFAULT_MIN_PERCENT,
    mutual: bool = True,
    dates: dict[str, DocDate] | None = None,
    file_times: bool = False,
    method: str = "chunks",
    inside_dates: bool = False,
) -> list[Lineage]:
    """Lineages of the groups of the index's pair table: the one holding ``doc_id``, group number
    ``group``, or all of them (``everything``). Groups are those of ``coderiv groups --min``
    (linked both ways unless ``mutual`` is False).

    ``dates`` (a dates file's) win over the creation dates inside DOCX/ODT/PDF documents (read
    when ``inside_dates`` is True), which win over the modification times recorded at indexing
    (used when ``file_times`` is True); see :mod:`coderiv.pairs.dates`."""
    if sum((doc_id is not None, group is not None, everything)) != 1:
        raise CoderivError("lineage: give one of a document id, --group N or --all")
    groups = find_groups(PairTable.open(index, method), min_percent, mutual)
    if doc_id is not None:
        if doc_id not in index.doc_numbers:
            raise CoderivError(f"no document {doc_id!r} in the index")
        groups = [g for g in groups if doc_id in g.doc_ids]
        if not groups:
            raise CoderivError(f"{doc_id} has no coderivative at {min_percent:g}% or more: it has no lineage")
    elif group is not None:
        if not 1 <= group <= len(groups):
            raise CoderivError(f"there is no group {group}: {len(groups)} groups at {min_percent:g}% or more")
        groups = [groups[group - 1]]
    for g in groups:
        if len(g.doc_ids) > MAX_LINEAGE_DOCS:
            raise CoderivError(
                f"group {g.number} has {len(g.doc_ids)} documents, more than the {MAX_LINEAGE_DOCS} a lineage handles: "
                f"raise --min (versions of one text are usually 50% or more alike) or drop --one-way"
            )
    profiles = index_profiles(index, [d for g in groups for d in g.doc_ids], method)
    inside = document_dates(index, [d for g in groups for d in g.doc_ids]) if inside_dates else {}
    known = {**(recorded_dates(index) if file_times else {}), **inside, **(dates or {})}
    return [derive_lineage([profiles[d] for d in g.doc_ids], known, g.number) for g in groups]
