"""The archive's tables (SQLAlchemy 2 typed ORM). The schema itself is made by the Alembic
revisions in ``migrations/versions``; these classes must match them (tests/test_archive_db.py
compares the migrated tables with this metadata)."""

from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import Boolean, DateTime, Enum, Float, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from coderiv.archive.states import CheckState, DecisionState, RepositoryMode, Role, StrEnum, SubmissionState


def column_type(kind: type[StrEnum]) -> Enum:
    """The column type storing ``kind`` by its values in a ``VARCHAR(16)`` (no database enum
    type, so a new member needs no migration of the column)."""
    return Enum(kind, native_enum=False, length=16, values_callable=lambda members: [m.value for m in members],
                validate_strings=True, create_constraint=False)


def now() -> dt.datetime:
    """The current time in UTC, naive (both SQLite and PostgreSQL store it the same way)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def new_id() -> str:
    """A random 128-bit id: one user cannot guess another's submission."""
    return secrets.token_hex(16)


class Base(DeclarativeBase):
    pass


class User(Base):
    __tablename__ = "users"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[Role] = mapped_column(column_type(Role))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)
    revoked: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class Submission(Base):
    __tablename__ = "submissions"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now, index=True)
    filename: Mapped[str] = mapped_column(String(255))
    format: Mapped[str] = mapped_column(String(16))
    size: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    #: the visible text, once a worker has read the upload ("" until then)
    text: Mapped[str] = mapped_column(Text)
    #: the uploaded bytes, kept only until a worker has read them (then None)
    upload: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)
    state: Mapped[SubmissionState] = mapped_column(column_type(SubmissionState), default=SubmissionState.QUEUED, index=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: the lease of the worker checking it: past this time another worker may take it over
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    worker: Mapped[str | None] = mapped_column(String(100), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    overall: Mapped[float | None] = mapped_column(Float, nullable=True)
    top_source: Mapped[str | None] = mapped_column(Text, nullable=True)
    decision: Mapped[DecisionState] = mapped_column(column_type(DecisionState), default=DecisionState.OPEN)
    archive_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    archived_doc: Mapped[str | None] = mapped_column(Text, nullable=True)
    archived: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    archive_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: who wrote it and its title, as the submitter (or the learning platform) gave them
    author: Mapped[str | None] = mapped_column(String(200), nullable=True)
    title: Mapped[str | None] = mapped_column(String(500), nullable=True)
    #: the repository mode it was checked under (the archive's, or the submission's own)
    repository: Mapped[RepositoryMode] = mapped_column(
        column_type(RepositoryMode), default=RepositoryMode.ARCHIVED, server_default=RepositoryMode.ARCHIVED.value)
    #: when it joined the collection as a pending source (mode all; ``archived_doc`` names it)
    pooled: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    #: the LTI launch it was made from (its score goes back to the platform's line item)
    lti_launch_id: Mapped[int | None] = mapped_column(ForeignKey("lti_launches.id", ondelete="SET NULL"), nullable=True)
    lti_score_sent: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    lti_score_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    user: Mapped[User] = relationship()
    checks: Mapped[list[Check]] = relationship(
        back_populates="submission", cascade="all, delete-orphan", order_by="Check.id", passive_deletes=True)
    decisions: Mapped[list[Decision]] = relationship(
        back_populates="submission", cascade="all, delete-orphan", order_by="Decision.id", passive_deletes=True)


class Check(Base):
    """One run of a check (its :class:`~coderiv.archive.states.CheckState`)."""

    __tablename__ = "checks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), index=True)
    started: Mapped[dt.datetime] = mapped_column(DateTime, default=now)
    finished: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    state: Mapped[CheckState] = mapped_column(column_type(CheckState), default=CheckState.CHECKING)
    worker: Mapped[str | None] = mapped_column(String(100), nullable=True)
    generation: Mapped[str | None] = mapped_column(String(100), nullable=True)
    coderiv_version: Mapped[str | None] = mapped_column(String(40), nullable=True)
    overall: Mapped[float | None] = mapped_column(Float, nullable=True)
    ranking_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    report_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    report_html: Mapped[str | None] = mapped_column(Text, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    submission: Mapped[Submission] = relationship(back_populates="checks")


class Decision(Base):
    __tablename__ = "decisions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    state: Mapped[DecisionState] = mapped_column(column_type(DecisionState))
    note: Mapped[str] = mapped_column(Text, default="")
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)
    submission: Mapped[Submission] = relationship(back_populates="decisions")
    user: Mapped[User] = relationship()


class DocumentMatch(Base):
    """``match`` was found similar to the collection's document ``doc`` at ``found`` (the
    matches of a document over time: older documents gain the matches of later ones)."""

    __tablename__ = "document_matches"
    __table_args__ = (UniqueConstraint("doc", "match"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    doc: Mapped[str] = mapped_column(String(1000), index=True)
    match: Mapped[str] = mapped_column(String(1000))
    percent: Mapped[float] = mapped_column(Float)
    found: Mapped[dt.datetime] = mapped_column(DateTime, default=now)


class DocumentView(Base):
    """When a user last looked at a document's page ("new since you last looked")."""

    __tablename__ = "document_views"
    __table_args__ = (UniqueConstraint("user_id", "doc"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    doc: Mapped[str] = mapped_column(String(1000))
    seen: Mapped[dt.datetime] = mapped_column(DateTime, default=now)


class AuditEntry(Base):
    """Who viewed, downloaded or changed what, when (kept when the submission is deleted)."""

    __tablename__ = "audit"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime, default=now, index=True)
    user_name: Mapped[str | None] = mapped_column(String(100), nullable=True)
    action: Mapped[str] = mapped_column(String(40))
    target: Mapped[str] = mapped_column(String(1000), default="")
    detail: Mapped[str] = mapped_column(Text, default="")


class Notification(Base):
    """A webhook delivery telling that a check ended (:mod:`coderiv.archive.notifications`):
    recorded by the worker with the check's result, sent by the server's sender thread, retried
    with backoff until it is delivered or given up."""

    __tablename__ = "notifications"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[str] = mapped_column(ForeignKey("submissions.id", ondelete="CASCADE"), index=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)
    #: the JSON body sent
    body: Mapped[str] = mapped_column(Text)
    #: pending (to send at ``next_at``; claimed by a sender until then), delivered, or given up
    state: Mapped[str] = mapped_column(String(16), default="pending", index=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_at: Mapped[dt.datetime] = mapped_column(DateTime, default=now, index=True)
    sender: Mapped[str | None] = mapped_column(String(100), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    delivered: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class LtiPlatform(Base):
    """A learning platform registered by an admin (``coderiv lti add``): its issuer and the
    client id it gave this tool, the deployment, and its OIDC login, token and key set URLs."""

    __tablename__ = "lti_platforms"
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    issuer: Mapped[str] = mapped_column(String(500))
    client_id: Mapped[str] = mapped_column(String(255))
    deployment_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    login_url: Mapped[str] = mapped_column(Text)
    token_url: Mapped[str] = mapped_column(Text)
    jwks_url: Mapped[str] = mapped_column(Text)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)


class LtiNonce(Base):
    """One OIDC login in flight: its ``state`` and ``nonce``, used once by the launch."""

    __tablename__ = "lti_nonces"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(64), unique=True)
    nonce: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)
    used: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class LtiKey(Base):
    """The tool's signing key (RS256), published at ``/lti/jwks``."""

    __tablename__ = "lti_keys"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kid: Mapped[str] = mapped_column(String(64), unique=True)
    private_pem: Mapped[str] = mapped_column(Text)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)


class LtiLaunch(Base):
    """A validated launch: who (the platform's user), from where (context, resource link), with
    the services it offers (the AGS line item, the NRPS memberships URL)."""

    __tablename__ = "lti_launches"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("lti_platforms.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    sub: Mapped[str] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    context_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    resource_link: Mapped[str | None] = mapped_column(String(255), nullable=True)
    lineitem: Mapped[str | None] = mapped_column(Text, nullable=True)
    memberships: Mapped[str | None] = mapped_column(Text, nullable=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)
    platform: Mapped[LtiPlatform] = relationship()
