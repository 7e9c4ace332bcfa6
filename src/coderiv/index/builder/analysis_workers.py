"""Turning raw documents into per-store keys, in parallel worker processes.

Indexing uses every core with a process pool; documents travel in batches of a few MB so that
memory stays bounded and the pool's overhead stays small. Within a batch, the ASCII texts of an
index of terms and chunks (a report-ready one) without stemming are analysed together in numpy
passes over their bytes (:mod:`coderiv.keys.batch_terms`, about ten times less CPU), their chunk
ids computed from the term keys of the whole batch at once (:mod:`coderiv.keys.batch_chunks`);
every other document takes the per-document :class:`~coderiv.text.analysis.Analyzer` (regular
expressions, stoplist, stemming), with the same keys and counts.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coderiv.errors import MissingExtraError
from coderiv.keys import compiled_terms
from coderiv.keys.batch_chunks import chunk_keys
from coderiv.keys.batch_terms import LongWordError, StopTable, ascii_term_counts, ascii_term_sequences, merge_counts
from coderiv.keys.kinds import KEY_KINDS, StoreSpec, counted_keys, term_key, term_keys
from coderiv.system.child_processes import stop_pool, worker_pool
from coderiv.system.shared_slots import SlotArrays, SlotRing
from coderiv.text.analysis import AnalysisSettings, AnalyzedDocument, Analyzer, text_pieces
from coderiv.text.collection import RawDocument
from coderiv.text.extract import DEFAULT_MARKUP, EXTRACTION_VERSION, MAX_DOCUMENT_BYTES, Extracted, ExtractionError, Markup
from coderiv.text.extracted_cache import ExtractedCache, kept_extract, worth_keeping
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
    the first ``counts[:i].sum()`` of ``keys``/``values`` (keys uint32 when every key fits, else
    uint64; values uint8 or uint16 when every value fits, else uint32).
    """

    ids: list[str] = field(default_factory=list)
    shas: list[str] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    lossy: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    stores: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)
    #: where the worker put the stores' arrays (:mod:`~coderiv.system.shared_slots`), by store
    #: name in this order; None when they came through the pipe
    placed: SlotArrays | None = None
    placed_names: list[str] = field(default_factory=list)
    #: the parent's ring whose slot holds the stores' arrays, until :meth:`release`
    ring: SlotRing | None = field(default=None, repr=False, compare=False)

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
            # values travel back in 1 or 2 bytes when they fit (they nearly always do): less to pickle and copy
            top = int(vals.max()) if len(vals) else 0
            # keys in 4 bytes when they fit (32-bit chunk ids): a third less of a report-ready batch
            narrow_keys = not len(keys) or int(keys.max()) < 1 << 32
            keys = keys.astype(np.uint32 if narrow_keys else np.uint64, copy=False)
            batch.stores[name] = (counts, keys, vals.astype(np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.uint32))
        return batch

    @property
    def n_postings(self) -> int:
        return sum(len(keys) for _, keys, _ in self.stores.values())

    def to_slot(self, ring: SlotRing, slot: int) -> None:
        """Move the stores' arrays into slot ``slot`` (worker side), unless they do not fit."""
        names = list(self.stores)
        placed = ring.put(slot, [array for name in names for array in self.stores[name]])
        if placed is not None:
            self.placed, self.placed_names, self.stores = placed, names, {}

    def from_slot(self, ring: SlotRing, slot: int) -> None:
        """The stores as views of the slot the worker filled (parent side); a slot left unused
        (arrays too large: they came through the pipe) is given back at once."""
        if self.placed is None:
            ring.give_back(slot)
            return
        views = ring.views(self.placed)
        self.stores = {name: (views[3 * i], views[3 * i + 1], views[3 * i + 2]) for i, name in enumerate(self.placed_names)}
        self.ring = ring

    def release(self) -> None:
        """Done with the stores' arrays: their slot goes back to the ring, and the arrays, which
        it would overwrite, are dropped (a batch that came through the pipe just drops them)."""
        self.stores = {}
        if self.ring is not None and self.placed is not None:
            self.ring.give_back(self.placed.slot)
        self.ring, self.placed = None, None


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
    #: the index's kept texts (:mod:`coderiv.text.extracted_cache`), opened in this process
    cache: ExtractedCache | None = None

    def __post_init__(self) -> None:
        self.extractors = [spec.extractor() for spec in self.specs]
        self.structure = any(spec.needs_structure for spec in self.specs)
        self.counts_only = all(KEY_KINDS[spec.kind].counts_only for spec in self.specs)

        # Term and chunk stores alone, without stemming: ASCII texts take the whole-batch byte path.
        self.stops = StopTable(self.analyzer.stoplist) if self.analyzer.stoplist else None
        self.batch_terms = uses_batch_terms(self.analyzer.settings, self.specs)
        #: (name, n, bits) of each chunk store, whose ids the batch path computes from the term keys
        self.chunk_specs = [
            (spec.name, int(spec.param_dict["n"]), int(spec.param_dict["bits"])) for spec in self.specs if spec.kind == "chunks"
        ]
        #: characters per piece of a non-ASCII text (its ASCII pieces still take the batch path)
        self.piece_chars = MIXED_PIECE_CHARS

    def run_batch(self, docs: list[RawDocument]) -> list[AnalyzedEntry | Skipped]:
        """Every document of a batch, in order; ASCII texts analysed together when they can be
        (:mod:`coderiv.keys.batch_terms`, same keys and counts; chunk ids by
        :mod:`coderiv.keys.batch_chunks`), the rest one by one."""
        ascii_bytes = self.batch_terms
        decoded = [doc.data if ascii_bytes and _ascii_plain_text(doc, self.markup) else self.decode(doc) for doc in docs]
        results: list[AnalyzedEntry | Skipped | None] = [None] * len(docs)
        if self.batch_terms:
            parts: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
            orders: dict[int, list[int | np.ndarray]] = {}  # per text, its pieces' term keys in text order
            ascii_pieces: list[tuple[int, str | bytes]] = []
            for i, text in enumerate(decoded):
                if isinstance(text, bytes):  # plain ASCII text: its bytes are its text
                    parts[i], orders[i] = [], [len(ascii_pieces)]
                    ascii_pieces.append((i, text))
                elif isinstance(text, Extracted):
                    parts[i], orders[i] = [], []
                    self._split(i, text.text, ascii_pieces, parts[i], orders[i])
            try:
                texts = [piece for _, piece in ascii_pieces]
                if self.chunk_specs:
                    counted, sequences = ascii_term_sequences(texts, self.stops)
                else:
                    counted, sequences = ascii_term_counts(texts, self.stops), []
            except LongWordError:  # a pathological word of megabytes: every document on its own
                return [self.run(doc) for doc in docs]
            for (i, _), keys_counts in zip(ascii_pieces, counted):
                parts[i].append(keys_counts)
            chunks = self._chunk_stores(
                [[sequences[x] if isinstance(x, int) else x for x in orders[i]] for i in parts]
            ) if self.chunk_specs else [{} for _ in parts]
            for i, doc_chunks in zip(parts, chunks):
                keys, values = merge_counts(parts[i])
                values = values.astype(np.int32, copy=False)
                text = decoded[i]
                assert not isinstance(text, Skipped)
                stores = {spec.name: doc_chunks.get(spec.name, (keys, values)) for spec in self.specs}
                results[i] = self._entry(docs[i], None if isinstance(text, bytes) else text, int(values.sum()), stores)
        for i, (doc, text) in enumerate(zip(docs, decoded)):
            if results[i] is None:
                assert not isinstance(text, bytes)
                results[i] = text if isinstance(text, Skipped) else self.analyze(doc, text)
        return [r for r in results if r is not None]

    def _chunk_stores(self, sequences: list[list[np.ndarray]]) -> list[dict[str, tuple[np.ndarray, np.ndarray]]]:
        """Per document (its term keys in text order, in pieces), the keys and values of every
        chunk store: all documents' chunk ids at once (:func:`~coderiv.keys.batch_chunks.chunk_keys`)."""
        empty = np.empty(0, np.uint64)
        keys = np.concatenate([empty, *(piece for pieces in sequences for piece in pieces)])
        lengths = np.fromiter((sum(len(piece) for piece in pieces) for pieces in sequences), np.int64, len(sequences))
        stores: list[dict[str, tuple[np.ndarray, np.ndarray]]] = [{} for _ in sequences]
        for name, n, bits in self.chunk_specs:
            ids, counts = chunk_keys(keys, lengths, n, bits)
            ones = np.ones(len(ids), np.int32)
            bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
            for doc, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
                stores[doc][name] = (ids[a:b], ones[a:b])
        return stores

    def _split(
        self, number: int, text: str, ascii_pieces: list[tuple[int, str | bytes]], parts: list[tuple[np.ndarray, np.ndarray]],
        order: list[int | np.ndarray],
    ) -> None:
        """An ASCII text goes to the batch path whole; any other text is cut into pieces after a
        space or newline (:func:`~coderiv.text.analysis.text_pieces`, words intact): its ASCII
        pieces go to the batch path, the others are counted here by the exact per-word path.
        ``order`` gets, piece by piece, the ASCII piece's number or the other piece's term keys
        in text order (for chunk stores)."""
        if text.isascii():
            order.append(len(ascii_pieces))
            ascii_pieces.append((number, text))
            return
        for piece in text_pieces(text, self.piece_chars):
            if piece.isascii():
                order.append(len(ascii_pieces))
                ascii_pieces.append((number, piece))
            elif self.chunk_specs:
                terms = self.analyzer.terms(piece)
                order.append(term_keys(terms))
                parts.append(counted_keys(Counter(terms), term_key))
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
            if doc.plain and not worth_keeping(doc.doc_id, self.markup):  # the reader already looked: no other magic, not binary
                return declared(doc.doc_id).reader(self.markup)(doc.data)
            return kept_extract(doc.data, doc.doc_id, self.markup, self.cache, EXTRACTION_VERSION,
                                bytes.fromhex(doc.sha256))
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


