"""The index a web server answers from: one open :class:`Index` per generation, swapped for new
requests when ``coderiv index`` commits a newer one.

An open ``Index`` is a snapshot (every file is memory-mapped at open), so a request that began on
generation 7 finishes on it even after generation 8 is committed and 7's files are unlinked.
Each request asks :meth:`IndexSnapshots.current`, which reads the small ``CURRENT`` pointer (one
``stat`` and one read) and opens the new generation only when the pointer moved. ``CURRENT`` is
replaced atomically after a generation is complete and fsynced (:mod:`coderiv.index.storage`),
so a half-written generation is never seen.

A sharded index (:mod:`coderiv.index.shards`) is served the same way: its version is the live
set ``SHARDS.json`` names, its searches the sharded ones (one index's answers), its pair tables
those ``coderiv pairs`` stored through the shard view (:mod:`coderiv.index.shard_view`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coderiv.errors import CoderivError
from coderiv.index.index import Index
from coderiv.index.shard_view import VIEW_DIR, ShardView
from coderiv.index.shards import SHARDS_MANIFEST, ShardedIndex, is_sharded, shard_of
from coderiv.index.storage import CURRENT, MANIFEST, current_generation
from coderiv.pairs.groups import Group, find_groups
from coderiv.pairs.table import PairTable, table_root, tables_info
from coderiv.ranking.search import Searcher
from coderiv.ranking.sharded import ShardedSearcher, global_number


def live_version(root: Path) -> str:
    """The name of the live generation (one index) or set (a sharded index) at ``root``."""
    if is_sharded(root):
        try:
            live: str = json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))["set"]
            return live
        except (OSError, ValueError, KeyError, TypeError):
            return ""  # being replaced or damaged: opening it says which
    return current_generation(root).name


@dataclass
class Snapshot:
    """One open index generation and what is derived from it (searcher, pair tables, groups)."""

    index: Index | ShardedIndex
    searcher: Searcher | ShardedSearcher
    _tables: dict[tuple[str, str], PairTable | CoderivError] = field(default_factory=dict)
    _groups: dict[tuple[str, str, float], list[Group]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _view: ShardView | None = None

    @classmethod
    def open(cls, root: Path) -> Snapshot:
        if is_sharded(root):
            sharded = ShardedIndex.open(root)
            return cls(sharded, ShardedSearcher(sharded))
        index = Index.open(root)
        return cls(index, Searcher(index))

    @property
    def generation(self) -> str:
        if isinstance(self.index, ShardedIndex):
            return str(self.index.set_dir.name)
        return str(self.index.generation.name)

    @property
    def specs(self) -> dict[str, Any]:
        """The index's stores (a sharded index's: those of its shards)."""
        if isinstance(self.index, ShardedIndex):
            return dict(next(iter(self.index.shards.values())).specs)
        return dict(self.index.specs)

    def facts(self, doc_id: str) -> tuple[int, int, str] | None:
        """A document's number in the collection, its length in terms and its SHA-256 (None if
        the index lacks it)."""
        if isinstance(self.index, ShardedIndex):
            shard = self.index.shards.get(shard_of(doc_id, self.index.k))
            local = None if shard is None else shard.doc_numbers.get(doc_id)
            if shard is None or local is None:
                return None
            return global_number(self.index, doc_id), int(shard.doc_lengths[local]), str(shard.doc_sha256[local])
        number = self.index.doc_numbers.get(doc_id)
        if number is None:
            return None
        return number, int(self.index.doc_lengths[number]), str(self.index.doc_sha256[number])

    def _pairs_index(self) -> Index | None:
        """The index the pair tables belong to: this one, or a sharded one's view once
        ``coderiv pairs`` wrote it for the live set (None before: the server writes nothing)."""
        if not isinstance(self.index, ShardedIndex):
            return self.index
        with self._lock:
            if self._view is None and (self.index.root / VIEW_DIR / self.generation / MANIFEST).is_file():
                self._view = ShardView(self.index)
            return self._view

    def pair_methods(self) -> list[dict[str, object]]:
        """Every stored pair table with its state (``up to date``, ``stale``, ``damaged``)."""
        index = self._pairs_index()
        return [] if index is None else tables_info(index)

    def pair_table(self, method: str) -> PairTable:
        """The up-to-date pair table of ``method``; a missing or stale one is a one-line error.

        Cached by the table's own ``CURRENT`` pointer: ``coderiv pairs`` may commit a new table
        generation while the index generation stays the same.
        """
        index = self._pairs_index()
        if index is None:
            raise CoderivError(f"no pair table for method {method!r} in {self.index.root}: run 'coderiv pairs --method {method}'")
        pointer = table_root(index, method) / CURRENT
        try:
            version = pointer.read_text("utf-8").strip()
        except OSError:
            version = ""
        key = (method, version)
        with self._lock:
            cached = self._tables.get(key)
        if cached is None:
            try:
                cached = PairTable.open(index, method)
            except CoderivError as exc:
                cached = exc
            with self._lock:
                self._tables = {k: v for k, v in self._tables.items() if k[0] != method}
                self._tables[key] = cached
        if isinstance(cached, CoderivError):
            raise cached
        return cached

    def groups(self, method: str, min_percent: float) -> list[Group]:
        """Groups of the ``method`` pair table at ``min_percent`` (computed once per table version)."""
        table = self.pair_table(method)
        key = (method, str(table.generation), min_percent)
        with self._lock:
            cached = self._groups.get(key)
        if cached is None:
            cached = find_groups(table, min_percent)
            with self._lock:
                if len(self._groups) > 32:
                    self._groups.clear()
                self._groups[key] = cached
        return cached


class IndexSnapshots:
    """The current :class:`Snapshot` of the index at ``root``, checked cheaply per request."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None

    def current(self) -> Snapshot:
        """The snapshot of the live generation; opens it if ``coderiv index`` committed a new one.

        Raises the index's own one-line errors (no index, damaged index) when it cannot open."""
        live = live_version(self.root)
        snapshot = self._snapshot
        if snapshot is not None and snapshot.generation == live:
            return snapshot
        with self._lock:  # one opener; concurrent requests wait for it rather than open twice
            snapshot = self._snapshot
            if snapshot is None or snapshot.generation != live_version(self.root):
                snapshot = Snapshot.open(self.root)
                self._snapshot = snapshot
            return snapshot
