"""Groups of coderivative documents: connected components of the pair table above a threshold.

Manber's "groups of similar files". By default (``mutual``) two documents are linked only when
each finds the other at ``min_percent`` or more among its stored top-k: versions of one page,
not excerpts, so a release note inside a changelog stays apart. With ``mutual=False`` (``groups
--one-way``) either direction links them (chunk similarity is asymmetric: a short page wholly
inside a long one links them), which chains unrelated documents through the long ones: on the
dev collection at 50% one group of 217 documents (docs/pairs.md, "Groups"). Components (weak
connectivity) are found by :func:`component_labels` in numpy; singletons are not groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from coderiv.errors import CoderivError
from coderiv.pairs.table import PairTable


@dataclass(frozen=True)
class Group:
    """One group: its rank (largest first), its documents in id order."""

    number: int
    doc_ids: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.number, "size": len(self.doc_ids), "doc_ids": self.doc_ids}


def find_groups(table: PairTable, min_percent: float, mutual: bool = True) -> list[Group]:
    """Connected components of the links ≥ ``min_percent`` (both ways, or with ``mutual=False``
    either way), largest first (ties by first id)."""
    if not 0 < min_percent <= 100:
        raise CoderivError(f"--min must be a percentage in (0, 100] (got {min_percent})")
    src, dst, values = table.entries()
    keep = values >= min_percent
    n = table.n_docs
    src, dst = src[keep].astype(np.int64), dst[keep].astype(np.int64)
    if mutual:
        both = np.isin(src * n + dst, dst * n + src)
        src, dst = src[both], dst[both]
    labels = component_labels(n, src, dst)
    sizes = np.bincount(labels, minlength=n)
    members = np.flatnonzero(sizes[labels] >= 2)  # ascending number = id order
    by_label: dict[int, list[int]] = {}
    for doc in members.tolist():
        by_label.setdefault(int(labels[doc]), []).append(doc)
    ordered = sorted(by_label.values(), key=lambda docs: (-len(docs), docs[0]))
    return [Group(i + 1, [table.doc_ids[d] for d in docs]) for i, docs in enumerate(ordered)]


#: ``query --exclude-versions``: documents count as versions of each other when both find the
#: other at this percentage or more (``coderiv groups --min 50 --mutual``).
VERSIONS_MIN_PERCENT = 50.0


def version_sets(table: PairTable, min_percent: float = VERSIONS_MIN_PERCENT) -> dict[str, frozenset[str]]:
    """Each grouped document's versions: the other members of its group under ``--mutual``
    linking at ``min_percent`` (what ``query --exclude-versions`` leaves out)."""
    versions: dict[str, frozenset[str]] = {}
    for group in find_groups(table, min_percent, mutual=True):
        members = frozenset(group.doc_ids)
        for doc_id in group.doc_ids:
            versions[doc_id] = members - {doc_id}
    return versions


def component_labels(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """For each of n nodes, the smallest node of its connected component, the links (src, dst)
    taken both ways. Min-label propagation with pointer jumping: every node's label is a node of
    its own component, never larger than itself; each round gives both ends of every link the
    smaller of their labels, then lets each label point to its own label's label, until nothing
    changes (a few rounds: the jumping halves path lengths)."""
    labels = np.arange(n, dtype=np.int64)
    while True:
        low = np.minimum(labels[src], labels[dst])
        new = labels.copy()
        np.minimum.at(new, src, low)
        np.minimum.at(new, dst, low)
        while True:  # pointer jumping: follow labels to their roots
            jumped = new[new]
            if np.array_equal(jumped, new):
                break
            new = jumped
        if np.array_equal(new, labels):
            return labels
        labels = new
