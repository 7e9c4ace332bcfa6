"""A sharded index opened for reading: a folder of normal coderiv indexes over a partition of the
collection (:mod:`coderiv.index.format.shard_set`), with the collection-wide statistics every
measure needs, so that a sharded index answers exactly as one index over the whole collection
would (:class:`ShardedIndex`), and its one-index face for the pairs engine (:class:`ShardView`).
Sharded indexes are built by :mod:`coderiv.index.builder.sharded`."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from coderiv.errors import CoderivError, CorruptIndexError, IndexNotFoundError
from coderiv.index.cosine_bounds import load_class_norms
from coderiv.index.format import counts as counts_module
from coderiv.index.format.counts import CountValues
from coderiv.index.format.encoded import narrow
from coderiv.index.format.postings import Postings, group_by_key
from coderiv.index.format.shard_set import (
    FORMAT,
    FORMAT_VERSION,
    SHARDS_MANIFEST,
    VIEW_DIR,
    check_global_tables,
    global_table,
    is_sharded,
    live_set,
    shard_folder,
    shard_of,
)
from coderiv.index.format.split_numbers import SplitNumbers
from coderiv.index.format.storage import MANIFEST, file_sha256, fsync_path
from coderiv.index.index import DocumentFacts, Index
from coderiv.keys.kinds import StoreSpec
from coderiv.text.analysis import AnalysisSettings, Analyzer
from coderiv.text.extract import Markup

if TYPE_CHECKING:  # the build's modules are imported by the functions that build (a query never does)
    from coderiv.text.extracted_cache import ExtractedCache
    from coderiv.text.sources import DocumentTexts


T = TypeVar("T")


class ShardedIndex:
    """An opened sharded index: its shards (normal :class:`Index` objects whose ``doc_norms`` and
    ``term_max_unit`` are replaced by the collection-wide ones, and whose source is the
    collection's) and the global term table."""

    def __init__(self, root: Path) -> None:
        self.root = root
        try:
            self.manifest = json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"sharded index manifest {root / SHARDS_MANIFEST} is damaged ({exc})") from exc
        if self.manifest.get("format") != FORMAT or self.manifest.get("format_version") != FORMAT_VERSION:
            raise CorruptIndexError(f"{root} is not a coderiv sharded index of format {FORMAT_VERSION}; rebuild it")
        self.set_dir = root / self.manifest["set"]
        self.k: int = self.manifest["shards"]
        self.n_docs: int = self.manifest["documents"]
        self.settings = AnalysisSettings.from_dict(self.manifest["analysis"])
        try:
            #: how the shards read reStructuredText and Markdown (every query and re-read alike)
            self.markup = Markup.recorded(self.manifest.get("reading"))
        except CoderivError as exc:
            raise CorruptIndexError(f"sharded index at {root}: {exc}; rebuild it") from None
        #: shard number -> its index (empty shards are absent)
        self.shards: dict[int, Index] = {}
        #: shard number -> global document number of each of its documents
        self.numbers: dict[int, np.ndarray] = {}
        self._view: ShardView | None = None
        self._view_lock = threading.Lock()
        try:
            check_global_tables(self.set_dir, self.manifest.get("global_crc32"))
            self.term_keys = np.load(global_table(self.set_dir, "terms_keys.npy"), mmap_mode="r")
            self.term_df = np.load(global_table(self.set_dir, "terms_df.npy"), mmap_mode="r")
            for s, count in enumerate(self.manifest["shard_documents"]):
                if not count:
                    continue
                index = Index.open(shard_folder(self.set_dir, s))
                index.manifest["source"] = self.manifest.get("source")  # a shard is written from a filtered stream
                index.doc_norms = np.load(global_table(self.set_dir, f"shard-{s:03d}.norms.npy"), mmap_mode="r")
                index.term_max_unit = np.load(global_table(self.set_dir, f"shard-{s:03d}.max_unit.npy"), mmap_mode="r")
                index.cosine_classes = load_class_norms(self.set_dir / "global", prefix=f"shard-{s:03d}.")
                self.numbers[s] = np.load(global_table(self.set_dir, f"shard-{s:03d}.numbers.npy"), mmap_mode="r")
                if not (index.n_docs == count == len(index.doc_norms) == len(self.numbers[s])):
                    raise CorruptIndexError(f"shard {s} of {root} does not match its manifest; rebuild it")
                self.shards[s] = index
        except OSError as exc:
            raise CorruptIndexError(f"sharded index at {root} is damaged ({exc}); rebuild it") from exc

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ShardedIndex:
        """Open the live set; retried if a build commits and removes that set meanwhile."""
        root = Path(path)
        for attempt in range(3):
            live = live_set(root)
            try:
                return cls(root)
            except (CorruptIndexError, IndexNotFoundError):
                if attempt == 2 or live_set(root) == live:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @cached_property
    def analyzer(self) -> Analyzer:
        return Analyzer(self.settings)

    @property
    def source(self) -> str | None:
        source: str | None = self.manifest.get("source")
        return source

    def info(self) -> dict[str, Any]:
        """Statistics of the sharded index, as ``coderiv info`` prints them."""
        return {
            "index": str(self.root),
            "set": self.set_dir.name,
            "created": self.manifest.get("created"),
            "coderiv_version": self.manifest.get("coderiv_version"),
            "source": self.source,
            "documents": self.n_docs,
            "shards": self.k,
            "shard_documents": self.manifest["shard_documents"],
            "analysis": self.settings.describe(),
            "markup": self.markup.value,
            "distinct_terms": len(self.term_keys),
            "postings": sum(index.terms.n_postings for index in self.shards.values()),
            "index_bytes": sum(p.stat().st_size for p in self.set_dir.rglob("*") if p.is_file()),
        }

    def source_texts(self, preload: bool = False) -> DocumentTexts:
        """The indexed documents' visible texts, re-read from the recorded source on demand (markup
        read as the shards read it)."""
        from coderiv.text.sources import DocumentTexts

        return DocumentTexts(self.source, preload=preload, markup=self.markup, cache=self.extracted_cache)

    @property
    def extracted_cache(self) -> ExtractedCache | None:
        """None: each shard keeps its own texts, and the shards are re-read as one source."""
        return None

    def locate(self, doc_id: str) -> tuple[Index, int]:
        """The shard holding ``doc_id`` and its number there (a one-line error if absent)."""
        index = self.shards.get(shard_of(doc_id, self.k))
        if index is None:
            raise CoderivError(f"no document {doc_id!r} in the index")
        return index, index.number(doc_id)

    @cached_property
    def doc_ids(self) -> list[str]:
        """Every document id in global number order (sorted ids, as one index numbers them)."""
        ids = [""] * self.n_docs
        for s, index in self.shards.items():
            for number, doc_id in zip(np.asarray(self.numbers[s]).tolist(), index.doc_ids):
                ids[number] = doc_id
        return ids

    @cached_property
    def doc_numbers(self) -> dict[str, int]:
        """Each document id's number in the whole collection (as :attr:`Index.doc_numbers`)."""
        return {doc_id: number for number, doc_id in enumerate(self.doc_ids)}

    # -- the index interface (coderiv.index.reader.IndexReader) --------------------------------
    @property
    def version(self) -> str:
        """The live set's name (``set-000003``): what changes when the index is rebuilt."""
        return str(self.set_dir.name)

    @cached_property
    def specs(self) -> dict[str, StoreSpec]:
        """The stores of the index (every shard holds the same ones)."""
        return dict(next(iter(self.shards.values())).specs)

    def number(self, doc_id: str) -> int:
        """A document's number in the whole collection (its rank in sorted id order; a
        one-line error if the index lacks it)."""
        _, local = self.locate(doc_id)
        return int(self.numbers[shard_of(doc_id, self.k)][local])

    def facts(self, doc_id: str) -> DocumentFacts | None:
        """``doc_id``'s number in the collection, length in terms and SHA-256 (None if absent)."""
        shard = self.shards.get(shard_of(doc_id, self.k))
        local = None if shard is None else shard.doc_numbers.get(doc_id)
        if shard is None or local is None:
            return None
        return DocumentFacts(self.number(doc_id), int(shard.doc_lengths[local]), str(shard.doc_sha256[local]))

    def pairs_index(self) -> Index:
        """The index the pair tables belong to: this index's :class:`ShardView` (its small
        generation folder written on first use; one view per open index)."""
        with self._view_lock:
            if self._view is None:
                self._view = ShardView(self)
            return self._view

    def stored_pairs_index(self) -> Index | None:
        """:meth:`pairs_index` once ``coderiv pairs`` has written the live set's view; None
        before (no pair table can exist yet, and nothing is written)."""
        if self._view is None and not (self.root / VIEW_DIR / self.version / MANIFEST).is_file():
            return None
        return self.pairs_index()

    def dispatch(self, on_single: Callable[[Index], T], on_sharded: Callable[[ShardedIndex], T]) -> T:
        """``on_sharded(self)``: the one place a caller learns it holds a sharded index (the
        searcher registry, :mod:`coderiv.ranking.searchers`, is its only user)."""
        return on_sharded(self)

    def verify(self) -> list[str]:
        """Full check of every shard's files against the checksums its manifest records."""
        return [f"shard {s}: {problem}" for s, index in self.shards.items() for problem in index.verify()]

    def term_frequencies(self, keys: np.ndarray) -> np.ndarray:
        """The collection's f_t of each key (0 where no document has it)."""
        keys = np.asarray(keys, np.uint64)
        pos = np.searchsorted(self.term_keys, keys)
        found = pos < len(self.term_keys)
        found[found] = self.term_keys[pos[found]] == keys[found]
        return np.where(found, np.asarray(self.term_df)[np.minimum(pos, max(len(self.term_keys) - 1, 0))], 0)


