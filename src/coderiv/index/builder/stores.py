"""Adding a store to an index that lacks it: the one implementation for one index and a sharded
one (the reader classes only read). The indexed source is read again, recorded in the index;
the previous generation or set stays live until the new one is whole. A reader that finds
another process adding a store (the index's write lock held) waits for it, at most
:data:`WRITER_WAIT` seconds, saying so in one line, and uses the store that process added (or adds
it itself when that process added something else): two ``coderiv report`` at once on an index
without the chunk store both give their report."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from coderiv.errors import CoderivError, IndexBusyError
from coderiv.index.builder.sharded import build_sharded
from coderiv.index.index import Index
from coderiv.index.reader import IndexReader, open_index
from coderiv.index.shards import ShardedIndex
from coderiv.keys.kinds import StoreSpec
from coderiv.progress import Progress

REPORT_READY_HINT = "'coderiv index SOURCE --report-ready' builds it in the index's own reading"
#: Seconds a reader waits for another process writing the index (adding a store reads the whole
#: collection again: minutes for a large one), and between two looks.
WRITER_WAIT = 1800.0
WRITER_POLL = 0.5


def _ahead(spec: StoreSpec) -> str:
    """What to add to the announcement of a store read again: for the chunk store, the command
    that would have written it in the first reading (issue 43: the 80 s a new user waited
    without being told how to avoid it)."""
    return f"; {REPORT_READY_HINT}" if spec.kind == "chunks" else ""


def _add_to_one(index: Index, spec: StoreSpec, announce: Callable[[str], Any] | None, progress: Progress | None,
                workers: int | None) -> Index:
    from coderiv.text.remote import source_exists

    source = index.source
    if not source or not source_exists(source):
        raise CoderivError(f"the index has no {spec.name} store and its source {source} is gone; rebuild the index")
    if announce is not None:
        announce(f"adding store {spec.name} to the index (reading {source} again){_ahead(spec)}")
    deadline = time.monotonic() + WRITER_WAIT
    told = False
    while True:
        try:
            Index.update_from(source, index.root, stores=[spec], progress=progress, workers=workers)
            return Index.open(index.root)
        except IndexBusyError:
            if time.monotonic() > deadline:
                raise IndexBusyError(
                    f"another coderiv process has been writing the index at {index.root} for {WRITER_WAIT:g} s; "
                    "try again when it has finished") from None
            if not told and announce is not None:
                announce(f"another coderiv process is writing the index at {index.root}: waiting for it "
                         f"(at most {WRITER_WAIT:g} s)")
            told = True
        time.sleep(WRITER_POLL)
        reopened = Index.open(index.root)
        if spec.name in reopened.specs:  # the other process added it
            return reopened


def _add_to_shards(index: ShardedIndex, spec: StoreSpec, announce: Callable[[str], Any] | None, workers: int | None) -> ShardedIndex:
    if index.source is None:
        return index
    if announce is not None:
        announce(f"adding the {spec.name} store: rebuilding the {index.k} shards of {index.root} from {index.source}"
                 f"{_ahead(spec)}")
    stores = [s for name, s in index.specs.items() if name != "terms"] + [spec]
    build_sharded(index.source, index.root, index.k, index.settings, stores, workers)
    return ShardedIndex.open(index.root)


def with_store(
    index: IndexReader,
    spec: StoreSpec,
    *,
    announce: Callable[[str], Any] | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> IndexReader:
    """``index``, or, if it lacks the store ``spec``, the index reopened after adding it from
    its recorded source (``announce`` is told so first; ``progress`` follows the bytes read of
    one index: a sharded set is written whole, shard by shard). A sharded index (or its pairs
    view) is rebuilt as a new set with the store; one without a recorded source is returned as
    it is."""
    if spec.name in index.specs:
        return index

    def to_one(one: Index) -> IndexReader:
        return _add_to_one(one, spec, announce, progress, workers)

    def to_shards(sharded: ShardedIndex) -> IndexReader:
        return _add_to_shards(sharded, spec, announce, workers)

    return index.dispatch(to_one, to_shards)


def open_with_store(
    path: str | os.PathLike[str] | None,
    spec: StoreSpec,
    *,
    announce: Callable[[str], Any] | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
) -> IndexReader:
    """Open the index at ``path``, first adding the store ``spec`` if it lacks it (the indexed
    source is read again; ``announce`` is told so, ``progress`` follows the bytes read)."""
    return with_store(open_index(path), spec, announce=announce, progress=progress, workers=workers)
