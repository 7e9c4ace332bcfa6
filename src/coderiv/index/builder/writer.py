"""Writing one store of an index generation in bounded memory: spill, number, invert by range,
merge, each step its own module.

1. **Spill** (:mod:`.spill`). Analysed batches of new or changed documents are appended to runs
   on disk, or, in a fresh build whose documents come in id order, grouped by key into segments
   while analysis goes on, so that steps 2-3 have nothing left to do.
2. **Number** (:mod:`.generation`). Once every id is known, documents are numbered in sorted id
   order, which makes the result independent of input order: an update equals a full rebuild,
   array for array.
3. **Invert by range** (:mod:`.invert`). Document numbers are cut into ranges of about
   ``range_postings`` postings. Each range gathers its documents' postings (new ones from the
   runs, unchanged ones from the previous generation's inverted arrays), sorts them by (key,
   document) and is written as a segment (:mod:`.segments`).
4. **Merge by key range** (:mod:`.merge`). The segments are merged one key range at a time into
   the store's files (:mod:`.files`), in the layout :mod:`~coderiv.index.format.postings` reads.

Peak memory is a few times ``range_postings`` × 8 bytes, whatever the number of documents or
keys: no array of the merge holds one entry per key of the store.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np

from coderiv.index.builder.invert import Sources, document_ranges, invert_ranges
from coderiv.index.builder.merge import merge_segments
from coderiv.index.builder.segments import Segment
from coderiv.index.format.postings import Postings

#: Postings of a document range inverted at a time (step 3).
RANGE_POSTINGS = 16_000_000


def write_store(
    sources: Sources, name: str, n_docs: int, weights: np.ndarray, out: Path, scratch: Path,
    range_postings: int | None = None, workers: int | None = None, merge_entries: int | None = None,
    stop: threading.Event | None = None,
) -> Postings:
    """Invert one store by document range and merge the segments into ``out`` (steps 3–4).

    ``range_postings`` bounds a document range's postings; ``merge_entries`` (default an eighth
    of it) bounds the segment keys and the postings of one key range of the merge."""
    range_postings = range_postings or RANGE_POSTINGS
    segments = presorted_segments(sources, name)
    if segments is None:
        for run in sources.runs:
            run.stores  # noqa: B018 - a presorted run's forward files, made here before range workers fork
        segments = invert_ranges(sources, name, document_ranges(weights, range_postings), scratch, workers)
    presence = presence_segments(segments)
    try:
        split = merge_segments(segments, out, merge_entries or max(1, range_postings // 8), stop, presence)
    finally:
        for segment in segments:
            shutil.rmtree(segment.folder, ignore_errors=True)
    return Postings.load(out, n_docs, presence=presence, split=split)


def presence_segments(segments: list[Segment]) -> bool:
    """Whether the store merged from ``segments`` is a presence store (every value 1: written
    without values nor ``maxvals``, :data:`~coderiv.index.format.counts.PRESENCE`): it has postings and
    every segment that holds some is ``constant`` with value 1. The segments hold every posting
    of the store, those kept from a previous index too (:meth:`Sources.range_postings`), so an
    update keeps a presence store presence exactly when no posting has another value."""
    filled = [segment for segment in segments if segment.n_postings]
    return bool(filled) and all(segment.constant and segment.max_val == 1 for segment in filled)


def presorted_segments(sources: Sources, name: str) -> list[Segment] | None:
    """The runs' own segments of store ``name`` (:class:`Presort`) when they hold the right
    document numbers: every run presorted, nothing kept from a previous index, and the runs'
    documents numbered 0, 1, … in run order. Otherwise None (after the sorts have finished, so
    that no thread runs when range workers are forked)."""
    if not _runs_presorted(sources):
        return None
    return [run.presort.result()[name] for run in sources.runs if run.presort is not None]


def from_presorted_runs(sources: Sources, names: list[str]) -> bool:
    """Whether every store of ``names`` is written from the runs' own segments
    (:func:`presorted_segments`): then :func:`write_store` forks no range workers for them,
    and they may be written by threads at once."""
    return all(presorted_segments(sources, name) is not None for name in names)


def _runs_presorted(sources: Sources) -> bool:
    """Whether every run was presorted with the document numbers it has, after the sorts
    have finished (see :func:`presorted_segments`)."""
    presorts = [run.presort for run in sources.runs]
    for presort in presorts:
        if presort is not None:
            presort.result()
    if not presorts or None in presorts or sources.old:
        return False
    first = 0
    for numbers in sources.run_numbers:
        if not np.array_equal(numbers, np.arange(first, first + len(numbers))):
            return False
        first += len(numbers)
    return True
