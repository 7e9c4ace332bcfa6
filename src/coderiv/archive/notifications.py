"""Webhook deliveries as a queue in the database, sent by the server, never by a check worker.

A worker that finishes a check records a :class:`~coderiv.archive.models.Notification` in the
same transaction as the result (:func:`enqueue`), so a result is told exactly when it is
stored, and a restart loses no delivery. One sender thread per server (:class:`Sender`) takes
the due deliveries oldest first, each by a conditional UPDATE (only one server's statement can
match it, on SQLite and PostgreSQL alike; the claim lasts past the delivery's deadline), POSTs
it within the whole-request deadline of :func:`coderiv.archive.webhook.post`, and records the
outcome: a 2xx answer delivers it; anything else (no answer in time, a refused connection, an
error status) retries it after a backoff doubling from :data:`FIRST_RETRY` up to
:data:`LAST_RETRY`, and after :data:`MAX_DELIVERIES` tries it is given up with the last error.
So a receiver that answers a byte every few seconds costs the sender one deadline per try and
no check any time (issue 44 item 2)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import socket
import time
from typing import Any, cast

from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from coderiv.archive.background import BackgroundThread
from coderiv.archive.db import Database
from coderiv.archive.models import Notification, now
from coderiv.archive.webhook import DEADLINE, SIGNATURE_HEADER, WebhookTarget, post, signature
from coderiv.errors import CoderivError

log = logging.getLogger("coderiv.archive.notifications")

#: Seconds before the first retry; each next one waits twice as long, up to LAST_RETRY.
FIRST_RETRY = 5.0
LAST_RETRY = 600.0
#: Tries before a delivery is given up.
MAX_DELIVERIES = 8
#: Seconds between two looks at the queue when nothing is due.
POLL = 1.0


def enqueue(session: Session, submission_id: str, state: str, overall: float | None) -> None:
    """Record the delivery of ``{"id", "state", "overall"}`` (sent by a server's :class:`Sender`)."""
    body = json.dumps({"id": submission_id, "state": state, "overall": overall})
    session.add(Notification(submission_id=submission_id, body=body, state="pending", attempts=0, next_at=now()))


def backoff(attempts: int) -> float:
    """Seconds before the next try after ``attempts`` failed ones (5, 10, 20 … 600)."""
    return float(min(FIRST_RETRY * 2 ** max(attempts - 1, 0), LAST_RETRY))


def claim_due(session: Session, sender: str, deadline: float) -> Notification | None:
    """Take the oldest due delivery for ``sender`` (None when none is due): its ``next_at`` moves
    past the deadline, so no other sender takes it meanwhile, and its try is counted."""
    moment = now()
    due = session.scalars(select(Notification.id).where(Notification.state == "pending", Notification.next_at <= moment)
                          .order_by(Notification.next_at, Notification.id).limit(8)).all()
    for number in due:
        taken = cast(CursorResult[Any], session.execute(
            update(Notification)
            .where(Notification.id == number, Notification.state == "pending", Notification.next_at <= moment)
            .values(sender=sender, next_at=moment + dt.timedelta(seconds=2 * deadline + 5), attempts=Notification.attempts + 1)
            .execution_options(synchronize_session=False)))
        if taken.rowcount == 1:
            found = session.get(Notification, number)
            if found is not None:
                session.refresh(found)
                return found
    return None


class Sender(BackgroundThread):
    """Delivers the recorded notifications to ``target`` in a thread of the server (module
    docstring); :meth:`send_due` sends what is due once (tests)."""

    thread_name = "coderiv-archive-webhook"

    def __init__(self, database: Database, target: WebhookTarget, deadline: float = DEADLINE, secret: str | None = None) -> None:
        super().__init__()
        self.database = database
        self.secret = secret
        self.target = target
        self.deadline = deadline
        self.name = f"{socket.gethostname()}:{os.getpid()}:webhook"

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                sent = self.send_due()
            except Exception:  # the database away: tried again at the next look
                log.exception("webhook deliveries failed; tried again")
                sent = 0
            if not sent:
                self._stop.wait(POLL)

    def send_due(self) -> int:
        """Send every delivery due now, one at a time; returns how many were tried."""
        tried = 0
        while not self._stop.is_set():
            with self.database.session() as session:
                found = claim_due(session, self.name, self.deadline)
                if found is None:
                    return tried
                number, body, attempts = found.id, found.body, found.attempts
            tried += 1
            self._deliver(number, body.encode(), attempts)
        return tried

    def _deliver(self, number: int, body: bytes, attempts: int) -> None:
        try:
            headers = {"Content-Type": "application/json", "User-Agent": "coderiv-archive"}
            if self.secret:  # signed as it is sent (a retry is signed anew, with its own time)
                headers[SIGNATURE_HEADER] = signature(self.secret, body, int(time.time()))
            status = post(self.target, body, headers, self.deadline)
            error = None if 200 <= status < 300 else f"answered {status}"
        except CoderivError as exc:
            error = str(exc)
        with self.database.session() as session:
            found = session.get(Notification, number)
            if found is None:  # its submission was deleted meanwhile
                return
            if error is None:
                found.state, found.delivered, found.last_error = "delivered", now(), None
                return
            found.last_error = error
            if attempts >= MAX_DELIVERIES:
                found.state = "given up"
                log.warning("webhook delivery %d given up after %d tries: %s", number, attempts, error)
            else:
                found.next_at = now() + dt.timedelta(seconds=backoff(attempts))
                log.warning("webhook delivery %d failed (%s); tried again in %g s", number, error, backoff(attempts))
