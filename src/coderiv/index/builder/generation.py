"""Writing the next generation of one index: one pass over the source, analysis of what is new
or changed, every document numbered by sorted id, then the documents' tables, the stores
(:mod:`.writer`) and the manifest written into a new generation folder
(:func:`~coderiv.index.format.storage.new_generation`), atomically.

The previous generation is read through :class:`PreviousIndex` (what an update keeps of it):
this module never imports the reader (:mod:`coderiv.index.index`), which calls it."""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import shutil
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from coderiv._version import __version__
from coderiv.errors import CoderivError
from coderiv.index.format.counts import COUNTS, PRESENCE
from coderiv.index.format.generation import FORMAT, FORMAT_VERSION, MODIFIED_FILE, doc_table_arrays
from coderiv.index.format.postings import PLAIN, SPLIT, Postings
from coderiv.index.format.storage import MANIFEST, new_generation
from coderiv.keys.kinds import StoreSpec
from coderiv.progress import Progress
from coderiv.text.analysis import AnalysisSettings
from coderiv.text.extract import Markup

if TYPE_CHECKING:  # the build's modules (workers, writer, the collection's readers) are imported by
    # the functions that build: importing this module (the reader does, for UpdateReport) loads none
    from coderiv.index.builder.analysis_workers import Skipped
    from coderiv.index.builder.invert import Sources
    from coderiv.index.builder.spill import Spill
    from coderiv.text.collection import RawDocument, ReadOptions, Source


class PreviousIndex(Protocol):
    """What an update reads of the index it brings up to date (an :class:`~coderiv.index.index.Index`)."""

    @property
    def doc_ids(self) -> list[str]: ...

    @property
    def doc_sha256(self) -> list[str]: ...

    @property
    def doc_numbers(self) -> dict[str, int]: ...

    @property
    def n_docs(self) -> int: ...

    @property
    def doc_lengths(self) -> np.ndarray: ...

    manifest: dict[str, Any]

    def store(self, name: str = "terms") -> Postings: ...



@dataclass
class UpdateReport:
    """What an index run did: counts of documents and the files it could not index."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    lossy: list[str] = field(default_factory=list)
    #: ids of documents whose file names were not UTF-8 (their bad bytes spelled ``\xNN``)
    escaped: list[str] = field(default_factory=list)
    rebuilt: str | None = None
    n_docs: int = 0
    #: the format of each document analysed in this run (``pdf``, ``docx``, ``text``...)
    formats: list[str] = field(default_factory=list)
    #: (doc_id, note) for documents whose content was not what their extension declares
    notes: list[tuple[str, str]] = field(default_factory=list)

    def by_format(self) -> dict[str, tuple[int, dict[str, int]]]:
        """Per format, the documents read in this run and the skipped ones counted by reason."""
        summary: dict[str, tuple[int, dict[str, int]]] = {}
        for fmt in self.formats:
            read, reasons = summary.get(fmt, (0, {}))
            summary[fmt] = (read + 1, reasons)
        for skip in self.skipped:
            read, reasons = summary.get(skip.format, (0, {}))
            reasons[skip.reason] = reasons.get(skip.reason, 0) + 1
            summary[skip.format] = (read, reasons)
        return dict(sorted(summary.items()))

    @property
    def modified(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.rebuilt)


def write_failure(root: Path, exc: OSError) -> str:
    """One line saying why writing failed, and that the live index did not change."""
    where = f" ({exc.filename})" if exc.filename else ""
    # numpy reports a short write ("N requested and M written") without an errno: a full disk
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT) or (exc.errno is None and "requested and" in str(exc))
    reason = "disk full" if full else (exc.strerror or str(exc))
    return f"cannot write the index at {root}: {reason}{where}; the index was left as it was before"


def _prune_kept_texts(root: Path, shas: list[str]) -> None:
    """The kept texts of documents the new generation no longer holds are dropped
    (:mod:`coderiv.text.extracted_cache`): a removed document's text does not outlive it."""
    from coderiv.text.extracted_cache import ExtractedCache

    cache = ExtractedCache(root)
    try:
        cache.prune({bytes.fromhex(sha) for sha in shas})
    finally:
        cache.close()


