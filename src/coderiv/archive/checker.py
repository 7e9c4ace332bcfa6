"""One check of a submission, as a worker process runs it: rank the collection (SPEC §3,
absolute percentages) and build the evidence report (:func:`coderiv.report.build_report`) on
the live index generation, which is opened once and reopened when ``coderiv index`` (or the
archive's writer) commits a newer one.

A check holds the generation it opened to its end: an open index has every file mapped and its
manifest's digest taken (:class:`coderiv.index.index.Index`), so a writer that publishes a new
generation and removes the old folder under a running check changes nothing it reads. What a
new generation removes outside the index (an archived source deleted at its owner's request,
whose file the report would re-read) can still fail a check that began before: a check that
fails while the live generation moved under it is run again on the current one, up to
:data:`RETRIES` times, then :class:`GenerationMoved` asks the worker to queue it again, never
to fail it (issue 44)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderiv._version import __version__
from coderiv.errors import CoderivError, InputError
from coderiv.index.builder.stores import REPORT_READY_HINT
from coderiv.index.reader import IndexReader, live_version, open_index
from coderiv.output import to_json
from coderiv.ranking.containment import chunk_store_spec
from coderiv.ranking.measures import DEFAULT_MEASURE
from coderiv.ranking.searchers import QueryOptions, make_searcher
from coderiv.report import ReportOptions, build_report, render_html

log = logging.getLogger("coderiv.archive.checker")

#: Matches in the stored ranking, and report candidates per search.
TOP = 10
#: Times a check that failed while the live generation moved under it runs again on the new one.
RETRIES = 5


class GenerationMoved(Exception):
    """A check failed on each of :data:`RETRIES` + 1 generations, each replaced while it ran:
    the submission goes back to the queue (a busy writer, not the document's fault)."""


@dataclass(frozen=True)
class CheckResult:
    """What a check stores: the generation it ran on, the ranking and the report (JSON and HTML)."""

    generation: str
    coderiv_version: str
    overall: float
    top_source: str | None
    ranking_json: str
    report_json: str
    report_html: str

    def summary(self) -> dict[str, Any]:
        return {"overall": self.overall, "top_source": self.top_source, "generation": self.generation}


class Checker:
    """Checks against the index at ``root`` (reopened when its live generation moves)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._index: IndexReader | None = None

    def index(self) -> IndexReader:
        live = live_version(self.root)
        if self._index is None or self._index.version != live:
            self._index = open_index(self.root)
        return self._index

    def moved(self, index: IndexReader) -> bool:
        """Whether the live generation is no longer ``index``'s (a writer published since it opened)."""
        try:
            return live_version(self.root) != index.version
        except CoderivError:  # being replaced, or damaged: opening it again says which
            return True

    def check(self, text: str, label: str, own_doc: str | None = None, index: IndexReader | None = None) -> CheckResult:
        """Rank and report ``text`` on ``index`` (by default the live generation, opened now);
        ``own_doc`` (the submission archived into the collection) is never its own source. A
        failure while the live generation moved runs the check again on the new one (module
        docstring). An index without the report's chunk store is a one-line error."""
        index = index or self.index()
        for attempt in range(RETRIES + 1):
            try:
                return self._check(index, text, label, own_doc)
            except Exception as exc:
                if not self.moved(index):
                    raise
                if attempt == RETRIES:
                    raise GenerationMoved(f"the index changed under the check {RETRIES + 1} times") from exc
                log.warning("check of %s on %s met a newer generation (%s: %s); checked again on it",
                            label, index.version, type(exc).__name__, exc)
                index = self.index()
        raise AssertionError("unreachable")  # pragma: no cover

    def _check(self, index: IndexReader, text: str, label: str, own_doc: str | None) -> CheckResult:
        if chunk_store_spec().name not in index.specs:
            raise CoderivError(
                f"the index {self.root} has no chunk store for the report: {REPORT_READY_HINT} "
                "('coderiv serve --archive' adds it when it starts)")
        searcher = make_searcher(index, "ranking", QueryOptions(DEFAULT_MEASURE))
        prepared = searcher.prepare(text)
        if prepared.length == 0:
            raise InputError(f"{label} has no words after analysis ({index.settings.describe()})")
        ranking = searcher.rank(prepared, TOP + (1 if own_doc else 0), label=label)
        ranked = ranking.to_dict()
        if own_doc:
            ranked["matches"] = [m for m in ranked["matches"] if m.get("doc_id") != own_doc][:TOP]
        excluded = (own_doc,) if own_doc else ()
        report = build_report(index, text, label, ReportOptions(top=TOP, exclude_docs=excluded), index.source_texts())
        top = report.sources[0].doc_id if report.sources else None
        return CheckResult(
            index.version, __version__, report.overall, top, to_json(ranked), to_json(report.to_dict()), render_html(report))
