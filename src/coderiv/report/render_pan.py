"""The report in PAN's text-alignment format (``coderiv report --format pan``): one
``<document>`` for the query with a ``detected-plagiarism`` feature per credited passage, as the
HTML and JSON report credit them (:mod:`coderiv.overlap.align.pan_format`).

A passage found in several releases of a page is one detection, of the source the report
credits (the best release, see :mod:`coderiv.report.build`); the other documents that align the
same query text are named in ``<version reference="..."/>`` elements inside the feature, which
PAN's evaluators ignore; its ``obfuscation`` attribute is the passage's kind of reuse (verbatim,
edited, paraphrased, summarised: :mod:`coderiv.overlap.align.kinds`). A passage whose words the
report credits to another source is not a detection of its own either (issue 43: 11 releases of a page gave 11 detections). Offsets count
characters of the visible texts; ``source_reference`` is the document id."""

from __future__ import annotations

from pathlib import PurePath

from coderiv.overlap.align.pan_format import Feature, to_xml
from coderiv.report.model import Report, ReportPassage


def _overlaps(a: ReportPassage, b: ReportPassage) -> bool:
    return a.query_start < b.query_end and b.query_start < a.query_end


def credited_passages(report: Report) -> list[tuple[ReportPassage, list[str]]]:
    """Each credited passage with the other documents aligning the same query text, in the
    query's order. A source's own passages come first (its versions' only where the source has
    none there), then a passage whose words all went to another source is only named beside it."""
    chosen: list[tuple[ReportPassage, list[str]]] = []
    left: list[ReportPassage] = []
    for source in report.sources:  # rank order; a source's own passages come first
        mine: list[tuple[ReportPassage, list[str]]] = []
        for p in source.passages:
            if p.excluded is not None:
                continue
            if p.credited_words == 0:
                left.append(p)
                continue
            same = next((c for c in mine if _overlaps(c[0], p)), None)
            if same is None:
                mine.append((p, []))
            elif p.doc_id not in same[1]:
                same[1].append(p.doc_id)
        chosen += mine
    for p in left:
        for c, others in chosen:
            if _overlaps(c, p) and p.doc_id != c.doc_id and p.doc_id not in others:
                others.append(p.doc_id)
                break
    return sorted(chosen, key=lambda c: (c[0].query_start, c[0].query_end, c[0].doc_id))


def pan_features(report: Report) -> list[Feature]:
    """The credited passages as PAN detections (:func:`credited_passages`)."""
    this = PurePath(report.label).name or report.label
    return [
        Feature(this, p.query_start, p.query_end - p.query_start, p.doc_id, p.source_start, p.source_end - p.source_start,
                obfuscation=p.reuse, also_in=tuple(others))
        for p, others in credited_passages(report)
    ]


def render_pan(report: Report) -> str:
    """PAN's XML of the report's detections."""
    return to_xml(PurePath(report.label).name or report.label, pan_features(report))
