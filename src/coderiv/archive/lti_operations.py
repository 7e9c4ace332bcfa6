"""What a learning platform and its users do to the archive through LTI 1.3, one method each, as
:mod:`coderiv.archive.operations` is for the API and the pages: begin a login, launch, publish
the tool's keys, submit for a launch's assignment, read a launch's roster. Each opens its own
transaction and writes its audit entry; a refused login or launch is recorded in a transaction
of its own (the refused one stores nothing) and raised again (:class:`~coderiv.archive.lti.LtiRefused`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from coderiv.archive import audit
from coderiv.archive.lti import LtiRefused, Member, begin_login, deep_link_response, roster, sign_in_token, tool_jwks, validate_launch
from coderiv.archive.models import LtiLaunch, User
from coderiv.archive.operations import Operations
from coderiv.archive.records import Accepted
from coderiv.archive.states import Role
from coderiv.errors import ForbiddenError, NotFoundError

#: What the tool calls itself when it is placed in a course (Deep Linking).
TOOL_TITLE = "coderiv: check the thesis"


@dataclass(frozen=True)
class Landing:
    """Where a validated launch leads: a resource link to the upload page of ``launch_id``
    (signed in with ``token``), or a Deep Linking request to the page posting ``deep_link_jwt``
    to ``deep_link_return``."""

    launch_id: int
    token: str
    deep_link_return: str | None = None
    deep_link_jwt: str | None = None


@dataclass(frozen=True)
class LaunchView:
    """A launch as its upload page shows it."""

    id: int
    name: str | None


class LtiOperations:
    def __init__(self, operations: Operations) -> None:
        self.operations = operations
        self.database = operations.archive.database

    def _refused(self, exc: LtiRefused, target: str) -> None:
        with self.database.session() as session:
            audit.record(session, None, "lti-refused", target, str(exc))

    def login(self, params: dict[str, str], redirect_uri: str) -> str:
        """The platform's authorisation URL for the browser (OIDC login initiation)."""
        try:
            with self.database.session() as session:
                return begin_login(session, params, redirect_uri)
        except LtiRefused as exc:
            self._refused(exc, params.get("iss", ""))
            raise

    def launch(self, id_token: str, state: str, tool_url: str) -> Landing:
        """Validate the launch and sign its user in (:func:`~coderiv.archive.lti.validate_launch`);
        ``tool_url`` is the resource link a Deep Linking response places."""
        try:
            with self.database.session() as session:
                launch = validate_launch(session, id_token, state)
                token = sign_in_token(launch.user)
                if launch.kind == "LtiDeepLinkingRequest":
                    audit.record(session, launch.user, "lti-deep-link", launch.platform.issuer)
                    return Landing(launch.launch_id, token, launch.deep_link_return,
                                   deep_link_response(session, launch, tool_url, TOOL_TITLE))
                audit.record(session, launch.user, "lti-launch", launch.platform.issuer, f"launch {launch.launch_id}")
                return Landing(launch.launch_id, token)
        except LtiRefused as exc:
            self._refused(exc, "launch")
            raise

    def jwks(self) -> dict[str, list[dict[str, Any]]]:
        with self.database.session() as session:
            return tool_jwks(session)

    def view(self, user: User, launch_id: int) -> LaunchView:
        """``user``'s own launch (an admin's: any); another's is refused as an unknown one."""
        with self.database.session() as session:
            found = self._own(session, user, launch_id)
            return LaunchView(found.id, found.name)

    @staticmethod
    def _own(session: Session, user: User, launch_id: int) -> LtiLaunch:
        found = session.scalar(select(LtiLaunch).where(LtiLaunch.id == launch_id))
        if found is None or (found.user_id != user.id and not user.role.may(Role.ADMIN)):
            raise NotFoundError(f"no launch {launch_id}")
        return found

    def submit(self, user: User, launch_id: int, label: str, data: bytes, title: str) -> Accepted:
        """The student's upload as their submission for the launch's assignment (its author the
        platform's name for them; its score goes back to the line item once checked)."""
        launch = self.view(user, launch_id)
        return self.operations.accept(user, label, data, False, None, launch.name, title, launch.id)

    def roster(self, user: User, launch_id: int) -> list[Member]:
        """The members of the launch's course (NRPS), for the instructor who launched it."""
        if not user.role.may(Role.EXAMINER):
            raise ForbiddenError(f"a {user.role} may not read a course's roster")
        with self.database.session() as session:
            found = self._own(session, user, launch_id)
            members = roster(session, found)
            audit.record(session, user, "lti-roster", str(launch_id), f"{len(members)} members")
            return members
