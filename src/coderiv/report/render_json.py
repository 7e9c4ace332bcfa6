"""The report as JSON (fields: docs/report.md)."""

from __future__ import annotations

import json

from coderiv.report.model import Report


def render_json(report: Report, include_texts: bool = False) -> str:
    """The JSON form of ``report`` (``include_texts`` adds the query's and sources' texts)."""
    return json.dumps(report.to_dict(include_texts), indent=2, ensure_ascii=False)
