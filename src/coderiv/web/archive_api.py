"""The archive's JSON API (``coderiv serve --archive``; docs/archive.md), described at ``/docs``:
submit a document to be checked, follow it, read its report, list one's submissions; examiners
decide, archive, export and delete; admins manage users. Each route parses the request, names
the least role it needs (:func:`coderiv.web.auth.signed_in`: a user's token, 401 without one,
403 for a lesser role) and answers what :class:`coderiv.archive.operations.Operations` returns,
whose typed fields are the answer's schema in ``/openapi.json``; a submitter sees only their own
submissions, and another's id answers 404 exactly as an id that does not exist."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPBearer

from coderiv.archive.models import User
from coderiv.archive.operations import MAX_PER_PAGE, Operations
from coderiv.archive.records import (
    Accepted,
    AuditLog,
    Deleted,
    DocumentMatches,
    SubmissionPage,
    SubmissionRecord,
    UserAdded,
    UserList,
    UserRevoked,
)
from coderiv.archive.retention import SubmissionExport
from coderiv.archive.states import Role
from coderiv.errors import InputError
from coderiv.web.auth import signed_in
from coderiv.web.context import WebContext
from coderiv.web.inputs import display_name

#: Declares the Bearer token in the OpenAPI description (/docs gets its "Authorize" button); the
#: token itself is checked by each route's :func:`coderiv.web.auth.signed_in`.
BEARER = HTTPBearer(auto_error=False, description="A user's token (coderiv users add NAME --role ROLE)")
router = APIRouter(prefix="/api", tags=["archive"], dependencies=[Depends(BEARER)])

#: The signed-in user of each role (route parameters).
Submitter = Annotated[User, Depends(signed_in(Role.SUBMITTER))]
Examiner = Annotated[User, Depends(signed_in(Role.EXAMINER))]
Admin = Annotated[User, Depends(signed_in(Role.ADMIN))]

#: The report page's own policy (as the check page's report): sandboxed, framed by this server only.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "frame-ancestors 'self'; sandbox allow-scripts"
)

#: The JSON report's description (its fields: docs/report.md).
REPORT_SCHEMA = {"type": "object", "description": "The evidence report as 'coderiv report --format json' writes it",
                 "required": ["overall", "total_words", "covered_words", "sources"]}


def operations(request: Request) -> Operations:
    """The archive's operations (the server runs one archive)."""
    context: WebContext = request.app.state.context
    assert context.archive is not None  # these routes are mounted only with the archive
    return Operations(context.archive)


async def read_upload(file: UploadFile | None) -> tuple[str, bytes]:
    """The upload's display name and bytes (bounded: the body limit stopped a larger request)."""
    if file is None or not file.filename:
        raise InputError("give a document: a multipart 'file'")
    return display_name(file.filename), await file.read()


async def accept(request: Request, user: User, file: UploadFile | None, archive: bool, repository: str | None = None,
                 author: str | None = None, title: str | None = None) -> Accepted:
    """Queue the upload (in the server's pool: the database write is off the event loop)."""
    label, data = await read_upload(file)
    context: WebContext = request.app.state.context
    ops = operations(request)
    return await context.pool.run(lambda: ops.accept(user, label, data, archive, repository, author, title))


@router.post("/submissions", summary="Submit a document to be checked (and archived)", status_code=202)
async def submit(
    request: Request, user: Submitter,
    file: Annotated[UploadFile | None, File(description="The document (any format coderiv reads)")] = None,
    archive: Annotated[bool, Form(description="Add it to the collection once checked")] = False,
    repository: Annotated[str | None, Form(description="all, archived or none: overrides the archive's repository mode")] = None,
    author: Annotated[str | None, Form(description="Who wrote it (default: the submitting user's name)")] = None,
    title: Annotated[str | None, Form(description="Its title")] = None,
) -> Accepted:
    """Queue the document; ``state`` is ``queued`` until a worker checks it (``checking``), then
    ``done`` or ``failed`` (with ``reason``)."""
    return await accept(request, user, file, archive, repository, author, title)


