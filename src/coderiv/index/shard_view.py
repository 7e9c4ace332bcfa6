"""One index's face of a sharded index (:mod:`coderiv.index.shards`), for the n-to-n pairs
engine: every store's postings merged from the shards with collection-wide document numbers
(sorted id order, as one index numbers them), the documents' ids, lengths and hashes in that
order, and a small generation folder (manifest, ids, hashes) per live set, so that a pair table
computed on the view is stored under ``<index>/pairs/`` and is stale once another set is live.

A merged store is built in memory on first use (every posting of that store: the pairs engine
reads them all anyway) and equals, key for key and posting for posting, the store one index
over the collection would hold; so ``coderiv pairs`` on the view gives one index's table.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from coderiv.errors import CoderivError
from coderiv.index.counts import CountValues
from coderiv.index.index import Index
from coderiv.index.postings import DocNumbers, Postings, group_by_key, narrow
from coderiv.index.shards import ShardedIndex, build_sharded, is_sharded
from coderiv.index.storage import MANIFEST, fsync_path
from coderiv.keys.kinds import StoreSpec

VIEW_DIR = "pairs-view"


def merged_postings(index: ShardedIndex, name: str) -> Postings:
    """Store ``name`` of every shard as one store over the collection (global numbers)."""
    keys, docs, vals = [], [], []
    for s, shard in index.shards.items():
        store = shard.store(name)
        counts = np.diff(np.asarray(store.ptr))
        keys.append(np.repeat(np.asarray(store.keys, np.uint64), counts))
        docs.append(np.asarray(index.numbers[s], np.int64)[np.asarray(store.docs, np.int64)])
        vals.append(store.vals[:])
    merged_keys, counts, merged_docs, merged_vals, maxvals = group_by_key(
        np.concatenate(keys), np.concatenate(docs), np.concatenate(vals)
    )
    ptr = np.zeros(len(merged_keys) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    return Postings(
        n_docs=index.n_docs, keys=merged_keys, ptr=ptr,
        docs=DocNumbers.encode(merged_docs.astype(np.uint32), ptr), vals=CountValues.encode(merged_vals), maxvals=narrow(maxvals),
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
            "stores": {name: {"spec": spec.to_dict()} for name, spec in self.specs.items()},
        }
        self.generation = self._write_generation()

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


def with_store(
    path: str | os.PathLike[str], spec: StoreSpec, announce: Callable[[str], Any] | None = None,
) -> ShardedIndex:
    """Open the sharded index at ``path``, first rebuilding its set with store ``spec`` if its
    shards lack it (from the recorded source; the previous set stays live until the new one is
    whole)."""
    index = ShardedIndex.open(path)
    first = next(iter(index.shards.values()))
    if spec.name in first.specs or index.source is None:
        return index
    if announce is not None:
        announce(f"adding the {spec.name} store: rebuilding the {index.k} shards of {path} from {index.source}")
    stores = [s for name, s in first.specs.items() if name != "terms"] + [spec]
    build_sharded(index.source, path, index.k, index.settings, stores)
    return ShardedIndex.open(path)


def open_index_or_view(path: str | os.PathLike[str] | None) -> Index:
    """One index, or a sharded index's :class:`ShardView` (what the pairs commands read)."""
    if path is not None and is_sharded(path):
        return ShardView.open(path)
    return Index.open(path)
