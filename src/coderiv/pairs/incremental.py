"""Incremental pairs runs (paper 003 §2.4): after the index changed, only the rows of added or
changed documents, of documents whose effective keys changed (a key crossing M; for identity5 a
term whose f_t changed), and of truncated rows that lost an entry are recomputed; every other
row is updated by merging the fresh pairs into its kept entries (both directions of every
affected pair). The result equals a full recomputation (``tests/test_pairs.py`` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from coderiv.index.format.postings import Postings
from coderiv.pairs.eligibility import KeyView, key_ranges
from coderiv.pairs.row_ranking import select_top

if TYPE_CHECKING:
    from coderiv.index.index import Index


def _docs_with_keys(store: Postings, keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the documents holding any of ``keys`` (keys absent from the store ignored)."""
    mask = np.zeros(store.n_docs, bool)
    pos = store.lookup(keys)
    pos = pos[pos >= 0]
    if len(pos):
        docs, _, _ = store.gather(pos)
        mask[np.asarray(docs)] = True
    return mask


@dataclass
class IncrementalPlan:
    """Which rows an incremental run recomputes, and the kept entries of the others."""

    rows: np.ndarray  # mask over new documents: rows recomputed from scratch
    kept_src: np.ndarray
    kept_dst: np.ndarray
    kept_val: np.ndarray
    kept_truncated: np.ndarray  # per new document: its old row was truncated
    reason: str = ""
    unchanged: bool = False

    def merge(self, src: np.ndarray, dst: np.ndarray, val: np.ndarray, k: int, r0: int, r1: int) -> tuple[np.ndarray, ...]:
        """Rows r0…r1−1: recomputed ones from fresh entries; the others from kept + fresh ones."""
        lo, hi = np.searchsorted(self.kept_src, [r0, r1])  # kept entries are in row order
        all_src = np.concatenate((src, self.kept_src[lo:hi])).astype(np.int64) - r0
        all_dst = np.concatenate((dst, self.kept_dst[lo:hi]))
        all_val = np.concatenate((val, self.kept_val[lo:hi]))
        # an entry may be both kept and fresh (an unchanged pair found again): keep one
        pair = all_src.astype(np.uint64) * np.uint64(1 << 32) + all_dst.astype(np.uint64)
        _, first = np.unique(pair, return_index=True)
        row_ptr, targets, values, truncated = select_top(all_src[first], all_dst[first], all_val[first], k, r1 - r0)
        return row_ptr, targets, values, truncated | (self.kept_truncated[r0:r1] & ~self.rows[r0:r1])


def plan_incremental(
    old_ids: list[str],
    old_sha: list[str],
    old_rows: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    old_skipped: np.ndarray,
    old_df: tuple[np.ndarray, np.ndarray] | None,
    index: Index,
    store: Postings,
    view: KeyView,
    measure: str | None,
) -> IncrementalPlan:
    """Compare the old table's documents and keys with the index's, and plan the update."""
    n = index.n_docs
    new_number = index.doc_numbers
    new_sha = index.doc_sha256
    old_to_new = np.full(len(old_ids), -1, np.int64)
    unchanged = np.zeros(n, bool)
    for i, (doc_id, sha) in enumerate(zip(old_ids, old_sha)):
        j = new_number.get(doc_id)
        if j is not None and new_sha[j] == sha:
            old_to_new[i] = j
            unchanged[j] = True
    dirty = ~unchanged  # added or changed documents
    # documents whose effective keys changed: a key crossed M ...
    dirty |= _docs_with_keys(store, np.setxor1d(old_skipped, view.skipped_keys))
    if measure is not None and old_df is not None:  # ... or (identity5) a used term's f_t changed
        stored = store.lookup(old_df[0])
        f_old = np.ones(store.n_keys, np.int64)
        f_old[stored[stored >= 0]] = old_df[1][stored >= 0]
        changed = (store.doc_freqs != f_old) & view.used
        f = store.doc_freqs
        for a, b in key_ranges(store):
            keep = np.repeat(changed[a:b], f[a:b])
            lo, hi = (int(x) for x in store.offsets_between(a, b + 1)[[0, -1]])
            dirty[np.asarray(store.docs[lo:hi])[keep]] = True

    row_ptr, targets, values, truncated = old_rows
    lengths = np.diff(row_ptr)
    src = old_to_new[np.repeat(np.arange(len(old_ids)), lengths)]
    dst = old_to_new[np.asarray(targets, np.int64)]
    live = (src >= 0) & (dst >= 0)
    live[live] &= ~dirty[src[live]] & ~dirty[dst[live]]
    dropped = np.zeros(n, np.int64)
    np.add.at(dropped, src[(src >= 0) & ~live], 1)
    kept_truncated = np.zeros(n, bool)
    kept_truncated[old_to_new[old_to_new >= 0]] = np.asarray(truncated)[old_to_new >= 0]
    rows = dirty | (kept_truncated & (dropped > 0))  # a truncated row that lost an entry
    live[live] &= ~rows[src[live]]
    kept_ids = sum(1 for doc_id in old_ids if doc_id in new_number)
    changed_docs = kept_ids - int(unchanged.sum())
    reason = (
        f"{n - kept_ids} added, {changed_docs} changed, {len(old_ids) - kept_ids} removed; "
        f"{int(rows.sum())} rows recomputed"
    )
    return IncrementalPlan(
        rows=rows,
        kept_src=src[live],
        kept_dst=dst[live],
        kept_val=np.asarray(values)[live],
        kept_truncated=kept_truncated,
        reason=reason,
    )
