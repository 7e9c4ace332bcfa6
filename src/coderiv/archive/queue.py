"""The check queue, kept in the submissions table so that nothing accepted is lost.

A submission is ``queued`` when accepted, ``checking`` while a worker holds its lease, then
``done`` or ``failed`` (with a reason). A worker claims one with a conditional UPDATE (only one
worker's UPDATE matches the row, on SQLite and PostgreSQL alike), and renews the lease while it
works. A submission whose lease ran out (its worker or the whole server was killed) is claimed
again: its unfinished check is marked ``interrupted`` and the check runs anew, at most
:data:`MAX_ATTEMPTS` times."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, or_, select, update
from sqlalchemy.orm import Session

from coderiv.archive.models import Check, Submission, now
from coderiv.archive.states import CheckState, SubmissionState

#: Seconds a claim lasts without a heartbeat.
DEFAULT_LEASE = 30.0
#: Checks cut off this many times fail (a document that kills its worker every time).
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Claim:
    """A submission a worker now checks: its id, text (or, not yet read, its uploaded bytes),
    label, archived doc id, and the check row."""

    submission_id: str
    check_id: int
    text: str
    label: str
    archived_doc: str | None
    upload: bytes | None = None


def _claimable(moment: dt.datetime) -> ColumnElement[bool]:
    return or_(
        Submission.state == SubmissionState.QUEUED,
        (Submission.state == SubmissionState.CHECKING) & (Submission.lease_until < moment),
    )


def claim(session: Session, worker: str, lease: float = DEFAULT_LEASE) -> Claim | None:
    """Take the oldest claimable submission for ``worker`` (None when there is none)."""
    moment = now()
    candidates = session.scalars(
        select(Submission.id).where(_claimable(moment)).order_by(Submission.created, Submission.id).limit(8)
    ).all()
    for submission_id in candidates:
        taken = cast(CursorResult[Any], session.execute(
            update(Submission)
            .where(Submission.id == submission_id, _claimable(moment))
            .values(state=SubmissionState.CHECKING, worker=worker, lease_until=moment + dt.timedelta(seconds=lease),
                    attempts=Submission.attempts + 1)
            .execution_options(synchronize_session=False)
        ))
        if taken.rowcount != 1:  # another worker was first
            continue
        for cut_off in session.scalars(select(Check).where(Check.submission_id == submission_id, Check.state == CheckState.CHECKING)):
            cut_off.state, cut_off.finished, cut_off.reason = CheckState.INTERRUPTED, moment, "its worker stopped before the check ended"
        submission = session.get(Submission, submission_id)
        assert submission is not None
        session.refresh(submission)
        if submission.attempts > MAX_ATTEMPTS:
            submission.state, submission.lease_until = SubmissionState.FAILED, None
            submission.reason = f"the check was cut off {MAX_ATTEMPTS} times (its worker stopped each time)"
            continue
        check = Check(submission_id=submission_id, worker=worker, started=moment)
        session.add(check)
        session.flush()
        return Claim(submission_id, check.id, submission.text, submission.filename, submission.archived_doc, submission.upload)
    return None


def heartbeat(session: Session, claim: Claim, worker: str, lease: float = DEFAULT_LEASE) -> bool:
    """Renew ``worker``'s lease on the claim; False when it lost it (another worker took over)."""
    renewed = cast(CursorResult[Any], session.execute(
        update(Submission)
        .where(Submission.id == claim.submission_id, Submission.worker == worker, Submission.state == SubmissionState.CHECKING)
        .values(lease_until=now() + dt.timedelta(seconds=lease))
        .execution_options(synchronize_session=False)
    ))
    return bool(renewed.rowcount == 1)


def counts(session: Session) -> dict[SubmissionState, int]:
    """Submissions in each state."""
    found = {state: 0 for state in SubmissionState}
    for state in session.scalars(select(Submission.state)):
        found[state] += 1
    return found
