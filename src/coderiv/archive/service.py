"""The archive as a server runs it: its settings, the database, the worker processes, the
writer and the webhook's sender, started and stopped together (:class:`Archive`), and the submissions' queries the web
layer shares (who may see which)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from coderiv.archive.db import Database, default_url
from coderiv.archive.lti_scores import ScoreReturn
from coderiv.archive.models import Submission, User
from coderiv.archive.notifications import Sender
from coderiv.archive.queue import DEFAULT_LEASE
from coderiv.archive.states import DecisionState, RepositoryMode, Role, SubmissionState
from coderiv.archive.webhook import DEADLINE, webhook_target
from coderiv.archive.workers import WorkerPool
from coderiv.archive.writer import ArchiveWriter
from coderiv.text.extract import MAX_DOCUMENT_BYTES
from coderiv.text.isolated import Budget

log = logging.getLogger("coderiv.archive")


@dataclass(frozen=True)
class ArchiveSettings:
    """``database``: a SQLAlchemy URL (None: SQLite beside the index); ``workers``: checking
    processes; ``lease``: seconds a check's claim lasts without a heartbeat; ``webhook``: a URL
    told when a check ends (http or https; ``webhook_allow_private`` lets it reach loopback,
    link-local and private addresses; ``webhook_deadline``: seconds one delivery may take;
    ``webhook_secret``: the archive's key signing every delivery, :func:`~coderiv.archive.webhook.signature`);
    ``archive_all``: archive every checked submission (the policy "archive every accepted
    thesis"); ``retention_days``: unarchived submissions older than this are deleted (None: kept);
    ``repository``: which checked submissions later ones are compared with (:class:`RepositoryMode`;
    a submission may ask for another)."""

    database: str | None = None
    workers: int = 2
    lease: float = DEFAULT_LEASE
    webhook: str | None = None
    archive_all: bool = False
    retention_days: float | None = None
    webhook_allow_private: bool = False
    webhook_deadline: float = DEADLINE
    webhook_secret: str | None = None
    repository: RepositoryMode = RepositoryMode.ARCHIVED

    def url(self, index_dir: Path) -> str:
        return self.database or default_url(index_dir)


class Archive:
    """The archive of the index at ``index_dir``; ``budget`` and ``max_bytes`` bound reading one
    upload (as on the check page), in a child process of a worker."""

    def __init__(
        self, settings: ArchiveSettings, index_dir: Path, budget: Budget | None = None, max_bytes: int = MAX_DOCUMENT_BYTES,
    ) -> None:
        self.settings = settings
        self.index_dir = index_dir
        self.url = settings.url(index_dir)
        # a webhook that may not be used is refused before anything starts (one line)
        target = webhook_target(settings.webhook, settings.webhook_allow_private) if settings.webhook else None
        self.database = Database(self.url)
        self.workers = WorkerPool(self.url, index_dir, settings.workers, settings.lease, target is not None, budget or Budget(), max_bytes)
        self.writer = ArchiveWriter(self.database, index_dir, retention_days=settings.retention_days)
        self.scores = ScoreReturn(self.database)
        self.sender = (Sender(self.database, target, settings.webhook_deadline, settings.webhook_secret)
                       if target is not None else None)

    def start(self) -> None:
        self.workers.start()
        self.writer.start()
        self.scores.start()
        if self.sender is not None:
            self.sender.start()

    def stop(self) -> None:
        if self.sender is not None:
            self.sender.stop()
        self.scores.stop()
        self.writer.stop()
        self.workers.stop()
        self.database.dispose()


def visible(
    user: User, state: SubmissionState | None = None, decision: DecisionState | None = None,
) -> Select[Submission]:
    """The submissions ``user`` may see: their own (submitter), all (examiner, admin); only those
    in ``state`` and with ``decision`` when given (the list page's and the API's filters)."""
    query = select(Submission)
    if user.role == Role.SUBMITTER:
        query = query.where(Submission.user_id == user.id)
    if state is not None:
        query = query.where(Submission.state == state)
    if decision is not None:
        query = query.where(Submission.decision == decision)
    return query


def find(session: Session, user: User, submission_id: str) -> Submission | None:
    """The submission if ``user`` may see it (None otherwise: nobody learns whether it exists)."""
    return session.scalar(visible(user).where(Submission.id == submission_id))