# -- one index's face, for the pairs engine ------------------------------------------------------
def merged_postings(index: ShardedIndex, name: str) -> Postings:
    """Store ``name`` of every shard as one store over the collection (global numbers); a
    presence store when every shard's is (its values read from no memory)."""
    stores = {s: shard.store(name) for s, shard in index.shards.items()}
    presence = all(store.is_presence for store in stores.values())
    keys, docs, vals = [], [], []
    for s, store in stores.items():
        counts = np.diff(np.asarray(store.ptr))
        keys.append(np.repeat(np.asarray(store.keys, np.uint64), counts))
        docs.append(np.asarray(index.numbers[s], np.int64)[np.asarray(store.docs, np.int64)])
        vals.append(np.ones(len(keys[-1]), np.uint8) if presence else store.vals[:])  # (group_by_key's 1s: a byte each)
    merged_keys, counts, merged_docs, merged_vals, maxvals = group_by_key(
        np.concatenate(keys), np.concatenate(docs), np.concatenate(vals)
    )
    ptr = np.zeros(len(merged_keys) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    if presence:
        values, maxvals = CountValues.presence(len(merged_docs)), counts_module.ones(len(merged_keys))
    else:
        values, maxvals = CountValues.encode(merged_vals), narrow(maxvals)
    return Postings(
        n_docs=index.n_docs, keys=merged_keys, ptr=ptr, docs=SplitNumbers.encode(merged_docs.astype(np.uint32)), vals=values,
        maxvals=maxvals,
    )


def _in_global_order(index: ShardedIndex, per_shard: dict[int, np.ndarray]) -> np.ndarray:
    first = next(iter(per_shard.values()))
    out = np.empty((index.n_docs, *first.shape[1:]), first.dtype)
    for s, values in per_shard.items():
        out[np.asarray(index.numbers[s])] = values
    return out


class ShardView(Index):
    """A sharded index as the pairs engine reads an :class:`Index` (read-only; the stores
    are merged on first use)."""

    def __init__(self, sharded: ShardedIndex) -> None:  # no Index.__init__: nothing to read from one generation
        self.sharded = sharded
        first = next(iter(sharded.shards.values()))
        self.root = sharded.root
        self._mmap = True
        self.settings = sharded.settings
        self.markup = sharded.markup
        self.specs = dict(first.specs)
        self.doc_ids = sharded.doc_ids
        self.doc_lengths = _in_global_order(sharded, {s: np.asarray(ix.doc_lengths) for s, ix in sharded.shards.items()})
        self._sha256 = _in_global_order(sharded, {s: np.asarray(ix._sha256) for s, ix in sharded.shards.items()})
        self.doc_modified = None
        self._stores = {}
        self.manifest = {
            "format": "coderiv-shard-view",
            "format_version": first.manifest.get("format_version"),
            "set": sharded.set_dir.name,
            "documents": sharded.n_docs,
            "analysis": sharded.settings.to_dict(),
            "reading": {"markup": sharded.markup.value},
            "stores": {name: {"spec": spec.to_dict()} for name, spec in self.specs.items()},
        }
        self.generation = self._write_generation()
        #: SHA-256 of the view's manifest, taken now as Index takes its generation's (a pair table records it)
        self.manifest_sha256 = file_sha256(self.generation / MANIFEST)

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, mmap: bool = True) -> ShardView:
        if path is None or not is_sharded(path):
            raise CoderivError(f"{path} is not a sharded index")
        return cls(ShardedIndex.open(path))

    def _write_generation(self) -> Path:
        """``<index>/pairs-view/<set>/``: manifest, ids and hashes of the live set (written once,
        atomically; other sets' folders removed)."""
        base = self.root / VIEW_DIR
        folder = base / str(self.sharded.set_dir.name)
        if not (folder / MANIFEST).is_file():
            base.mkdir(exist_ok=True)
            staging = base / f".{folder.name}.{os.getpid()}"
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            (staging / "doc_ids.bin").write_bytes("\0".join(self.doc_ids).encode("utf-8"))
            np.save(staging / "doc_sha256.npy", self._sha256)
            (staging / MANIFEST).write_text(json.dumps(self.manifest, sort_keys=True), "utf-8")
            for name in ("doc_ids.bin", "doc_sha256.npy", MANIFEST):
                fsync_path(staging / name)
            try:
                os.replace(staging, folder)
            except OSError:  # another process wrote it first
                shutil.rmtree(staging, ignore_errors=True)
            fsync_path(base)
        for other in base.iterdir():
            if other.name != folder.name and not other.name.startswith("."):
                shutil.rmtree(other, ignore_errors=True)
        return folder

    def store(self, name: str = "terms") -> Postings:
        if name not in self.specs:
            raise CoderivError(f"this index has no store {name!r}; it has {sorted(self.specs)!r}")
        if name not in self._stores:
            self._stores[name] = merged_postings(self.sharded, name)
        return self._stores[name]

    @property
    def source(self) -> str | None:
        return self.sharded.source

    def info(self) -> dict[str, Any]:
        return self.sharded.info()

    @property
    def version(self) -> str:
        return self.sharded.version

    def dispatch(self, on_single: Callable[[Index], T], on_sharded: Callable[[ShardedIndex], T]) -> T:
        """The sharded index's kind: a searcher of the view is the sharded index's (the view
        holds no scoring tables, only what the pairs engine reads)."""
        return self.sharded.dispatch(on_single, on_sharded)
