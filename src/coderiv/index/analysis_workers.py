"""Turning raw documents into per-store keys, in parallel worker processes.

Indexing uses every core with a process pool; documents travel in batches of a few MB so that
memory stays bounded and the pool's overhead stays small. Within a batch, the ASCII texts of a
terms-only index without stemming are analysed together in numpy passes over their bytes
(:mod:`coderiv.keys.batch_terms`, about ten times less CPU); every other document takes the
per-document :class:`~coderiv.text.analysis.Analyzer` (regular expressions, stoplist, stemming),
with the same keys and counts.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coderiv.errors import MissingExtraError
from coderiv.index.child_processes import stop_pool, worker_pool
from coderiv.keys import compiled_terms
from coderiv.keys.batch_terms import LongWordError, StopTable, ascii_term_counts, merge_counts
from coderiv.keys.kinds import KEY_KINDS, StoreSpec, counted_keys, term_key
from coderiv.text.analysis import AnalysisSettings, AnalyzedDocument, Analyzer, text_pieces
from coderiv.text.collection import RawDocument
from coderiv.text.extract import DEFAULT_MARKUP, MAX_DOCUMENT_BYTES, Extracted, ExtractionError, Markup, extract
from coderiv.text.formats import FORMATS, declared


@dataclass
class AnalyzedEntry:
    """One document ready for the index: its id, content hash, f_d, and keys for each store."""

    doc_id: str
    sha256: str
    length: int
    stores: dict[str, tuple[np.ndarray, np.ndarray]]
    lossy: bool = False
    #: the reader that read it (``pdf``, ``docx``, ``text``...)
    format: str = "text"
    #: set when the content was not what the file's extension declares
    note: str | None = None


@dataclass
class AnalyzedBatch:
    """Analysed documents of one batch, packed as flat arrays (cheap to pass between processes).

    ``stores[name] = (counts, keys, values)``: document i owns the ``counts[i]`` entries after
    the first ``counts[:i].sum()`` of ``keys``/``values`` (uint16 when every value fits, else uint32).
    """

    ids: list[str] = field(default_factory=list)
    shas: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    lossy: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    stores: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)

    @classmethod
    def pack(cls, results: list[AnalyzedEntry | Skipped], names: list[str]) -> AnalyzedBatch:
        batch = cls()
        entries = []
        for result in results:
            if isinstance(result, Skipped):
                batch.skipped.append(result)
                continue
            entries.append(result)
            batch.ids.append(result.doc_id)
            batch.shas.append(result.sha256)
            batch.lengths.append(result.length)
            batch.formats.append(result.format)
            if result.lossy:
                batch.lossy.append(result.doc_id)
            if result.note:
                batch.notes.append((result.doc_id, result.note))
        for name in names:
            parts = [e.stores[name] for e in entries]
            counts = np.fromiter((len(k) for k, _ in parts), np.int64, len(parts))
            keys = np.concatenate([k for k, _ in parts]) if parts else np.empty(0, np.uint64)
            vals = np.concatenate([v for _, v in parts]) if parts else np.empty(0, np.int32)
            # counts travel back in 2 bytes when they fit (they nearly always do): a sixth less to pickle and copy
            narrow = not len(vals) or int(vals.max()) < 1 << 16
            batch.stores[name] = (counts, keys.astype(np.uint64, copy=False), vals.astype(np.uint16 if narrow else np.uint32, copy=False))
        return batch

    @property
    def n_postings(self) -> int:
        return sum(len(keys) for _, keys, _ in self.stores.values())


@dataclass(frozen=True)
class Skipped:
    """A document left out of the index, and why (``empty``, ``binary``, ``too large``,
    ``encrypted PDF``, ``no text layer: needs OCR``, a missing extra...). ``format`` is the
    format its extension declares, for the per-format summary."""

    doc_id: str
    reason: str
    format: str = "text"


#: Characters per piece when a text that is not all ASCII is split for the batch path: real
#: text has a few curly quotes or accented names; the pieces without them still go fast.
MIXED_PIECE_CHARS = 2048


@dataclass
class _Worker:
    analyzer: Analyzer
    specs: list[StoreSpec]
    extractors: list[Any] = field(default_factory=list)
    #: how reStructuredText and Markdown are read (the index's choice)
    markup: Markup = DEFAULT_MARKUP

    def __post_init__(self) -> None:
        self.extractors = [spec.extractor() for spec in self.specs]
        self.structure = any(spec.needs_structure for spec in self.specs)
        self.counts_only = all(KEY_KINDS[spec.kind].counts_only for spec in self.specs)

        # Term stores alone, without stemming: ASCII texts take the whole-batch byte path.
        self.stops = StopTable(self.analyzer.stoplist) if self.analyzer.stoplist else None
        self.batch_terms = uses_batch_terms(self.analyzer.settings, self.specs)
        #: characters per piece of a non-ASCII text (its ASCII pieces still take the batch path)
        self.piece_chars = MIXED_PIECE_CHARS

    def run_batch(self, docs: list[RawDocument]) -> list[AnalyzedEntry | Skipped]:
        """Every document of a batch, in order; ASCII texts analysed together when they can be
        (:mod:`coderiv.keys.batch_terms`, same keys and counts), the rest one by one."""
        ascii_bytes = self.batch_terms
        decoded = [doc.data if ascii_bytes and _ascii_plain_text(doc, self.markup) else self.decode(doc) for doc in docs]
        results: list[AnalyzedEntry | Skipped | None] = [None] * len(docs)
        if self.batch_terms:
            parts: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
            ascii_pieces: list[tuple[int, str | bytes]] = []
            for i, text in enumerate(decoded):
                if isinstance(text, bytes):  # plain ASCII text: its bytes are its text
                    parts[i] = []
                    ascii_pieces.append((i, text))
                elif isinstance(text, Extracted):
                    parts[i] = []
                    self._split(i, text.text, ascii_pieces, parts[i])
            try:
                counted = ascii_term_counts([piece for _, piece in ascii_pieces], self.stops)
            except LongWordError:  # a pathological word of megabytes: every document on its own
                return [self.run(doc) for doc in docs]
            for (i, _), keys_counts in zip(ascii_pieces, counted):
                parts[i].append(keys_counts)
            for i, doc_parts in parts.items():
                keys, values = merge_counts(doc_parts)
                values = values.astype(np.int32, copy=False)
                text = decoded[i]
                assert not isinstance(text, Skipped)
                stores = {spec.name: (keys, values) for spec in self.specs}
                results[i] = self._entry(docs[i], None if isinstance(text, bytes) else text, int(values.sum()), stores)
        for i, (doc, text) in enumerate(zip(docs, decoded)):
            if results[i] is None:
                assert not isinstance(text, bytes)
                results[i] = text if isinstance(text, Skipped) else self.analyze(doc, text)
        return [r for r in results if r is not None]

    def _split(
        self, number: int, text: str, ascii_pieces: list[tuple[int, str | bytes]], parts: list[tuple[np.ndarray, np.ndarray]]
    ) -> None:
        """An ASCII text goes to the batch path whole; any other text is cut into pieces after a
        space or newline (:func:`~coderiv.text.analysis.text_pieces`, words intact): its ASCII
        pieces go to the batch path, the others are counted here by the exact per-word path."""
        if text.isascii():
            ascii_pieces.append((number, text))
            return
        for piece in text_pieces(text, self.piece_chars):
            if piece.isascii():
                ascii_pieces.append((number, piece))
            else:
                parts.append(counted_keys(self.analyzer.counts(piece).term_counts(), term_key))

    def decode(self, doc: RawDocument) -> Extracted | Skipped:
        """The document's visible text, or why it is left out."""
        size = doc.oversize or len(doc.data)
        fmt = declared(doc.doc_id).name
        if doc.problem:  # not read by the collection: a FIFO, a link leaving it, binary...
            return Skipped(doc.doc_id, doc.problem, fmt)
        if size > MAX_DOCUMENT_BYTES:
            return Skipped(doc.doc_id, f"too large ({size} bytes > {MAX_DOCUMENT_BYTES})", fmt)
        try:
            if doc.plain:  # the reader already looked: no other format's magic, not binary
                return declared(doc.doc_id).reader(self.markup)(doc.data)
            return extract(doc.data, doc.doc_id, self.markup)
        except ExtractionError as exc:
            return Skipped(doc.doc_id, exc.reason, fmt)
        except MissingExtraError as exc:
            return Skipped(doc.doc_id, str(exc), fmt)

    def _entry(
        self, doc: RawDocument, decoded: Extracted | None, length: int, stores: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> AnalyzedEntry | Skipped:
        """The analysed document (``decoded`` None: plain ASCII text, see :func:`_ascii_plain_text`)."""
        fmt, lossy, note = (declared(doc.doc_id).name, False, None) if decoded is None else (decoded.format, decoded.lossy, decoded.note)
        if not length:
            return Skipped(doc.doc_id, "empty (no words after analysis)", fmt)
        return AnalyzedEntry(doc.doc_id, doc.sha256, length, stores, lossy, fmt, note)

    def run(self, doc: RawDocument) -> AnalyzedEntry | Skipped:
        """One document, analysed on its own."""
        decoded = self.decode(doc)
        return decoded if isinstance(decoded, Skipped) else self.analyze(doc, decoded)

    def analyze(self, doc: RawDocument, decoded: Extracted) -> AnalyzedEntry | Skipped:
        """The per-document path (:class:`~coderiv.text.analysis.Analyzer`)."""
        if self.structure:
            analyzed = self.analyzer.analyze(decoded.text)
        elif self.counts_only:
            analyzed = self.analyzer.counts(decoded.text)
        else:
            analyzed = AnalyzedDocument(self.analyzer.terms(decoded.text))
        if not analyzed.length:
            return Skipped(doc.doc_id, "empty (no words after analysis)", decoded.format)
        stores = {spec.name: ex(analyzed) for spec, ex in zip(self.specs, self.extractors)}
        return self._entry(doc, decoded, analyzed.length, stores)


def uses_batch_terms(settings: AnalysisSettings, specs: list[StoreSpec]) -> bool:
    """Whether ASCII texts take the whole-batch byte path: term stores alone, no stemming."""
    return settings.stem is False and all(spec.kind == "terms" for spec in specs)


def _ascii_plain_text(doc: RawDocument, markup: Markup = DEFAULT_MARKUP) -> bool:
    """A document the reader found plain (:attr:`RawDocument.plain`) of the plain-text format
    (or markup read as text), all ASCII: its extraction is its bytes decoded (no byte-order
    mark, nothing replaced), so the batch path takes the bytes as they are (not lossy, no note)."""
    fmt = declared(doc.doc_id)
    return (
        doc.plain and not doc.problem and not doc.oversize and len(doc.data) <= MAX_DOCUMENT_BYTES
        and (fmt is FORMATS["text"] or (fmt.markup and markup is Markup.TEXT)) and doc.data.isascii()
    )


_WORKER: _Worker | None = None


def _init_worker(settings: dict[str, Any], specs: list[dict[str, Any]], markup: str = DEFAULT_MARKUP.value) -> None:
    global _WORKER
    _WORKER = _Worker(Analyzer(AnalysisSettings.from_dict(settings)), [StoreSpec.from_dict(s) for s in specs], markup=Markup(markup))


def _run_batch(batch: list[RawDocument]) -> AnalyzedBatch:
    assert _WORKER is not None
    return AnalyzedBatch.pack(_WORKER.run_batch(batch), [s.name for s in _WORKER.specs])


#: A PDF, DOCX, ODT or EPUB byte costs about this many text bytes of work (extraction plus the
#: analysis of text that is denser than its container), so batches of them stay small enough to
#: keep every worker busy (docs/formats.md).
CONTAINER_BYTE_WEIGHT = 16


def _batches(docs: Iterable[RawDocument], max_bytes: int, max_docs: int) -> Iterator[list[RawDocument]]:
    batch: list[RawDocument] = []
    size = 0
    for doc in docs:
        batch.append(doc)
        size += len(doc.data) * (CONTAINER_BYTE_WEIGHT if declared(doc.doc_id).binary else 1)
        if size >= max_bytes or len(batch) >= max_docs:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


#: A batch ends at this many bytes of text (containers weighted) or this many documents.
BATCH_BYTES = 2 << 20
BATCH_DOCS = 500


def _large(first: list[RawDocument]) -> bool:
    """A first batch that is full: more than an update of a few documents."""
    return len(first) >= BATCH_DOCS or sum(len(doc.data) for doc in first) >= BATCH_BYTES


def default_workers() -> int:
    """Worker processes for analysis: every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def analyze_documents(
    docs: Iterable[RawDocument],
    settings: AnalysisSettings,
    specs: list[StoreSpec],
    workers: int | None = None,
    source_bytes: int | None = None,
    markup: Markup = DEFAULT_MARKUP,
) -> Iterator[AnalyzedBatch]:
    """Analyse documents in worker processes (in-process when ``workers`` is 1), in batches;
    reStructuredText and Markdown read by ``markup``.

    Batches come back in input order; at most ``2 × workers`` are in flight, so memory stays
    bounded whatever the collection's size. ``source_bytes`` (the source's size, when known)
    says whether the job is worth loading the compiled loop (:mod:`coderiv.keys.compiled_terms`).
    """
    workers = default_workers() if workers is None else workers
    settings_dict = settings.to_dict()
    spec_dicts = [s.to_dict() for s in specs]
    batches = _batches(docs, max_bytes=BATCH_BYTES, max_docs=BATCH_DOCS)
    first = next(batches, None)
    if first is None:
        return
    large = _large(first) and (source_bytes is None or source_bytes >= compiled_terms.LOAD_BYTES)
    if large and uses_batch_terms(settings, specs):
        compiled_terms.load()  # before the workers fork: they inherit the compiled loop
    batches = itertools.chain([first], batches)
    if workers <= 1:
        _init_worker(settings_dict, spec_dicts, markup.value)
        for batch in batches:
            yield _run_batch(batch)
        return
    pool = worker_pool(workers, _init_worker, (settings_dict, spec_dicts, markup.value))
    try:
        pending: list[Future[AnalyzedBatch]] = []
        for batch in batches:
            pending.append(pool.submit(_run_batch, batch))
            while len(pending) > 2 * workers:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()
    except BaseException:  # an error, Ctrl-C, SIGTERM, or the consumer closing the generator
        stop_pool(pool)
        raise
    pool.shutdown()
