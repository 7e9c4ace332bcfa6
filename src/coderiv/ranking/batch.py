"""Checking many documents in one process (``coderiv query FOLDER_OR_TAR_OR_GLOB…``), and the
limits every ranked list obeys: ``--top``, ``--min-percent`` and exclusions.

**Limits.** ``--min-percent P`` alone returns *every* document at or above P% (the user asked
"what is above my threshold?"); ``--top K`` alone returns the K best; with both, at most K
documents at or above P%, and when more reach P% the result's ``note`` says so, so that rows are
never cut silently. Without either, the top :data:`DEFAULT_TOP`.

**Exclusions.** ``exclude_self`` leaves out the query's own document: for ``--doc ID`` that
document, for a document of a folder or archive the indexed document of the same id (as
``coderiv index`` of that folder or archive names it), for a file inside the indexed folder its
id there. ``versions`` (document id → ids of its versions, e.g. its group in the pair table)
also leaves out the own document's versions. Excluded documents are asked for on top of K, so a
list still has K rows, ranked 1…K after the exclusions.

A batch goes through one :class:`~coderiv.ranking.protocol.DocumentSearcher`, prepared once, so
the index is opened and its statistics read once for all documents.

**The best match.** A whole-document measure ranks a long document that shares a little of
everything above the source a thesis copied a fifth of (issue 43: ``CODE_OF_CONDUCT.rst`` at
2.6% named as the best match of four theses that each copy 10-20% of a source). Given an
``explainer`` (the containment search: the share of the query's 5-word chunks in a document), a
batch item's best match is the document that holds the most of the query, and the ranked list's
measure gives that document's whole-document figure beside it (:attr:`BatchItem.best_source`).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Any

from coderiv.errors import CoderivError
from coderiv.index.reader import IndexReader
from coderiv.output import json_percent
from coderiv.progress import Progress
from coderiv.ranking import compiled_probes
from coderiv.ranking.protocol import DocumentSearcher
from coderiv.ranking.results import Match, QueryResult
from coderiv.text.reading import QueryDocument, SkippedQuery, count_queries, is_batch, iter_queries

#: Results shown when neither ``top`` nor ``min_percent`` is given.
DEFAULT_TOP = 10


@dataclass(frozen=True)
class Limits:
    """How many documents a ranked list holds: ``top`` (None: no cap) and ``min_percent``."""

    top: int | None = DEFAULT_TOP
    min_percent: float = 0.0

    @classmethod
    def from_options(cls, top: int | None, min_percent: float | None) -> Limits:
        """The limits of ``--top`` / ``--min-percent`` as given (None: not given): a threshold
        alone is not capped; nothing given is the top :data:`DEFAULT_TOP`."""
        if top is None and not min_percent:
            return cls(DEFAULT_TOP, 0.0)
        return cls(top, min_percent or 0.0)


def cut_note(top: int, min_percent: float) -> str:
    """What a result says when ``top`` cut documents that reach ``min_percent``."""
    return (
        f"more than {top} documents reach {min_percent:g}%: only the top {top} are shown "
        "(without --top, every one is)"
    )


def rank_query(
    searcher: DocumentSearcher[Any], prepared: Any, limits: Limits, label: str = "", exclude: Collection[str] = (),
) -> QueryResult:
    """One ranked list within ``limits``, without the documents ``exclude``, ranks renumbered;
    with a note when ``top`` cut documents at or above the threshold."""
    ask = None if limits.top is None else limits.top + len(exclude) + (1 if limits.min_percent else 0)
    result = searcher.rank(prepared, ask, label=label, min_percent=limits.min_percent)
    kept = [m for m in result.matches if m.doc_id not in exclude]
    note = result.note
    if limits.top is not None and len(kept) > limits.top:
        kept = kept[: limits.top]
        if limits.min_percent:
            cut = cut_note(limits.top, limits.min_percent)
            note = f"{note}; {cut}" if note else cut
    matches = [replace(m, rank=i + 1) for i, m in enumerate(kept)]
    return replace(result, matches=matches, note=note)


def own_document(index: IndexReader, query: QueryDocument | str) -> str | None:
    """The indexed document a query is (see the module docstring), or None."""
    if isinstance(query, str):
        return query if query in index.doc_numbers else None
    if query.doc_id is not None and query.doc_id in index.doc_numbers:
        return query.doc_id
    source = index.source
    if query.doc_id is None and source and Path(source).is_dir() and query.label not in ("-", "<stdin>"):
        try:
            relative = Path(os.path.abspath(query.label)).relative_to(Path(os.path.abspath(source)))
        except ValueError:
            return None
        doc_id = relative.as_posix()
        return doc_id if doc_id in index.doc_numbers else None
    return None


@dataclass(frozen=True)
class BatchItem:
    """One document of a batch: its ranked list (None when it was skipped, with ``skipped``
    saying why), its own indexed document, what was excluded, and the document as read (None
    for an indexed document given by id)."""

    label: str
    result: QueryResult | None
    own: str | None = None
    excluded: tuple[str, ...] = ()
    skipped: str | None = None
    document: QueryDocument | None = None
    explained: Match | None = None
    explainer: str | None = None
    whole_document_percent: float | None = None

    @property
    def best(self) -> Match | None:
        """The top of the ranked list left after the exclusions (None: nothing scores)."""
        if self.result is None or not self.result.matches:
            return None
        return self.result.matches[0]

    @property
    def best_source(self) -> tuple[str, float, float | None] | None:
        """What a person acts on: (document, percentage, whole-document percentage). The
        document that holds the most of the query by the ``explainer`` (its percentage, and
        the ranked list's measure's for it) when there was one and it found a document; else
        the ranked list's top (its percentage twice over: None for the second)."""
        if self.explained is not None:
            return self.explained.doc_id, self.explained.percent, self.whole_document_percent
        best = self.best
        return None if best is None else (best.doc_id, best.percent, None)

    def to_dict(self) -> dict[str, Any]:
        """One JSON line of a batch: the query, the best match (:attr:`best_source`, its
        measure named), the ranked list's top, and the whole ranked list."""
        best, source = self.best, self.best_source
        data: dict[str, Any] = {
            "query": self.label, "own_document": self.own, "excluded": list(self.excluded),
            "best_match": None, "best_percent": None, "best_measure": None,
            "whole_document_measure": self.result_measure, "whole_document_percent": None,
            "top_ranked": None if best is None else best.doc_id, "skipped": self.skipped,
        }
        if source is not None:
            doc_id, percent, whole = source
            data.update(
                best_match=doc_id, best_percent=json_percent(percent),
                best_measure=self.explainer if self.explained is not None else self.result_measure,
                whole_document_percent=json_percent(percent if whole is None else whole),
            )
        if self.result is not None:
            data["result"] = self.result.to_dict()
        return data

    @property
    def result_measure(self) -> str | None:
        """The ranked list's method (``identity5``...), None for a skipped document."""
        return None if self.result is None else self.result.measure