#: Store kinds the whole-batch byte path computes (chunk ids from the terms' keys in text order).
BATCH_KINDS = frozenset({"terms", "chunks"})


def uses_batch_terms(settings: AnalysisSettings, specs: list[StoreSpec]) -> bool:
    """Whether ASCII texts take the whole-batch byte path: term and chunk stores alone, no stemming."""
    return settings.stem is False and all(spec.kind in BATCH_KINDS for spec in specs)


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
#: the parent's shared slots, inherited at the fork (None: results take the pipe)
_RING: SlotRing | None = None


def _init_worker(
    settings: dict[str, Any], specs: list[dict[str, Any]], markup: str = DEFAULT_MARKUP.value, ring: SlotRing | None = None,
    keep_texts: str | None = None,
) -> None:
    global _WORKER, _RING
    if _WORKER is not None and _WORKER.cache is not None:
        _WORKER.cache.close()  # this process's own connection (an inherited one is left alone: ExtractedCache)
    cache = None if keep_texts is None else ExtractedCache(keep_texts, create=True)  # a connection of this process's own
    _WORKER = _Worker(Analyzer(AnalysisSettings.from_dict(settings)), [StoreSpec.from_dict(s) for s in specs], markup=Markup(markup),
                      cache=cache)
    _RING = ring


