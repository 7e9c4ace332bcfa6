"""The archive's pages (``coderiv serve --archive``): the submissions list with filters and an
upload form, a submission's page (its report in the sandboxed frame, its checks, the decision
form) and an archive document's page (its matches over time, what is new since the user last
looked). Forms post to these pages (same-origin only, :class:`~coderiv.web.security.SameOrigin`);
a page waiting for a check refreshes itself (no script)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from coderiv.archive import audit
from coderiv.archive.models import DECISIONS, STATES, Submission
from coderiv.archive.service import visible
from coderiv.web.archive_api import (
    accept,
    archive_of,
    decide,
    document_matches,
    get_submission,
    record,
    remove,
    request_archive,
    request_recheck,
    user_of,
)
from coderiv.web.pages import page

router = APIRouter(include_in_schema=False)


@router.get("/submissions", response_class=HTMLResponse)
def submissions_page(
    request: Request, state: Annotated[str, Query()] = "", decision: Annotated[str, Query()] = "",
) -> HTMLResponse:
    user = user_of(request)
    with archive_of(request).database.session() as session:
        query = visible(user, state, decision)
        rows = [record(s) for s in session.scalars(query.order_by(Submission.created.desc()).limit(500))]
    return page(request, "submissions.html", user=user, rows=rows, states=STATES, decisions=DECISIONS,
                state=state, decision=decision)


@router.post("/submissions")
async def submit_form(
    request: Request,
    file: Annotated[UploadFile | None, File()] = None,
    archive: Annotated[bool, Form()] = False,
) -> Response:
    submission = await accept(request, file, archive)
    return RedirectResponse(f"/submissions/{submission.id}", status_code=303)


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(request: Request, submission_id: str) -> HTMLResponse:
    user = user_of(request)
    with archive_of(request).database.session() as session:
        submission = get_submission(session, user, submission_id)
        audit.record(session, user, "view", submission.id)
        body = record(submission)
    return page(request, "submission.html", user=user, s=body, decisions=DECISIONS)


@router.post("/submissions/{submission_id}/decision")
def decision_form(
    request: Request, submission_id: str, state: Annotated[str, Form()], note: Annotated[str, Form()] = "",
) -> Response:
    decide(request, submission_id, state, note)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


@router.post("/submissions/{submission_id}/archive")
def archive_form(request: Request, submission_id: str) -> Response:
    request_archive(request, submission_id)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


@router.post("/submissions/{submission_id}/recheck")
def recheck_form(request: Request, submission_id: str) -> Response:
    request_recheck(request, submission_id)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


@router.post("/submissions/{submission_id}/delete")
def delete_form(request: Request, submission_id: str) -> Response:
    remove(request, submission_id)
    return RedirectResponse("/submissions", status_code=303)


@router.get("/archive/document", response_class=HTMLResponse)
def archive_document_page(request: Request, id: Annotated[str, Query()]) -> HTMLResponse:
    return page(request, "archive_document.html", user=user_of(request), doc=document_matches(request, id))