def explain(
    index: IndexReader, searcher: DocumentSearcher[Any], prepared: Any, result: QueryResult,
    explainer: DocumentSearcher[Any], explainer_prepared: Any, exclude: Collection[str],
) -> tuple[Match | None, float | None]:
    """The document that holds the most of the query by ``explainer`` (after the exclusions),
    and the ranked list's percentage for it: read off ``result`` when it is listed there, else
    from ``searcher``'s percentages of every document (one full pass)."""
    found = rank_query(explainer, explainer_prepared, Limits(1, 0.0), result.query, exclude).matches
    if not found:
        return None, None
    doc_id = found[0].doc_id
    listed = next((m.percent for m in result.matches if m.doc_id == doc_id), None)
    if listed is None:
        listed = float(searcher.percentages(prepared)[index.number(doc_id)])
    return found[0], listed


def check_batch(
    index: IndexReader,
    searcher: DocumentSearcher[Any],
    queries: Iterable[QueryDocument | SkippedQuery | str],
    limits: Limits,
    exclude_self: bool = False,
    versions: Mapping[str, Collection[str]] | None = None,
    progress: Progress | None = None,
    total: int | None = None,
    explainer: DocumentSearcher[Any] | None = None,
) -> Iterator[BatchItem]:
    """Rank the collection against every query, one after the other, through one searcher:
    documents read from files, folders or archives (:func:`coderiv.text.reading.iter_queries`),
    or ids of indexed documents (``--doc``). A document without words is skipped and said so,
    as is one a folder or archive could not give. ``total`` is the number of queries, for
    ``progress``, when known. With an ``explainer`` each item also names the document holding
    the most of the query (see the module docstring)."""
    if progress is not None:
        progress.start(total, "queries")
    for query in queries:
        if isinstance(query, SkippedQuery):
            yield BatchItem(query.label, None, skipped=query.reason)
        else:
            own = own_document(index, query)
            excluded: set[str] = set()
            if exclude_self and own is not None:
                excluded.add(own)
            if versions is not None and own is not None:
                excluded.update(versions.get(own, ()))
            document = None if isinstance(query, str) else query
            if document is None:
                label, prepared = str(query), searcher.prepare_doc(str(query))
            else:
                label, prepared = document.label, searcher.prepare(document.text)
            if prepared.length == 0:
                yield BatchItem(label, None, own, skipped=f"no words after analysis ({index.settings.describe()})", document=document)
            else:
                result = rank_query(searcher, prepared, limits, label, excluded)
                explained, whole = None, None
                if explainer is not None:
                    other = explainer.prepare_doc(str(query)) if document is None else explainer.prepare(document.text)
                    explained, whole = explain(index, searcher, prepared, result, explainer, other, excluded)
                yield BatchItem(label, result, own, tuple(sorted(excluded)), document=document, explained=explained,
                                explainer=None if explainer is None else explainer.method, whole_document_percent=whole)
        if progress is not None:
            progress.advance(1)



def query_documents(
    index: IndexReader,
    searcher: DocumentSearcher[Any],
    paths: Sequence[str],
    doc_ids: Sequence[str],
    limits: Limits,
    exclude_self: bool = False,
    versions: Mapping[str, Collection[str]] | None = None,
    progress: Progress | None = None,
    explainer: DocumentSearcher[Any] | None = None,
) -> Iterator[BatchItem]:
    """``coderiv query``: every document named by ``paths`` (files, ``-``, folders, archives,
    glob patterns: :func:`coderiv.text.reading.iter_queries`; markup read as the index read
    it), then the indexed documents ``doc_ids``, ranked one after the other
    (:func:`check_batch`; ``explainer``: see there). A file named alone that has no words is an
    error; a document of a folder, archive or pattern without words is skipped and said so."""
    total = count_queries(paths)
    compiled_probes.expect_queries(None if total is None else total + len(doc_ids))  # compiled pruning only if it pays
    queries: Iterable[QueryDocument | SkippedQuery | str] = chain(iter_queries(paths, index.markup), doc_ids)
    batch = is_batch(paths)
    for item in check_batch(
        index, searcher, queries, limits, exclude_self, versions, progress,
        None if total is None else total + len(doc_ids), explainer,
    ):
        if item.skipped is not None and not batch and item.document is not None:
            raise CoderivError(f"{item.label} has {item.skipped}")
        yield item
