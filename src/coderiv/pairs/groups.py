"""Groups of coderivative documents: connected components of the pair table above a threshold.

Manber's "groups of similar files". Two documents are linked when either finds the other at
``min_percent`` or more among its stored top-k (chunk similarity is asymmetric: a short page
wholly inside a long one links them), or with ``mutual`` only when both do (versions of one
page, not excerpts: a release note inside a changelog stays apart). Components are found by
``scipy.sparse.csgraph.connected_components`` (weak connectivity); singletons are not groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from coderiv.errors import CoderivError
from coderiv.pairs.table import PairTable


@dataclass(frozen=True)
class Group:
    """One group: its rank (largest first), its documents in id order."""

    number: int
    doc_ids: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.number, "size": len(self.doc_ids), "doc_ids": self.doc_ids}


def find_groups(table: PairTable, min_percent: float, mutual: bool = False) -> list[Group]:
    """Connected components of the links ≥ ``min_percent``, largest first (ties by first id)."""
    if not 0 < min_percent <= 100:
        raise CoderivError(f"--min must be a percentage in (0, 100] (got {min_percent})")
    src, dst, values = table.entries()
    keep = values >= min_percent
    n = table.n_docs
    graph = coo_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n)).tocsr()
    if mutual:
        graph = graph.multiply(graph.T).tocsr()
    _, labels = connected_components(graph, directed=True, connection="weak")
    sizes = np.bincount(labels, minlength=n)
    members = np.flatnonzero(sizes[labels] >= 2)  # ascending number = id order
    by_label: dict[int, list[int]] = {}
    for doc in members.tolist():
        by_label.setdefault(int(labels[doc]), []).append(doc)
    ordered = sorted(by_label.values(), key=lambda docs: (-len(docs), docs[0]))
    return [Group(i + 1, [table.doc_ids[d] for d in docs]) for i, docs in enumerate(ordered)]
