"""What deleting an archived submission removes beyond its own rows (issue 44 item 4).

An archived submission is a document of the collection (``archive/<id>.txt``), so other
submissions' checks may have found it: its rows of matches over time (both ways) and the
visits of its page go, and in every stored report of another submission that names it (as a
source, a version, or the document a passage was found in) its passages' text and its source
side are replaced by a tombstone, "a source removed on DATE at its owner's request", while
every figure that was decided on stays (overall, shares, words, percentages, ranks): an
examiner's decision keeps its grounds, and nobody reads the removed text. The report's HTML
page is rendered again from the changed JSON (:func:`coderiv.report.stored.report_from_dict`,
the query's text from its submission, the other sources' texts re-read from the collection).
Each submission whose reports changed gets an audit entry, so its export says so."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from sqlalchemy import CursorResult, or_, select
from sqlalchemy import delete as sql_delete
from sqlalchemy.orm import Session

from coderiv.archive import audit
from coderiv.archive.models import Check, DocumentMatch, DocumentView, Submission, User
from coderiv.errors import CoderivError
from coderiv.output import to_json
from coderiv.report import render_html
from coderiv.report.stored import report_from_dict
from coderiv.text.extract import DEFAULT_MARKUP, Markup
from coderiv.text.sources import DocumentTexts

#: What stands where a removed source's text was.
TOMBSTONE = "a source removed on {date} at its owner's request"


def tombstone(moment: dt.datetime) -> str:
    return TOMBSTONE.format(date=moment.date().isoformat())


@dataclass(frozen=True)
class Removal:
    """What removing a source changed: match rows deleted, and the submissions (and checks)
    whose stored reports now hold its tombstone."""

    match_rows: int
    submissions: list[str]
    checks: int


def collection_texts(collection: Path | None, markup: Markup = DEFAULT_MARKUP) -> Callable[[list[str]], dict[str, str]]:
    """The documents' texts from the ``collection`` folder, read as the index reads them ("" for
    one that cannot be read any more, or without a folder)."""
    def read(doc_ids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        if collection is None:
            return found
        source = DocumentTexts(collection, markup=markup)
        for doc_id in doc_ids:
            try:
                found.update(source.get([doc_id]))
            except CoderivError:
                found[doc_id] = ""
        return found

    return read


def _blank(passage: dict[str, Any], stone: str) -> None:
    passage.update(text=stone, source_start=0, source_end=0, source_spans=[])


def redact_report(data: dict[str, Any], doc_id: str, stone: str) -> bool:
    """Replace ``doc_id``'s passages and source side in one report's JSON form by ``stone``
    (figures kept); True when the report named it."""
    changed = False
    for source in data.get("sources", []):
        if source.get("doc_id") == doc_id:
            source["removed"] = stone
            changed = True
        for passage in source.get("passages", []):
            if source.get("doc_id") == doc_id or passage.get("doc_id") == doc_id:
                _blank(passage, stone)
                changed = True
        for version in source.get("versions", []):
            if version.get("doc_id") == doc_id:
                version["removed"] = stone
                changed = True
    return changed


def remove_source(
    session: Session, doc_id: str, owner: str, moment: dt.datetime, user: User | None,
    texts: Callable[[list[str]], dict[str, str]],
) -> Removal:
    """Remove ``doc_id`` (the archived submission ``owner`` being deleted) from everything else
    the archive stores (module docstring); ``texts`` gives the other sources' texts for the pages."""
    both_ways = or_(DocumentMatch.doc == doc_id, DocumentMatch.match == doc_id)
    removed = cast(CursorResult[Any], session.execute(
        sql_delete(DocumentMatch).where(both_ways).execution_options(synchronize_session=False)))
    session.execute(sql_delete(DocumentView).where(DocumentView.doc == doc_id).execution_options(synchronize_session=False))
    stone = tombstone(moment)
    touched: dict[str, int] = {}
    needle = json.dumps(doc_id, ensure_ascii=False)  # the id as the JSON holds it, quotes included
    for check in session.scalars(select(Check).where(Check.report_json.contains(needle), Check.submission_id != owner)):
        data = json.loads(check.report_json or "{}")
        if not redact_report(data, doc_id, stone):
            continue
        submission = session.get(Submission, check.submission_id)
        others = [s["doc_id"] for s in data["sources"] if s["doc_id"] != doc_id]
        texts_by_id = texts(others)
        texts_by_id[doc_id] = stone
        check.report_json = to_json(data)
        check.report_html = render_html(report_from_dict(data, submission.text if submission else "", texts_by_id))
        touched[check.submission_id] = touched.get(check.submission_id, 0) + 1
    for submission_id, count in touched.items():
        audit.record(session, user, "redact", submission_id,
                     f"{doc_id}: {stone}; its passages replaced in {count} stored report(s), the figures kept")
    return Removal(int(removed.rowcount), sorted(touched), sum(touched.values()))
