"""The archive's LTI 1.3 endpoints (docs/archive.md, "LTI 1.3"): what a learning platform
calls (the OIDC login, the launch, the tool's key set) and the pages a launch leads to (the
upload page of the assignment, the Deep Linking choice). The protocol is
:mod:`coderiv.archive.lti`; these routes only parse, call it and answer. A refused login or
launch is one line (400) and an audit entry, and stores nothing else."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy import select

from coderiv.archive import audit
from coderiv.archive.lti import LtiRefused, Member, begin_login, deep_link_response, roster, sign_in_token, tool_jwks, validate_launch
from coderiv.archive.models import LtiLaunch, User
from coderiv.archive.operations import Operations
from coderiv.archive.states import Role
from coderiv.errors import ForbiddenError, NotFoundError
from coderiv.web.archive_api import Examiner, Submitter, operations, read_upload
from coderiv.web.context import WebContext
from coderiv.web.pages import page

router = APIRouter(tags=["lti"])
#: The launch's own policy for the Deep Linking page: its form posts to the platform.
DEEP_LINK_CSP = ("default-src 'self'; style-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; "
                 "form-action {origin}; frame-ancestors 'none'")


def _ops(request: Request) -> Operations:
    return operations(request)


def _refused(request: Request, exc: LtiRefused, what: str) -> None:
    """Record a refusal in the audit log (its own transaction: the refused one stored nothing)."""
    with _ops(request).archive.database.session() as session:
        audit.record(session, None, "lti-refused", what, str(exc))


async def _params(request: Request) -> dict[str, str]:
    params = {k: v for k, v in request.query_params.items()}
    if request.method == "POST":
        form = await request.form()
        params.update({k: v for k, v in form.items() if isinstance(v, str)})
    return params


@router.api_route("/lti/login", methods=["GET", "POST"], include_in_schema=False)
async def lti_login(request: Request) -> Response:
    """OIDC login initiation: send the browser to the registered platform's authorisation."""
    params = await _params(request)
    redirect_uri = str(request.url_for("lti_launch"))
    context: WebContext = request.app.state.context

    def begin() -> str:
        with _ops(request).archive.database.session() as session:
            return begin_login(session, params, redirect_uri)

    try:
        target = await context.pool.run(begin)
    except LtiRefused as exc:
        _refused(request, exc, params.get("iss", ""))
        raise
    return RedirectResponse(target, status_code=302)


@router.post("/lti/launch", include_in_schema=False, name="lti_launch")
def lti_launch(request: Request, id_token: Annotated[str, Form()] = "", state: Annotated[str, Form()] = "") -> Response:
    """The launch: validated, its user signed in (a cookie), then the assignment's upload page,
    or, for a Deep Linking request, the page that places the tool in the course."""
    ops = _ops(request)
    try:
        with ops.archive.database.session() as session:
            launch = validate_launch(session, id_token, state)
            token = sign_in_token(launch.user)
            if launch.kind == "LtiDeepLinkingRequest":
                assert launch.deep_link_return is not None
                jwt = deep_link_response(session, launch, str(request.url_for("lti_launch")), "coderiv: check the thesis")
                audit.record(session, launch.user, "lti-deep-link", launch.platform.issuer)
                origin = "{0.scheme}://{0.netloc}".format(urlsplit(launch.deep_link_return))
                response = page(request, "lti_deep_link.html", return_url=launch.deep_link_return, jwt=jwt)
                response.headers["Content-Security-Policy"] = DEEP_LINK_CSP.format(origin=origin)
                return response
            audit.record(session, launch.user, "lti-launch", launch.platform.issuer, f"launch {launch.launch_id}")
            launch_id = launch.launch_id
    except LtiRefused as exc:
        _refused(request, exc, "launch")
        raise
    return RedirectResponse(f"/lti/submit?launch={launch_id}&token={token}", status_code=303)


@router.get("/lti/jwks", include_in_schema=False)
def lti_jwks(request: Request) -> JSONResponse:
    """The tool's public key set (the platform checks the tool's signatures with it)."""
    with _ops(request).archive.database.session() as session:
        return JSONResponse(tool_jwks(session))


def _launch_of(request: Request, user: User, launch: int) -> LtiLaunch:
    with _ops(request).archive.database.session() as session:
        found = session.scalar(select(LtiLaunch).where(LtiLaunch.id == launch))
        if found is None or (found.user_id != user.id and not user.role.may(Role.ADMIN)):
            raise NotFoundError(f"no launch {launch}")
        session.expunge(found)
        return found


@router.get("/lti/submit", response_class=HTMLResponse, include_in_schema=False)
def lti_submit_page(request: Request, user: Submitter, launch: int) -> HTMLResponse:
    """The assignment's upload page, reached from the platform."""
    found = _launch_of(request, user, launch)
    return page(request, "lti_submit.html", user=user, launch=found)


@router.post("/lti/submit", include_in_schema=False)
async def lti_submit(
    request: Request, user: Submitter, launch: Annotated[int, Form()],
    file: Annotated[UploadFile | None, File()] = None, title: Annotated[str, Form()] = "",
) -> Response:
    """Queue the student's upload as their submission for the launch's assignment (its score
    goes back to the platform once checked)."""
    found = _launch_of(request, user, launch)
    label, data = await read_upload(file)
    context: WebContext = request.app.state.context
    ops = _ops(request)
    accepted = await context.pool.run(lambda: ops.accept(user, label, data, False, None, found.name, title, found.id))
    return RedirectResponse(f"/submissions/{accepted.id}", status_code=303)


@router.get("/api/lti/roster", summary="The members of an LTI launch's course (NRPS; examiners)", tags=["archive"])
def lti_roster(request: Request, user: Examiner, launch: int) -> list[Member]:
    found = _launch_of(request, user, launch)
    with _ops(request).archive.database.session() as session:
        merged = session.merge(found)
        if merged.user_id != user.id and not user.role.may(Role.ADMIN):
            raise ForbiddenError("only the instructor who launched it may read this course's roster")
        members: list[Member] = roster(session, merged)
        audit.record(session, user, "lti-roster", str(launch), f"{len(members)} members")
        return members
