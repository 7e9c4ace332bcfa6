"""Turning raw documents into per-store keys, in parallel worker processes.

Analysis is pure Python (regular expressions, stoplist, stemming), so indexing uses every core
with a process pool; documents travel in batches of a few MB so that memory stays bounded and
the pool's overhead stays small.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .analysis import Analyzer, AnalysisSettings
from .collection import RawDocument
from .extract import MAX_DOCUMENT_BYTES, looks_binary, visible_text
from .keys import StoreSpec


@dataclass
class AnalyzedEntry:
    """One document ready for the index: its id, content hash, f_d, and keys for each store."""

    doc_id: str
    sha256: str
    length: int
    stores: dict[str, tuple[np.ndarray, np.ndarray]]
    lossy: bool = False


@dataclass(frozen=True)
class Skipped:
    """A document left out of the index, and why (``empty``, ``binary``, ``too large``)."""

    doc_id: str
    reason: str


@dataclass
class _Worker:
    analyzer: Analyzer
    specs: list[StoreSpec]
    extractors: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.extractors = [spec.extractor() for spec in self.specs]
        self.structure = any(spec.needs_structure for spec in self.specs)

    def run(self, doc: RawDocument) -> AnalyzedEntry | Skipped:
        if len(doc.data) > MAX_DOCUMENT_BYTES:
            return Skipped(doc.doc_id, f"too large ({len(doc.data)} bytes > {MAX_DOCUMENT_BYTES})")
        if looks_binary(doc.data):
            return Skipped(doc.doc_id, "binary")
        decoded = visible_text(doc.data, doc.doc_id)
        if self.structure:
            analyzed = self.analyzer.analyze(decoded.text)
        else:
            from .analysis import AnalyzedDocument

            analyzed = AnalyzedDocument(self.analyzer.terms(decoded.text))
        if not analyzed.terms:
            return Skipped(doc.doc_id, "empty (no words after analysis)")
        stores = {spec.name: ex(analyzed) for spec, ex in zip(self.specs, self.extractors)}
        return AnalyzedEntry(doc.doc_id, doc.sha256, analyzed.length, stores, decoded.lossy)


_WORKER: _Worker | None = None


def _init_worker(settings: dict[str, Any], specs: list[dict[str, Any]]) -> None:
    global _WORKER
    _WORKER = _Worker(Analyzer(AnalysisSettings.from_dict(settings)), [StoreSpec.from_dict(s) for s in specs])


def _run_batch(batch: list[RawDocument]) -> list[AnalyzedEntry | Skipped]:
    assert _WORKER is not None
    return [_WORKER.run(doc) for doc in batch]


def _batches(docs: Iterable[RawDocument], max_bytes: int, max_docs: int) -> Iterator[list[RawDocument]]:
    batch: list[RawDocument] = []
    size = 0
    for doc in docs:
        batch.append(doc)
        size += len(doc.data)
        if size >= max_bytes or len(batch) >= max_docs:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


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
) -> Iterator[AnalyzedEntry | Skipped]:
    """Analyse documents in worker processes (in-process when ``workers`` is 1).

    Results come back in input order; at most ``2 × workers`` batches are in flight, so memory
    stays bounded whatever the collection's size.
    """
    workers = default_workers() if workers is None else workers
    settings_dict = settings.to_dict()
    spec_dicts = [s.to_dict() for s in specs]
    if workers <= 1:
        _init_worker(settings_dict, spec_dicts)
        for doc in docs:
            assert _WORKER is not None
            yield _WORKER.run(doc)
        return
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(settings_dict, spec_dicts)) as pool:
        pending: list[Future[list[AnalyzedEntry | Skipped]]] = []
        for batch in _batches(docs, max_bytes=2 << 20, max_docs=500):
            pending.append(pool.submit(_run_batch, batch))
            while len(pending) > 2 * workers:
                yield from pending.pop(0).result()
        for future in pending:
            yield from future.result()
