"""The archive's pages (``coderiv serve --archive``): the submissions list with filters and an
upload form, a submission's page (its report in the sandboxed frame, its checks, the decision
form) and an archive document's page (its matches over time, what is new since the user last
looked). Forms post to these pages (same-origin only, :class:`~coderiv.web.security.SameOrigin`);
a page waiting for a check refreshes itself (no script). Each route, as the API's, only parses,
authorises (:func:`coderiv.web.auth.signed_in`) and answers what
:class:`coderiv.archive.operations.Operations` returns."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from coderiv.archive.states import DecisionState, SubmissionState
from coderiv.web.archive_api import Examiner, Submitter, accept, operations
from coderiv.web.pages import page

router = APIRouter(include_in_schema=False)


@router.get("/submissions", response_class=HTMLResponse)
def submissions_page(
    request: Request, user: Submitter, state: Annotated[str, Query()] = "", decision: Annotated[str, Query()] = "",
) -> HTMLResponse:
    rows = operations(request).records(user, state or None, decision or None)
    return page(request, "submissions.html", user=user, rows=rows, states=list(SubmissionState),
                decisions=list(DecisionState), state=state, decision=decision)


@router.post("/submissions")
async def submit_form(
    request: Request, user: Submitter,
    file: Annotated[UploadFile | None, File()] = None,
    archive: Annotated[bool, Form()] = False,
    author: Annotated[str, Form()] = "",
    title: Annotated[str, Form()] = "",
) -> Response:
    accepted = await accept(request, user, file, archive, None, author, title)
    return RedirectResponse(f"/submissions/{accepted.id}", status_code=303)


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(request: Request, user: Submitter, submission_id: str) -> HTMLResponse:
    body = operations(request).view(user, submission_id)
    return page(request, "submission.html", user=user, s=body, decisions=list(DecisionState))


@router.post("/submissions/{submission_id}/decision")
def decision_form(
    request: Request, user: Examiner, submission_id: str, state: Annotated[str, Form()], note: Annotated[str, Form()] = "",
) -> Response:
    operations(request).decide(user, submission_id, state, note)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


@router.post("/submissions/{submission_id}/archive")
def archive_form(request: Request, user: Examiner, submission_id: str) -> Response:
    operations(request).request_archive(user, submission_id)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


@router.post("/submissions/{submission_id}/recheck")
def recheck_form(request: Request, user: Examiner, submission_id: str) -> Response:
    operations(request).recheck(user, submission_id)
    return RedirectResponse(f"/submissions/{submission_id}", status_code=303)


@router.post("/submissions/{submission_id}/delete")
def delete_form(request: Request, user: Examiner, submission_id: str) -> Response:
    operations(request).delete(user, submission_id)
    return RedirectResponse("/submissions", status_code=303)


@router.get("/archive/document", response_class=HTMLResponse)
def archive_document_page(request: Request, user: Examiner, id: Annotated[str, Query()]) -> HTMLResponse:
    return page(request, "archive_document.html", user=user, doc=operations(request).document_matches(user, id))
