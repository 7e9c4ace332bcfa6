"""The return of scores to learning platforms: one thread per server sends each checked
submission made from an LTI launch its overall similarity as the launch's AGS score
(:func:`coderiv.archive.lti.post_score`), once; a refusal or an unreachable platform is kept on
the submission (``lti_score_error``, shown on its page) and tried again when it is checked
again."""

from __future__ import annotations

import logging

from sqlalchemy import select

from coderiv.archive.background import BackgroundThread
from coderiv.archive.db import Database
from coderiv.archive.lti import post_score
from coderiv.archive.models import LtiLaunch, Submission, now
from coderiv.archive.states import SubmissionState
from coderiv.errors import CoderivError

log = logging.getLogger("coderiv.archive.lti")

#: Seconds between two looks for scores to send.
POLL = 1.0


class ScoreReturn(BackgroundThread):
    """Returns the similarity of checked LTI submissions to their platforms, from a thread of
    the server (:meth:`send_due` once, for tests)."""

    thread_name = "coderiv-lti-scores"

    def __init__(self, database: Database) -> None:
        super().__init__()
        self.database = database

    def _loop(self) -> None:
        while not self._stop.wait(POLL):
            try:
                self.send_due()
            except Exception:  # the database away: tried again at the next look
                log.exception("returning LTI scores failed; tried again")

    def send_due(self) -> int:
        """Send every score due now; returns how many were tried."""
        with self.database.session() as session:
            due = list(session.scalars(select(Submission.id).where(
                Submission.lti_launch_id.is_not(None), Submission.state == SubmissionState.DONE,
                Submission.lti_score_sent.is_(None), Submission.lti_score_error.is_(None))))
        for submission_id in due:
            with self.database.session() as session:
                submission = session.get(Submission, submission_id)
                launch = session.get(LtiLaunch, submission.lti_launch_id) if submission and submission.lti_launch_id else None
                if submission is None or launch is None or submission.overall is None:
                    continue
                try:
                    post_score(session, launch, submission.overall)
                    submission.lti_score_sent = now()
                except CoderivError as exc:
                    submission.lti_score_error = str(exc)
                    log.warning("LTI score of %s not returned: %s", submission_id, exc)
        return len(due)
