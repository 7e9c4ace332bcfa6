"""The index a web server answers from: one open :class:`Index` per generation, swapped for new
requests when ``coderiv index`` commits a newer one.

An open ``Index`` is a snapshot (every file is memory-mapped at open), so a request that began on
generation 7 finishes on it even after generation 8 is committed and 7's files are unlinked.
Each request asks :meth:`IndexSnapshots.current`, which reads the small ``CURRENT`` pointer (one
``stat`` and one read) and opens the new generation only when the pointer moved. ``CURRENT`` is
replaced atomically after a generation is complete and fsynced (:mod:`coderiv.index.format.storage`),
so a half-written generation is never seen.

A sharded index (:mod:`coderiv.index.shards`) is served the same way, through the one index
interface (:class:`~coderiv.index.reader.IndexReader`): its version is the live set
``SHARDS.json`` names, its searches the sharded ones (one index's answers, chosen by the
searcher registry), its pair tables those ``coderiv pairs`` stored through its one-index view.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coderiv.errors import CoderivError
from coderiv.index.format.storage import CURRENT
from coderiv.index.index import DocumentFacts, Index
from coderiv.index.reader import IndexReader, live_version, open_index
from coderiv.keys.kinds import StoreSpec
from coderiv.pairs.groups import Group, find_groups
from coderiv.pairs.table import PairTable, table_root, tables_info
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.searchers import QueryOptions, make_searcher

__all__ = ["IndexSnapshots", "Snapshot", "live_version"]


@dataclass
class Snapshot:
    """One open index generation (or set) and what is derived from it (searchers, pair tables,
    groups)."""

    index: IndexReader
    _searchers: dict[str, DocumentSearcher[Any]] = field(default_factory=dict)
    _tables: dict[tuple[str, str], PairTable | CoderivError] = field(default_factory=dict)
    _groups: dict[tuple[str, str, float, bool], list[Group]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def open(cls, root: Path) -> Snapshot:
        return cls(open_index(root))

    @property
    def generation(self) -> str:
        return self.index.version

    @property
    def specs(self) -> dict[str, StoreSpec]:
        """The index's stores."""
        return self.index.specs

    def facts(self, doc_id: str) -> DocumentFacts | None:
        """A document's number in the collection, its length in terms and its SHA-256 (None if
        the index lacks it)."""
        return self.index.facts(doc_id)

    def searcher(self, measure: str) -> DocumentSearcher[Any]:
        """The ranking searcher of ``measure`` over this snapshot (made once per measure)."""
        with self._lock:
            searcher = self._searchers.get(measure)
            if searcher is None:
                searcher = self._searchers[measure] = make_searcher(self.index, "ranking", QueryOptions(measure))
            return searcher

    def _pairs_index(self) -> Index | None:
        """The index the pair tables belong to: this one, or a sharded one's view once
        ``coderiv pairs`` wrote it for the live set (None before: the server writes nothing)."""
        return self.index.stored_pairs_index()

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

    def groups(self, method: str, min_percent: float, mutual: bool = True) -> list[Group]:
        """Groups of the ``method`` pair table at ``min_percent``, linked both ways (or with
        ``mutual=False`` either way, as ``coderiv groups``; computed once per table version)."""
        table = self.pair_table(method)
        key = (method, str(table.generation), min_percent, mutual)
        with self._lock:
            cached = self._groups.get(key)
        if cached is None:
            cached = find_groups(table, min_percent, mutual)
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
