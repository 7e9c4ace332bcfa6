"""One check of a submission, as a worker process runs it: rank the collection (SPEC §3,
absolute percentages) and build the evidence report (:func:`coderiv.report.build_report`) on
the live index generation, which is opened once and reopened when ``coderiv index`` (or the
archive's writer) commits a newer one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coderiv._version import __version__
from coderiv.errors import CoderivError, InputError
from coderiv.index.reader import IndexReader, live_version, open_index
from coderiv.output import to_json
from coderiv.ranking.containment import chunk_store_spec
from coderiv.ranking.measures import DEFAULT_MEASURE
from coderiv.ranking.searchers import QueryOptions, make_searcher
from coderiv.report import ReportOptions, build_report, render_html

#: Matches in the stored ranking, and report candidates per search.
TOP = 10


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

    def check(self, text: str, label: str, own_doc: str | None = None) -> CheckResult:
        """Rank and report ``text``; ``own_doc`` (the submission archived into the collection)
        is never its own source. An index without the report's chunk store is a one-line error."""
        index = self.index()
        if chunk_store_spec().name not in index.specs:
            raise CoderivError(
                f"the index {self.root} has no chunk store for the report: run 'coderiv pairs' once to add it")
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
