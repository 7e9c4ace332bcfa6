"""The evidence report: which sources a document draws on, how much of it each explains, and
the passages side by side (``coderiv report``; docs/report.md).

Library use::

    from coderiv.index.index import Index
    from coderiv.ranking.containment import open_with_chunks
    from coderiv.report import ReportOptions, build_report, render_html, render_json

    index = open_with_chunks(".coderiv")          # adds the chunk store if the index lacks it
    report = build_report(index, text, label="thesis.txt", options=ReportOptions(min_words=8))
    report.overall                                 # % of the query's words found in any source
    for source in report.sources:                  # ranked; shares add up to report.overall
        source.doc_id, source.share, source.color, source.versions
        for p in source.own_passages:              # aligned passages, offsets into visible texts
            report.query_text[p.query_start:p.query_end], source.text[p.source_start:p.source_end]
            p.identical_share, p.match, p.query_spans  # 1.0 / "verbatim", or a near-copy's changed words
    render_json(report)                            # the JSON form (docs/report.md, stable)
    render_pan(report)                             # PAN's text-alignment XML
    render_html(report)                            # one self-contained HTML page

Objects (``coderiv.report.model``): :class:`Report` (label, query_text, total_words,
covered_words, overall, sources, exclusions, excluded_words, options, index, documents,
candidates, searches, note); :class:`ReportSource` (rank, doc_id, color, share,
credited_words, matched_words, matched_percent, containment_percent, ranking_percent,
versions, passages, text; ``own_passages`` are those found in ``doc_id`` itself, the others
in its grouped versions); :class:`ReportPassage` (number, doc_id, query_start, query_end,
source_start, source_end, words, counted_words, excluded, text, same_words, source_words,
query_spans, source_spans; ``identical_share``, ``match``); :class:`PassageSpan` (start, end,
kind); :class:`ReportExclusion` (kind, start, end, words, reason); :class:`ReportVersion`
(doc_id, matched_words, verified); ``Report.warning`` (exclusions over 20% of the words);
:class:`ReportOptions` (top, max_candidates, min_chunks, measure, min_chars, min_words, exclude_quotes,
exclude_bibliography, templates, common_docs, group_versions, version_percent).
``Report.to_dict(include_texts=False)`` is the JSON form; with ``include_texts`` it adds
``query_text`` and every ``sources[].text``.
"""

from coderiv.report.build import build_report
from coderiv.report.model import Report, ReportExclusion, ReportOptions, ReportPassage, ReportSource, ReportVersion
from coderiv.report.render_html import render_html
from coderiv.report.render_json import render_json
from coderiv.report.render_pan import render_pan

__all__ = [
    "Report", "ReportExclusion", "ReportOptions", "ReportPassage", "ReportSource", "ReportVersion",
    "build_report", "render_html", "render_json", "render_pan",
]