#: The unit of the build's second stage on a progress bar (the first is the source's bytes read).
STORES_WRITTEN = "stores written"


def write_generation(
    root: Path,
    source: Source,
    settings: AnalysisSettings,
    specs: list[StoreSpec],
    old: PreviousIndex | None,
    report: UpdateReport,
    workers: int | None,
    progress: Progress | None,
    reading: ReadOptions,
    markup: Markup = Markup.RENDER,
) -> None:
    """Analyse what changed and write the next generation in bounded memory (:mod:`.writer`):
    read the source (:class:`_SourcePass`), analyse and spill what is new or changed
    (:func:`_analyse`), number every document by sorted id (:func:`_numbering`), then write the
    documents' tables, the stores and the manifest into a new generation."""
    from coderiv.index.builder.files import scratch_folder
    from coderiv.index.builder.invert import Sources
    from coderiv.index.builder.spill import Spill
    from coderiv.text.collection import stored_size
    from coderiv.text.extracted_cache import reset_if_damaged
    from coderiv.text.remote import source_size

    reset_if_damaged(root)  # a damaged cache of kept texts is made anew, never an error
    passing = _SourcePass(source, reading, old, report, progress)
    # the source's size: progress, and whether analysis is worth its compiled loop (a URL's
    # size is asked for only when progress is shown: it may mean listing a remote folder)
    total = source_size(source, reading) if progress is not None else stored_size(source, reading)
    if progress is not None:
        progress.start(total, "B")
    scratch = scratch_folder(root)
    try:
        spill = Spill(scratch, [spec.name for spec in specs], presort=old is None)  # runs sorted during analysis (fresh builds)
        fresh = _analyse(passing, settings, specs, workers, total, spill, report, markup, root)
        report.removed = sorted(set(passing.old_sha) - set(passing.kept) - set(fresh.sha))
        report.unchanged = len(passing.kept)
        ids = sorted([*passing.kept, *fresh.sha])
        report.n_docs = len(ids)
        if old is not None and not report.modified:
            return
        if not ids:
            where = source if isinstance(source, (str, os.PathLike)) else "the given documents"
            raise CoderivError(f"no indexable documents in {where}")

        number_of, old_to_new = _numbering(ids, passing.kept, old)
        sources = Sources(
            runs=spill.runs,
            run_numbers=[np.array([number_of[d] for d in run.ids], np.int64) for run in spill.runs],
            old={spec.name: old.store(spec.name) for spec in specs} if old is not None and passing.kept else {},
            old_to_new=old_to_new,
        )
        lengths = _lengths(len(ids), number_of, fresh.length, old if passing.kept else None, old_to_new)
        with new_generation(root) as staging:
            shas = [fresh.sha[d] if d in fresh.sha else passing.old_sha[d] for d in ids]
            _write_documents(staging, ids, shas, lengths, passing.modified)
            if progress is not None:  # the second stage: the read is done, the stores are merged and written
                progress.start(len(specs), STORES_WRITTEN)
            stores_meta = _write_stores(staging, scratch, sources, specs, lengths, workers, progress)
            sources.old.clear()
            manifest = _manifest(source, passing, settings, reading, markup, stores_meta, report, len(ids))
            (staging / MANIFEST).write_text(json.dumps(manifest), "utf-8")
        _prune_kept_texts(root, shas)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


