"""The index interface: what every feature reads of an index, whether it is one index
(:class:`~coderiv.index.index.Index`) or a sharded one (:class:`~coderiv.index.shards.ShardedIndex`,
which answers exactly as one index over the whole collection would).

Report, web, CLI, pairs and evaluation hold an :class:`IndexReader` from :func:`open_index`, the
one place that decides which kind a folder holds, and never ask which one they have (whoosh's
model: N segment readers behind one reader, obtained only from ``Index.reader()``). A searcher
is chosen for it by the registry of :mod:`coderiv.ranking.searchers`, the only user of
:meth:`IndexReader.dispatch`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from coderiv.index.format.shard_set import SHARDS_MANIFEST, is_sharded, live_set
from coderiv.index.format.storage import current_generation
from coderiv.index.index import DocumentFacts, Index, resolve_index_path
from coderiv.index.shards import ShardedIndex
from coderiv.keys.kinds import StoreSpec
from coderiv.text.analysis import AnalysisSettings, Analyzer

if TYPE_CHECKING:
    from coderiv.text.extract import Markup
    from coderiv.text.sources import DocumentTexts

T = TypeVar("T")


class IndexReader(Protocol):
    """An opened, read-only index: its documents (numbered in sorted id order), analysis,
    stores, source and facts. Implemented by :class:`Index` and :class:`ShardedIndex`."""

    @property
    def root(self) -> Path:
        """The index folder."""
        ...

    @property
    def settings(self) -> AnalysisSettings: ...

    @property
    def markup(self) -> Markup:
        """How the index read reStructuredText and Markdown: every query and re-read document
        of it is read the same way (:class:`~coderiv.text.extract.Markup`)."""
        ...

    @property
    def analyzer(self) -> Analyzer:
        """The analyser every query of this index must go through."""
        ...

    @property
    def n_docs(self) -> int: ...

    @property
    def doc_ids(self) -> list[str]:
        """Every document id, in document-number order (sorted ids)."""
        ...

    @property
    def doc_numbers(self) -> dict[str, int]:
        """Document id → number in the collection."""
        ...

    def number(self, doc_id: str) -> int:
        """The number of ``doc_id``, or a one-line error if the index lacks it."""
        ...

    @property
    def source(self) -> str | None:
        """The folder, archive or URL the index was built from."""
        ...

    def source_texts(self, preload: bool = False) -> DocumentTexts:
        """The indexed documents' visible texts, re-read from the source on demand."""
        ...

    def info(self) -> dict[str, Any]:
        """Statistics and settings, as ``coderiv info`` prints them."""
        ...

    @property
    def version(self) -> str:
        """The live generation's (one index) or set's (sharded) name: it changes on update."""
        ...

    @property
    def specs(self) -> dict[str, StoreSpec]:
        """The postings stores, by name (``terms``, fingerprint and chunk stores)."""
        ...

    def facts(self, doc_id: str) -> DocumentFacts | None:
        """A document's number, length in terms and SHA-256 (None if the index lacks it)."""
        ...

    def verify(self) -> list[str]:
        """Every file checked against its checksums (block CRC-32s, SHA-256 where recorded): the problems found."""
        ...

    def pairs_index(self) -> Index:
        """The index the pair tables belong to (a sharded index's one-index view, written on
        first use)."""
        ...

    def stored_pairs_index(self) -> Index | None:
        """:meth:`pairs_index` without writing anything: None while no pair table can exist."""
        ...

    def dispatch(self, on_single: Callable[[Index], T], on_sharded: Callable[[ShardedIndex], T]) -> T:
        """``on_single(index)`` or ``on_sharded(index)``, by kind (the searcher registry's only)."""
        ...


def open_index(path: str | os.PathLike[str] | None = None) -> IndexReader:
    """Open the index at ``path`` (see :func:`~coderiv.index.index.resolve_index_path`): one
    index or a sharded one. The only place that decides which."""
    root = resolve_index_path(path)
    return ShardedIndex.open(root) if is_sharded(root) else Index.open(root)


def shard_count(path: str | os.PathLike[str] | None) -> int | None:
    """How many shards the index at ``path`` has (None: one index, or none yet), so that an
    update keeps a sharded index sharded."""
    root = resolve_index_path(path)
    if not is_sharded(root):
        return None
    try:  # the manifest's word, so that a set too damaged to open can still be rebuilt
        return int(json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))["shards"])
    except (OSError, ValueError, KeyError, TypeError):
        return ShardedIndex.open(root).k  # says what is wrong, in one line


def live_version(path: str | os.PathLike[str]) -> str:
    """The name of the live generation (one index) or set (a sharded index) at ``path``, read
    cheaply (one small file) to tell whether an open index is still the live one; "" while a
    sharded index's manifest is being replaced or is damaged (opening it says which)."""
    root = Path(path)
    if is_sharded(root):
        return live_set(root) or ""
    return current_generation(root).name
