"""The archive's closed vocabularies: a submission's state, a check's state, an examiner's
decision and a user's role, each a :class:`~enum.StrEnum` stored by its value (the columns are
``VARCHAR(16)``: :func:`coderiv.archive.models.column_type`), so no state is a bare string
anywhere else and a value outside the enum is refused when read or written. Plain Python (no
database import): the web layer's authorisation uses the roles without the archive extra."""

from __future__ import annotations

import sys
from enum import Enum
from typing import TypeVar

from coderiv.errors import InputError

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10: the same (members are their values as strings)

    class StrEnum(str, Enum):
        def __str__(self) -> str:
            return str(self.value)


E = TypeVar("E", bound=StrEnum)


class SubmissionState(StrEnum):
    """``queued`` when accepted, ``checking`` while a worker holds its lease, then ``done`` or
    ``failed`` (with a reason)."""

    QUEUED = "queued"
    CHECKING = "checking"
    DONE = "done"
    FAILED = "failed"

    @property
    def pending(self) -> bool:
        """Still waiting for (or in) a check."""
        return self in (SubmissionState.QUEUED, SubmissionState.CHECKING)


class CheckState(StrEnum):
    """One run of a check: ``checking`` while it runs, then ``done``, ``failed`` or
    ``interrupted`` (its worker died; the submission was checked again)."""

    CHECKING = "checking"
    DONE = "done"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class DecisionState(StrEnum):
    """An examiner's decision on a submission."""

    OPEN = "open"
    CLEARED = "cleared"
    MISCONDUCT = "misconduct"


class RepositoryMode(StrEnum):
    """Which checked submissions later ones are compared with (Turnitin's and Compilatio's
    repository choice), per archive and per submission: ``all`` (every checked submission is a
    source for every later one, pending until it is archived), ``archived`` (only archived ones),
    ``none`` (checked, then forgotten: never a source, deleted after the retention period)."""

    ALL = "all"
    ARCHIVED = "archived"
    NONE = "none"


class Role(StrEnum):
    """Nested roles: submitters see their own submissions, examiners all of them and every page,
    admins also manage users and read the audit log."""

    SUBMITTER = "submitter"
    EXAMINER = "examiner"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return list(Role).index(self)

    def may(self, required: Role) -> bool:
        """Whether this role may do what ``required`` may (roles are nested)."""
        return self.rank >= required.rank


def parse(kind: type[E], value: str, what: str) -> E:
    """``value`` as a member of ``kind``; anything else is a one-line error naming the choices."""
    try:
        return kind(value)
    except ValueError:
        raise InputError(f"the {what} must be one of {', '.join(m.value for m in kind)} (got {value!r})") from None
