"""The report in PAN's text-alignment format (``coderiv report --format pan``): one
``<document>`` for the query with a ``detected-plagiarism`` feature per counted aligned passage
of every source (a grouped version's passages name that version), ``source_reference`` its
document id, offsets in characters of the visible texts (:mod:`coderiv.overlap.align.pan_format`)."""

from __future__ import annotations

from pathlib import PurePath

from coderiv.overlap.align.pan_format import Feature, to_xml
from coderiv.report.model import Report


def pan_features(report: Report) -> list[Feature]:
    """Every counted passage of every source, in the query's order."""
    this = PurePath(report.label).name or report.label
    passages = sorted(
        (p for s in report.sources for p in s.passages if p.excluded is None),
        key=lambda p: (p.query_start, p.query_end, p.doc_id),
    )
    return [
        Feature(this, p.query_start, p.query_end - p.query_start, p.doc_id, p.source_start, p.source_end - p.source_start)
        for p in passages
    ]


def render_pan(report: Report) -> str:
    """PAN's XML of the report's detections."""
    return to_xml(PurePath(report.label).name or report.label, pan_features(report))
