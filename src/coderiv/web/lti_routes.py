"""The archive's LTI 1.3 endpoints (docs/archive.md, "LTI 1.3"): what a learning platform
calls (the OIDC login, the launch, the tool's key set) and the pages a launch leads to (the
upload page of the assignment, the Deep Linking choice). As the API's routes, they only parse,
authorise and answer what :class:`coderiv.archive.lti_operations.LtiOperations` returns; a
refused login or launch is one line (400) and an audit entry, and stores nothing else."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from coderiv.archive.lti import Member
from coderiv.archive.lti_operations import LtiOperations
from coderiv.web.archive_api import Examiner, Submitter, operations, read_upload
from coderiv.web.context import WebContext
from coderiv.web.pages import page

router = APIRouter(tags=["lti"])
#: The Deep Linking page's own policy: its one form posts to the platform.
DEEP_LINK_CSP = ("default-src 'self'; style-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; "
                 "form-action {origin}; frame-ancestors 'none'")


def lti(request: Request) -> LtiOperations:
    return LtiOperations(operations(request))


@router.api_route("/lti/login", methods=["GET", "POST"], include_in_schema=False)
async def lti_login(request: Request) -> Response:
    """OIDC login initiation: send the browser to the registered platform's authorisation."""
    params = dict(request.query_params.items())
    if request.method == "POST":
        params.update({k: v for k, v in (await request.form()).items() if isinstance(v, str)})
    redirect_uri = str(request.url_for("lti_launch"))
    context: WebContext = request.app.state.context
    ops = lti(request)
    return RedirectResponse(await context.pool.run(lambda: ops.login(params, redirect_uri)), status_code=302)


@router.post("/lti/launch", include_in_schema=False, name="lti_launch")
def lti_launch(request: Request, id_token: Annotated[str, Form()] = "", state: Annotated[str, Form()] = "") -> Response:
    """The launch: its user signed in, then the assignment's upload page (with the token, which
    the answer puts in the cookie), or, for a Deep Linking request, the page placing the tool."""
    landing = lti(request).launch(id_token, state, str(request.url_for("lti_launch")))
    if landing.deep_link_return is None:
        return RedirectResponse(f"/lti/submit?launch={landing.launch_id}&token={landing.token}", status_code=303)
    response = page(request, "lti_deep_link.html", return_url=landing.deep_link_return, jwt=landing.deep_link_jwt)
    response.headers["Content-Security-Policy"] = DEEP_LINK_CSP.format(origin="{0.scheme}://{0.netloc}".format(
        urlsplit(landing.deep_link_return)))
    return response


@router.get("/lti/jwks", include_in_schema=False)
def lti_jwks(request: Request) -> JSONResponse:
    """The tool's public key set (the platform checks the tool's signatures with it)."""
    return JSONResponse(lti(request).jwks())


@router.get("/lti/submit", response_class=HTMLResponse, include_in_schema=False)
def lti_submit_page(request: Request, user: Submitter, launch: int) -> HTMLResponse:
    """The assignment's upload page, reached from the platform."""
    return page(request, "lti_submit.html", user=user, launch=lti(request).view(user, launch))


@router.post("/lti/submit", include_in_schema=False)
async def lti_submit(
    request: Request, user: Submitter, launch: Annotated[int, Form()],
    file: Annotated[UploadFile | None, File()] = None, title: Annotated[str, Form()] = "",
) -> Response:
    label, data = await read_upload(file)
    context: WebContext = request.app.state.context
    ops = lti(request)
    accepted = await context.pool.run(lambda: ops.submit(user, launch, label, data, title))
    return RedirectResponse(f"/submissions/{accepted.id}", status_code=303)


@router.get("/api/lti/roster", summary="The members of an LTI launch's course (NRPS; the instructor who launched)",
            tags=["archive"])
def lti_roster(request: Request, user: Examiner, launch: int) -> list[Member]:
    return lti(request).roster(user, launch)
