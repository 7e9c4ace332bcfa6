"""The audit log: who viewed, downloaded or changed what, when. Entries name the user and the
target by name and id (not by foreign key) so they outlive a deleted submission or user."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from coderiv.archive.models import AuditEntry, User


def record(session: Session, user: User | None, action: str, target: str = "", detail: str = "") -> None:
    """Add one entry: a change of state (submit, decide, archive, recheck, delete, user-add,
    user-revoke, expire, an LTI refusal) or a read of a report (report, download, export).
    Looking at a submission's page or its JSON is not logged: a platform polling the state
    would fill the log (issue 42 item 6)."""
    session.add(AuditEntry(user_name=user.name if user is not None else None, action=action, target=target, detail=detail))


def entries(session: Session, target: str | None = None, limit: int = 200) -> list[AuditEntry]:
    """The newest entries first (of ``target`` only, when given)."""
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    if target is not None:
        query = query.where(AuditEntry.target == target)
    return list(session.scalars(query))
