"""Retention and privacy: a submission's whole record as JSON (export), its deletion with its
text, checks and decisions (and its file in the collection, if archived: the writer then
re-reads the folder, so the index forgets it), and the expiry of unarchived submissions older
than the retention setting. The audit log keeps that they existed, not their text."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict  # pydantic (the API's schema) needs this one before Python 3.12

from coderiv.archive import audit
from coderiv.archive.models import Submission, User, now
from coderiv.archive.states import CheckState, DecisionState, SubmissionState
from coderiv.archive.tombstones import collection_texts, remove_source


def _time(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat(timespec="seconds") + "Z"


class ExportedCheck(TypedDict):
    started: str | None
    finished: str | None
    state: CheckState
    generation: str | None
    coderiv_version: str | None
    overall: float | None
    reason: str | None
    ranking: dict[str, Any] | None
    report: dict[str, Any] | None


class ExportedDecision(TypedDict):
    at: str | None
    by: str
    state: DecisionState
    note: str


class ExportedAuditEntry(TypedDict):
    at: str | None
    user: str | None
    action: str
    detail: str


class SubmissionExport(TypedDict):
    """Everything stored about a submission (the data subject's copy; JSON as it is)."""

    id: str
    user: str
    created: str | None
    filename: str
    format: str
    size: int
    sha256: str
    text: str
    state: SubmissionState
    reason: str | None
    overall: float | None
    top_source: str | None
    decision: DecisionState
    archived_doc: str | None
    archived: str | None
    checks: list[ExportedCheck]
    decisions: list[ExportedDecision]
    audit: list[ExportedAuditEntry]


def export(session: Session, submission: Submission) -> SubmissionExport:
    """Everything stored about ``submission``: its metadata and text, every check with its report,
    the decisions and the audit entries that name it."""
    return {
        "id": submission.id, "user": submission.user.name, "created": _time(submission.created),
        "filename": submission.filename, "format": submission.format, "size": submission.size,
        "sha256": submission.sha256, "text": submission.text, "state": submission.state, "reason": submission.reason,
        "overall": submission.overall, "top_source": submission.top_source, "decision": submission.decision,
        "archived_doc": submission.archived_doc, "archived": _time(submission.archived),
        "checks": [
            {"started": _time(c.started), "finished": _time(c.finished), "state": c.state, "generation": c.generation,
             "coderiv_version": c.coderiv_version, "overall": c.overall, "reason": c.reason,
             "ranking": json.loads(c.ranking_json) if c.ranking_json else None,
             "report": json.loads(c.report_json) if c.report_json else None}
            for c in submission.checks
        ],
        "decisions": [
            {"at": _time(d.created), "by": d.user.name, "state": d.state, "note": d.note} for d in submission.decisions
        ],
        "audit": [
            {"at": _time(e.at), "user": e.user_name, "action": e.action, "detail": e.detail}
            for e in audit.entries(session, submission.id)
        ],
    }


def delete(
    session: Session, submission: Submission, user: User | None, collection: Path | None,
    texts: Callable[[list[str]], dict[str, str]] | None = None,
) -> bool:
    """Delete ``submission`` and all it holds; returns True when it was archived: its file is
    removed from ``collection`` (the index must then be updated), and it leaves the other
    submissions' matches and stored reports (:func:`coderiv.archive.tombstones.remove_source`;
    ``texts`` re-reads their other sources, by default from ``collection``)."""
    archived = submission.archived_doc
    detail = ""
    if archived:
        if collection is not None:
            (collection / archived).unlink(missing_ok=True)
        removal = remove_source(session, archived, submission.id, now(), user, texts or collection_texts(collection))
        detail = (f"archived as {archived}; {removal.match_rows} match rows deleted; its passages replaced by a tombstone "
                  f"in {removal.checks} stored report(s) of {len(removal.submissions)} other submission(s), the figures kept")
    audit.record(session, user, "delete", submission.id, detail)
    session.delete(submission)
    return archived is not None


@dataclass(frozen=True)
class Expired:
    """What an expiry deleted: the submissions' ids, and whether some were pending sources of
    the collection (mode all: their files are gone, the index must be updated)."""

    ids: list[str]
    pooled: bool

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)


def expire(session: Session, days: float, collection: Path | None = None) -> Expired:
    """Delete every unarchived submission created more than ``days`` days ago (not one waiting
    to be archived, unless its check failed: it never will be), and the file of each that was a
    pending source in ``collection``; mode ``none``'s "nothing remains after the retention"."""
    cutoff = now() - dt.timedelta(days=days)
    old = list(session.scalars(select(Submission).where(
        Submission.created < cutoff, Submission.archived.is_(None),
        or_(Submission.archive_requested.is_(False), Submission.state == SubmissionState.FAILED))))
    pooled = False
    for submission in old:
        detail = f"older than {days:g} days"
        if submission.archived_doc:  # a pending source (mode all): it leaves the collection as a deleted one does
            if collection is not None:
                (collection / submission.archived_doc).unlink(missing_ok=True)
            removal = remove_source(session, submission.archived_doc, submission.id, now(), None, collection_texts(collection))
            detail += f"; a pending source, its passages replaced by a tombstone in {removal.checks} stored report(s)"
            pooled = True
        audit.record(session, None, "expire", submission.id, detail)
        session.delete(submission)
    return Expired([s.id for s in old], pooled)