class _SourcePass:
    """One pass over the source (a path or an fsspec URL): every document once, those whose
    bytes the old index holds kept by their old number (:attr:`kept`), the others given to
    analysis (:meth:`to_analyse`); notes, escaped names, modification times and progress
    recorded on the way."""

    def __init__(
        self, source: Source, reading: ReadOptions, old: PreviousIndex | None, report: UpdateReport, progress: Progress | None
    ) -> None:
        self.source, self.reading, self.old, self.report, self.progress = source, reading, old, report, progress
        self.old_sha: dict[str, str] = dict(zip(old.doc_ids, old.doc_sha256)) if old is not None else {}
        self.seen: set[str] = set()
        self.kept: dict[str, int] = {}
        self.modified: dict[str, float] = {}
        self.source_bytes = 0

    def to_analyse(self) -> Iterator[RawDocument]:
        """The documents added or changed since the old index, in source order."""
        from coderiv.text.remote import iter_source

        for raw in iter_source(self.source, self.reading):
            if raw.doc_id in self.seen:
                continue
            self.seen.add(raw.doc_id)
            if raw.note:
                self.report.notes.append((raw.doc_id, raw.note))
            if raw.modified is not None:
                self.modified[raw.doc_id] = raw.modified
            if raw.escaped:
                self.report.escaped.append(raw.doc_id)
            self.source_bytes += len(raw.data)
            if self.progress is not None:
                self.progress.advance(len(raw.data) if raw.stored is None else raw.stored)
            if self.old is not None and self.old_sha.get(raw.doc_id) == raw.sha256:
                self.kept[raw.doc_id] = self.old.doc_numbers[raw.doc_id]
                continue
            yield raw


@dataclass
class _Analysed:
    """SHA-256 and length (terms) of each document analysed in this run, by id."""

    sha: dict[str, str] = field(default_factory=dict)
    length: dict[str, int] = field(default_factory=dict)


def _analyse(
    passing: _SourcePass, settings: AnalysisSettings, specs: list[StoreSpec], workers: int | None, total: int | None,
    spill: Spill, report: UpdateReport, markup: Markup = Markup.RENDER, keep_texts: Path | None = None,
) -> _Analysed:
    """Analyse the documents the pass gives (worker processes) and spill their keys; the report
    gets what was skipped, lossy, which formats, notes, and which ids were added or changed."""
    from coderiv.index.builder.analysis_workers import analyze_documents

    fresh = _Analysed()
    for batch in analyze_documents(passing.to_analyse(), settings, specs, workers, source_bytes=total, markup=markup,
                                   keep_texts=keep_texts):
        report.skipped.extend(batch.skipped)
        report.lossy.extend(batch.lossy)
        report.formats.extend(batch.formats)
        report.notes.extend(batch.notes)
        for doc_id, sha, length in zip(batch.ids, batch.shas, batch.lengths):
            fresh.sha[doc_id] = sha
            fresh.length[doc_id] = length
            (report.changed if doc_id in passing.old_sha else report.added).append(doc_id)
        spill.add(batch)
    spill.flush()
    return fresh


def _numbering(ids: list[str], kept: dict[str, int], old: PreviousIndex | None) -> tuple[dict[str, int], np.ndarray]:
    """Each id's number (its rank among the sorted ``ids``), and each old number's new one (−1:
    not kept)."""
    number_of = {doc_id: i for i, doc_id in enumerate(ids)}
    old_to_new = np.full(old.n_docs if old is not None else 0, -1, np.int64)
    for doc_id, old_number in kept.items():
        old_to_new[old_number] = number_of[doc_id]
    return number_of, old_to_new


def _lengths(
    n_docs: int, number_of: dict[str, int], fresh_length: dict[str, int], old: PreviousIndex | None, old_to_new: np.ndarray
) -> np.ndarray:
    """Every document's length in terms: analysed ones from this run, kept ones from ``old``."""
    lengths = np.zeros(n_docs, np.int64)
    for doc_id, length in fresh_length.items():
        lengths[number_of[doc_id]] = length
    if old is not None:
        lengths[old_to_new[old_to_new >= 0]] = np.asarray(old.doc_lengths)[old_to_new >= 0]
    return lengths


def _write_documents(staging: Path, ids: list[str], shas: list[str], lengths: np.ndarray, modified: dict[str, float]) -> None:
    """The documents' tables: ids, SHA-256, lengths and modification times (NaN: unknown)."""
    blob, digest = doc_table_arrays(ids, shas)
    (staging / "doc_ids.bin").write_bytes(blob)
    np.save(staging / "doc_sha256.npy", digest)
    np.save(staging / "doc_lengths.npy", lengths)
    np.save(staging / MODIFIED_FILE, np.array([modified.get(d, np.nan) for d in ids], np.float64))


