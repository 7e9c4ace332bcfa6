"""A report read back from its JSON form (:meth:`coderiv.report.model.Report.to_dict`), with the
texts the JSON leaves out given again: what renders a stored report's HTML page anew after
part of it changed (the archive replaces a deleted source's passages by a tombstone and keeps
every figure; :mod:`coderiv.archive.tombstones`). Keys the model does not know are ignored,
derived ones (``identical_share``, ``match``, ``warning``) are derived again."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from coderiv.report.model import PassageSpan, Report, ReportExclusion, ReportOptions, ReportPassage, ReportSource, ReportVersion


def _known(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def _spans(items: list[dict[str, Any]]) -> tuple[PassageSpan, ...]:
    return tuple(PassageSpan(int(s["start"]), int(s["end"]), str(s["kind"])) for s in items)


def passage_from_dict(data: dict[str, Any]) -> ReportPassage:
    values = _known(ReportPassage, data)
    values["query_spans"] = _spans(data.get("query_spans", []))
    values["source_spans"] = _spans(data.get("source_spans", []))
    return ReportPassage(**values)


def options_from_dict(data: dict[str, Any]) -> ReportOptions:
    """The options (the templates' names only: their texts are not stored)."""
    values = _known(ReportOptions, data)
    values["templates"] = tuple((str(name), "") for name in data.get("templates", []))
    values["exclude_docs"] = tuple(data.get("exclude_docs", []))
    return ReportOptions(**values)


def report_from_dict(data: dict[str, Any], query_text: str, texts: dict[str, str]) -> Report:
    """The report of ``data`` (its JSON form), with the query's text and each source's
    (``texts`` by document id; a source missing from it gets "")."""
    sources = []
    for source in data["sources"]:
        values = _known(ReportSource, source)
        values["versions"] = [ReportVersion(**_known(ReportVersion, v)) for v in source.get("versions", [])]
        values["passages"] = [passage_from_dict(p) for p in source.get("passages", [])]
        values["text"] = texts.get(source["doc_id"], "")
        sources.append(ReportSource(**values))
    values = _known(Report, data)  # every stored field, whatever fields the model gains
    values.update(
        query_text=query_text, sources=sources, options=options_from_dict(data["options"]),
        exclusions=[ReportExclusion(**_known(ReportExclusion, e)) for e in data["exclusions"]],
        excluded_words=dict(data["excluded_words"]), searches=list(data["searches"]),
    )
    return Report(**values)