@router.get("/submissions", summary="The caller's submissions (an examiner's: all), newest first")
def list_submissions(
    request: Request, user: Submitter,
    page: Annotated[int, Query(ge=1)] = 1,
    per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE)] = 20,
    state: Annotated[str | None, Query(description="Only this state")] = None,
    decision: Annotated[str | None, Query(description="Only this decision")] = None,
) -> SubmissionPage:
    return operations(request).list_page(user, page, per_page, state, decision)


@router.get("/submissions/{submission_id}", summary="A submission: state, overall similarity, sources, checks")
def get_one(request: Request, user: Submitter, submission_id: str) -> SubmissionRecord:
    return operations(request).view(user, submission_id)


@router.get("/submissions/{submission_id}/report", summary="The submission's evidence report (HTML, or ?format=json)",
            response_class=HTMLResponse, responses={200: {"content": {"application/json": {"schema": REPORT_SCHEMA}}}})
def get_report(
    request: Request, user: Submitter, submission_id: str,
    format: Annotated[str, Query(pattern="^(html|json)$")] = "html",
    download: bool = False,
) -> Response:
    report = operations(request).report(user, submission_id, download, format)
    if format == "json":
        return Response(report.json, media_type="application/json")
    headers = {"Content-Security-Policy": REPORT_CSP, "X-Frame-Options": "SAMEORIGIN"}
    if download:
        headers["Content-Disposition"] = f'attachment; filename="coderiv-report-{report.submission_id}.html"'
    return HTMLResponse(report.html, headers=headers)


@router.post("/submissions/{submission_id}/decision", summary="An examiner's decision: open, cleared or misconduct")
def post_decision(
    request: Request, user: Examiner, submission_id: str,
    state: Annotated[str, Form(description="open, cleared or misconduct")],
    note: Annotated[str, Form(description="Why")] = "",
) -> SubmissionRecord:
    return operations(request).decide(user, submission_id, state, note)


@router.post("/submissions/{submission_id}/archive", summary="Add a checked submission to the collection")
def post_archive(request: Request, user: Examiner, submission_id: str) -> SubmissionRecord:
    """The writer adds it in its next batch (``archived_doc`` then names it in the index)."""
    return operations(request).request_archive(user, submission_id)


@router.post("/submissions/{submission_id}/recheck", summary="Check a submission again (on the collection as it is now)")
def post_recheck(request: Request, user: Examiner, submission_id: str) -> SubmissionRecord:
    """The submission is queued again; its earlier checks stay in its history, and the newest
    finished one gives ``overall``, ``sources`` and the report."""
    return operations(request).recheck(user, submission_id)


@router.get("/submissions/{submission_id}/export", summary="Everything stored about a submission (JSON)",
            response_model=SubmissionExport)
def get_export(request: Request, user: Submitter, submission_id: str) -> JSONResponse:
    body = operations(request).export(user, submission_id)
    return JSONResponse(body, headers={"Content-Disposition": f'attachment; filename="submission-{submission_id}.json"'})


@router.delete("/submissions/{submission_id}", summary="Delete a submission, its text and reports (and from the index)")
def delete_submission(request: Request, user: Examiner, submission_id: str) -> Deleted:
    return operations(request).delete(user, submission_id)


@router.get("/archive/document", summary="A collection document's matches over time, and which are new to the caller")
def get_document(request: Request, user: Examiner, id: Annotated[str, Query()]) -> DocumentMatches:
    return operations(request).document_matches(user, id)


@router.get("/audit", summary="The audit log, newest first (admins only)")
def get_audit(
    request: Request, user: Admin,
    target: Annotated[str | None, Query(description="Only entries about this submission, document or user")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> AuditLog:
    return operations(request).audit_log(user, target, limit)


@router.get("/users", summary="The users (admins only)")
def get_users(request: Request, user: Admin) -> UserList:
    return operations(request).users(user)


@router.post("/users", summary="Add a user; the answer holds its token, shown this once (admins only)")
def post_user(
    request: Request, user: Admin,
    name: Annotated[str, Form()],
    role: Annotated[str, Form(description=", ".join(Role))],
) -> UserAdded:
    return operations(request).add_user(user, name, role)


@router.delete("/users/{name}", summary="Revoke a user's token (admins only)")
def delete_user(request: Request, user: Admin, name: str) -> UserRevoked:
    return operations(request).revoke_user(user, name)
