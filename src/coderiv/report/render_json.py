"""The report as JSON (fields: docs/report.md)."""

from __future__ import annotations

from coderiv.output import to_json
from coderiv.report.model import Report


def render_json(report: Report, include_texts: bool = False) -> str:
    """The JSON form of ``report`` (``include_texts`` adds the query's and sources' texts)."""
    return to_json(report.to_dict(include_texts))