def _write_stores(
    staging: Path, scratch: Path, sources: Sources, specs: list[StoreSpec], lengths: np.ndarray, workers: int | None,
    progress: Progress | None = None,
) -> dict[str, dict[str, Any]]:
    """Every store (``store-N`` in ``specs`` order) and, after the terms store, its cosine
    statistics; the manifest's record of each store. When the stores come from the runs'
    presorted segments (a fresh build), the other stores (a report-ready index's chunk store)
    are written by a thread while this one writes the terms store: a second core merges."""
    from coderiv.index.builder.writer import from_presorted_runs, write_store

    n_docs = len(lengths)
    stores_meta = {}
    concurrent = len(specs) > 1 and from_presorted_runs(sources, [spec.name for spec in specs])
    stop = threading.Event()  # set when this thread fails: the other stops at its next key range
    with ThreadPoolExecutor(1, thread_name_prefix="coderiv-store") as aside:
        written = {
            number: aside.submit(
                write_store, sources, spec.name, n_docs, lengths, staging / f"store-{number}", scratch, None, workers, None, stop,
            )
            for number, spec in enumerate(specs)
            if concurrent and spec.name != "terms"
        }
        try:
            for number, spec in enumerate(specs):
                stores_meta[spec.name] = _write_one_store(staging, scratch, sources, spec, number, lengths, workers, written.get(number))
                if progress is not None:
                    progress.advance(1)
        except BaseException:
            stop.set()
            raise
    return stores_meta


def _write_one_store(
    staging: Path, scratch: Path, sources: Sources, spec: StoreSpec, number: int, lengths: np.ndarray, workers: int | None,
    written: Future[Postings] | None,
) -> dict[str, Any]:
    """Store ``number`` (or the one a thread is writing: ``written``), with the terms store's
    cosine statistics; its record in the manifest."""
    from coderiv.index.builder.cosine_statistics import cosine_statistics
    from coderiv.index.builder.writer import write_store
    from coderiv.index.cosine_bounds import class_norms, save_class_norms

    n_docs = len(lengths)
    folder = f"store-{number}"
    if written is not None:
        postings = written.result()
    else:
        postings = write_store(sources, spec.name, n_docs, lengths, staging / folder, scratch, workers=workers)
    record = {
        "dir": folder, "spec": spec.to_dict(), "keys": postings.n_keys, "postings": postings.n_postings,
        "values": PRESENCE if postings.is_presence else COUNTS, "layout": SPLIT if postings.is_split else PLAIN,
    }
    if spec.name == "terms":
        norms, max_unit = cosine_statistics(postings, n_docs)
        np.save(staging / "doc_norms.npy", norms)
        np.save(staging / "term_max_unit.npy", max_unit)
        save_class_norms(staging, *class_norms(postings, n_docs, norms))
    return record


def _manifest(
    source: Source, passing: _SourcePass, settings: AnalysisSettings, reading: ReadOptions, markup: Markup,
    stores_meta: dict[str, dict[str, Any]], report: UpdateReport, n_docs: int,
) -> dict[str, Any]:
    """The new generation's manifest (lossy documents: this run's and the kept ones' recorded)."""
    from coderiv.text.extract import EXTRACTION_VERSION
    from coderiv.text.remote import source_name

    old = passing.old
    old_lossy = set(old.manifest.get("lossy", [])) & set(passing.kept) if old is not None else set()
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "coderiv_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source_name(source),
        "source_bytes": passing.source_bytes,
        "documents": n_docs,
        "analysis": settings.to_dict(),
        "extraction": EXTRACTION_VERSION,
        "reading": {**reading.to_dict(), "markup": markup.value},
        "stores": stores_meta,
        "skipped": [{"doc_id": s.doc_id, "reason": s.reason} for s in report.skipped],
        "lossy": sorted(set(report.lossy) | old_lossy),
    }