def _run_batch(batch: list[RawDocument], slot: int | None = None) -> AnalyzedBatch:
    """A batch analysed; its arrays in shared slot ``slot`` when there is one and they fit."""
    assert _WORKER is not None
    analysed = AnalyzedBatch.pack(_WORKER.run_batch(batch), [s.name for s in _WORKER.specs])
    if slot is not None and _RING is not None:
        analysed.to_slot(_RING, slot)
    return analysed


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
#: A shared slot holds a batch's arrays (:mod:`~coderiv.system.shared_slots`): about 5 bytes a
#: word of text for a report-ready index's chunk ids and values, ~9 a distinct word per
#: document for its terms, so about the text's size (at most 2.0 MB a batch of 10K long
#: documents, 1.1 MB of 100K short ones, 26 Nov); room for twice a full batch's text.
SLOT_BYTES = 2 * BATCH_BYTES
#: Slots beyond the batches in flight: those the consumer holds, a run of the writer's spill
#: being gathered and the one being sorted (~6 batches each of long documents, ~18 of short
#: ones). Only the pages a batch writes are touched; a batch that finds no free slot takes
#: the pipe.
HELD_SLOTS = 40


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
    keep_texts: str | os.PathLike[str] | None = None,
) -> Iterator[AnalyzedBatch]:
    """Analyse documents in worker processes (in-process when ``workers`` is 1), in batches;
    reStructuredText and Markdown read by ``markup``; with ``keep_texts`` (an index's root
    folder) every extraction worth keeping is taken from, or kept in, its
    :mod:`~coderiv.text.extracted_cache`.

    Batches come back in input order; at most ``2 × workers`` are in flight, so memory stays
    bounded whatever the collection's size. ``source_bytes`` (the source's size, when known)
    says whether the job is worth loading the compiled loop (:mod:`coderiv.keys.compiled_terms`).

    A batch's store arrays may be views of shared memory (:mod:`~coderiv.system.shared_slots`):
    the consumer calls :meth:`AnalyzedBatch.release` once it no longer reads them (a consumer
    that does not only leaves later batches to come through the pipe).
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
        compiled_terms.load()  # before the workers fork: they inherit the compiled loops
        if any(spec.kind == "chunks" for spec in specs):
            compiled_terms.load_chunks()
    batches = itertools.chain([first], batches)
    cache_root = None if keep_texts is None else os.fspath(keep_texts)
    if workers <= 1:
        _init_worker(settings_dict, spec_dicts, markup.value, None, cache_root)
        for batch in batches:
            yield _run_batch(batch)
        return
    ring = SlotRing.for_pool(2 * workers + 1 + HELD_SLOTS, SLOT_BYTES)
    pool = worker_pool(workers, _init_worker, (settings_dict, spec_dicts, markup.value, ring, cache_root))
    try:
        pending: list[tuple[Future[AnalyzedBatch], int | None]] = []
        for batch in batches:
            slot = ring.take() if ring is not None else None
            pending.append((pool.submit(_run_batch, batch, slot), slot))
            while len(pending) > 2 * workers:
                yield _received(*pending.pop(0), ring)
        for future, slot in pending:
            yield _received(future, slot, ring)
    except BaseException:  # an error, Ctrl-C, SIGTERM, or the consumer closing the generator
        stop_pool(pool)
        raise
    pool.shutdown()


def _received(future: Future[AnalyzedBatch], slot: int | None, ring: SlotRing | None) -> AnalyzedBatch:
    """A worker's batch, its arrays mapped from its shared slot when it used one."""
    batch = future.result()
    if slot is not None and ring is not None:
        batch.from_slot(ring, slot)
    return batch
