"""The archive's JSON API (``coderiv serve --archive``; docs/archive.md), described at ``/docs``:
submit a document to be checked, follow it, read its report, list one's submissions; examiners
decide, archive, export and delete; admins manage users. Every request carries a user's token
(:mod:`coderiv.web.archive_auth`); a submitter sees only their own submissions, and another's
id answers 404 exactly as an id that does not exist."""

from __future__ import annotations

import hashlib
import json
from pathlib import PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.security import HTTPBearer
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from coderiv.archive import audit
from coderiv.archive.models import DECISIONS, ROLES, Check, Decision, DocumentMatch, DocumentView, Submission, User, now
from coderiv.archive.retention import delete, export
from coderiv.archive.service import Archive, find, visible
from coderiv.archive.users import add_user, list_users, revoke_user
from coderiv.archive.writer import collection_folder
from coderiv.errors import InputError
from coderiv.web.context import WebContext
from coderiv.web.inputs import display_name
from coderiv.web.views import Forbidden, NotAvailable

#: Declares the Bearer token in the OpenAPI description (/docs gets its "Authorize" button); the
#: token itself is checked by :class:`coderiv.web.archive_auth.UserAuth` before any route runs.
BEARER = HTTPBearer(auto_error=False, description="A user's token (coderiv users add NAME --role ROLE)")
router = APIRouter(prefix="/api", tags=["archive"], dependencies=[Depends(BEARER)])

#: The report page's own policy (as the check page's report): sandboxed, framed by this server only.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "frame-ancestors 'self'; sandbox allow-scripts"
)
MAX_PER_PAGE = 100


def archive_of(request: Request) -> Archive:
    ctx: WebContext = request.app.state.context
    assert ctx.archive is not None
    archive: Archive = ctx.archive
    return archive


def user_of(request: Request) -> User:
    user: User = request.state.user
    return user


def need_examiner(user: User) -> None:
    if user.role not in ("examiner", "admin"):
        raise Forbidden(f"a {user.role} may not do this; an examiner may")


def get_submission(session: Session, user: User, submission_id: str) -> Submission:
    """The submission, if ``user`` may see it; otherwise 404, the same as for an unknown id."""
    submission = find(session, user, submission_id)
    if submission is None:
        raise NotAvailable(f"no submission {submission_id!r}")
    return submission


def last_check(submission: Submission) -> Check | None:
    done = [c for c in submission.checks if c.state == "done"]
    return done[-1] if done else None


def summary(submission: Submission) -> dict[str, Any]:
    """A submission as the list shows it."""
    return {
        "id": submission.id, "state": submission.state, "reason": submission.reason, "filename": submission.filename,
        "created": submission.created.isoformat(timespec="seconds") + "Z", "user": submission.user.name,
        "overall": submission.overall, "top_source": submission.top_source, "decision": submission.decision,
        "archived_doc": submission.archived_doc,
    }


def record(submission: Submission) -> dict[str, Any]:
    """A submission in full: its summary, the report's sources, its checks and decisions."""
    body = summary(submission)
    check = last_check(submission)
    report = json.loads(check.report_json) if check is not None and check.report_json else None
    body.update(
        format=submission.format, size=submission.size, sha256=submission.sha256, attempts=submission.attempts,
        archive_requested=submission.archive_requested, archive_error=submission.archive_error,
        sources=[{"doc_id": s["doc_id"], "share": s["share"]} for s in report["sources"]] if report else [],
        report_url=f"/api/submissions/{submission.id}/report" if report else None,
        generation=check.generation if check is not None else None,
        checks=[{"started": c.started.isoformat(timespec="seconds") + "Z", "state": c.state, "worker": c.worker,
                 "generation": c.generation, "overall": c.overall, "reason": c.reason} for c in submission.checks],
        decisions=[{"at": d.created.isoformat(timespec="seconds") + "Z", "by": d.user.name, "state": d.state,
                    "note": d.note} for d in submission.decisions],
    )
    return body


def format_of(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower().lstrip(".")
    return suffix[:16] or "text"


async def accept(request: Request, file: UploadFile | None, archive: bool) -> Submission:
    """Queue the upload as it is (committed before the answer: nothing accepted is lost); a
    worker reads it, in a child process within the check page's budget, before checking it."""
    ctx: WebContext = request.app.state.context
    if file is None or not file.filename:
        raise InputError("give a document: a multipart 'file'")
    label = display_name(file.filename)
    data = await file.read()  # bounded: the body limit stopped a larger request
    if not data:
        raise InputError(f"{label} is empty")
    user = user_of(request)
    store = archive_of(request)

    def add() -> Submission:
        with store.database.session() as session:
            submission = Submission(
                user_id=user.id, filename=label, format=format_of(label), size=len(data),
                sha256=hashlib.sha256(data).hexdigest(), text="", upload=data, state="queued", attempts=0,
                decision="open", archive_requested=archive or store.settings.archive_all)
            session.add(submission)
            session.flush()
            audit.record(session, user, "submit", submission.id, label)
            return submission

    return await ctx.pool.run(add)


@router.post("/submissions", summary="Submit a document to be checked (and archived)", status_code=202)
async def submit(
    request: Request,
    file: Annotated[UploadFile | None, File(description="The document (any format coderiv reads)")] = None,
    archive: Annotated[bool, Form(description="Add it to the collection once checked")] = False,
) -> dict[str, str]:
    """Queue the document; ``state`` is ``queued`` until a worker checks it (``checking``), then
    ``done`` or ``failed`` (with ``reason``)."""
    submission = await accept(request, file, archive)
    return {"id": submission.id, "state": submission.state}


@router.get("/submissions", summary="The caller's submissions (an examiner's: all), newest first")
def list_submissions(
    request: Request,
    page: Annotated[int, Query(ge=1)] = 1,
    per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE)] = 20,
    state: Annotated[str | None, Query(description="Only this state")] = None,
    decision: Annotated[str | None, Query(description="Only this decision")] = None,
) -> dict[str, Any]:
    user = user_of(request)
    with archive_of(request).database.session() as session:
        query = visible(user, state, decision)
        total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
        rows = session.scalars(query.order_by(Submission.created.desc(), Submission.id).offset((page - 1) * per_page).limit(per_page))
        return {"page": page, "per_page": per_page, "total": total, "submissions": [summary(s) for s in rows]}


@router.get("/submissions/{submission_id}", summary="A submission: state, overall similarity, sources, checks")
def get_one(request: Request, submission_id: str) -> dict[str, Any]:
    user = user_of(request)
    with archive_of(request).database.session() as session:
        submission = get_submission(session, user, submission_id)
        audit.record(session, user, "view", submission.id)
        return record(submission)


@router.get("/submissions/{submission_id}/report", summary="The submission's evidence report (HTML, or ?format=json)",
            response_class=HTMLResponse)
def get_report(
    request: Request, submission_id: str,
    format: Annotated[str, Query(pattern="^(html|json)$")] = "html",
    download: bool = False,
) -> Response:
    user = user_of(request)
    with archive_of(request).database.session() as session:
        submission = get_submission(session, user, submission_id)
        check = last_check(submission)
        if check is None or check.report_json is None or check.report_html is None:
            raise NotAvailable(f"submission {submission_id} has no report yet (state: {submission.state})")
        audit.record(session, user, "download" if download else "report", submission.id, format)
        if format == "json":
            return Response(check.report_json, media_type="application/json")
        headers = {"Content-Security-Policy": REPORT_CSP, "X-Frame-Options": "SAMEORIGIN"}
        if download:
            headers["Content-Disposition"] = f'attachment; filename="coderiv-report-{submission.id}.html"'
        return HTMLResponse(check.report_html, headers=headers)


def decide(request: Request, submission_id: str, state: str, note: str) -> dict[str, Any]:
    user = user_of(request)
    need_examiner(user)
    if state not in DECISIONS:
        raise InputError(f"the decision must be one of {', '.join(DECISIONS)} (got {state!r})")
    with archive_of(request).database.session() as session:
        submission = get_submission(session, user, submission_id)
        session.add(Decision(submission_id=submission.id, user_id=user.id, state=state, note=note))
        submission.decision = state
        audit.record(session, user, "decide", submission.id, f"{state}: {note}")
        session.flush()
        session.refresh(submission)
        return record(submission)


@router.post("/submissions/{submission_id}/decision", summary="An examiner's decision: open, cleared or misconduct")
def post_decision(
    request: Request, submission_id: str,
    state: Annotated[str, Form(description="open, cleared or misconduct")],
    note: Annotated[str, Form(description="Why")] = "",
) -> dict[str, Any]:
    return decide(request, submission_id, state, note)


def request_archive(request: Request, submission_id: str) -> dict[str, Any]:
    user = user_of(request)
    need_examiner(user)
    store = archive_of(request)
    with store.database.session() as session:
        submission = get_submission(session, user, submission_id)
        if submission.state == "failed":
            raise InputError(f"submission {submission_id} failed its check ({submission.reason}); only a checked one is archived")
        submission.archive_requested = True
        audit.record(session, user, "archive", submission.id)
        body = record(submission)
    store.writer.wake()
    return body


@router.post("/submissions/{submission_id}/archive", summary="Add a checked submission to the collection")
def post_archive(request: Request, submission_id: str) -> dict[str, Any]:
    """The writer adds it in its next batch (``archived_doc`` then names it in the index)."""
    return request_archive(request, submission_id)


def request_recheck(request: Request, submission_id: str) -> dict[str, Any]:
    user = user_of(request)
    need_examiner(user)
    with archive_of(request).database.session() as session:
        submission = get_submission(session, user, submission_id)
        if submission.state in ("queued", "checking"):
            raise InputError(f"submission {submission_id} is {submission.state} already")
        submission.state, submission.reason, submission.lease_until, submission.attempts = "queued", None, None, 0
        audit.record(session, user, "recheck", submission.id)
        return record(submission)


@router.post("/submissions/{submission_id}/recheck", summary="Check a submission again (on the collection as it is now)")
def post_recheck(request: Request, submission_id: str) -> dict[str, Any]:
    """The submission is queued again; its earlier checks stay in its history, and the newest
    finished one gives ``overall``, ``sources`` and the report."""
    return request_recheck(request, submission_id)


@router.get("/submissions/{submission_id}/export", summary="Everything stored about a submission (JSON)")
def get_export(request: Request, submission_id: str) -> JSONResponse:
    user = user_of(request)
    with archive_of(request).database.session() as session:
        submission = get_submission(session, user, submission_id)
        audit.record(session, user, "export", submission.id)
        session.flush()
        body = export(session, submission)
    return JSONResponse(body, headers={"Content-Disposition": f'attachment; filename="submission-{submission_id}.json"'})


def remove(request: Request, submission_id: str) -> None:
    user = user_of(request)
    need_examiner(user)
    store = archive_of(request)
    with store.database.session() as session:
        submission = get_submission(session, user, submission_id)
        folder = collection_folder(store.index_dir) if submission.archived_doc else None
        archived = delete(session, submission, user, folder)
    if archived:
        store.writer.run_once(reindex=True)  # the index forgets the removed file now


@router.delete("/submissions/{submission_id}", summary="Delete a submission, its text and reports (and from the index)")
def delete_submission(request: Request, submission_id: str) -> dict[str, str]:
    remove(request, submission_id)
    return {"id": submission_id, "state": "deleted"}


def document_matches(request: Request, doc_id: str) -> dict[str, Any]:
    """An archive document's matches over time, each marked new if found since the user last
    looked (then the look is recorded)."""
    user = user_of(request)
    with archive_of(request).database.session() as session:
        view = session.scalar(select(DocumentView).where(DocumentView.user_id == user.id, DocumentView.doc == doc_id))
        seen = view.seen if view is not None else None
        matches = session.scalars(select(DocumentMatch).where(DocumentMatch.doc == doc_id)
                                  .order_by(DocumentMatch.found.desc(), DocumentMatch.percent.desc()))
        rows = [{"doc_id": m.match, "percent": m.percent, "found": m.found.isoformat(timespec="seconds") + "Z",
                 "new": seen is None or m.found > seen} for m in matches]
        if view is None:
            session.add(DocumentView(user_id=user.id, doc=doc_id, seen=now()))
        else:
            view.seen = now()
        audit.record(session, user, "view", doc_id)
        return {"doc_id": doc_id, "last_seen": seen.isoformat(timespec="seconds") + "Z" if seen else None, "matches": rows}


@router.get("/archive/document", summary="A collection document's matches over time, and which are new to the caller")
def get_document(request: Request, id: Annotated[str, Query()]) -> dict[str, Any]:
    return document_matches(request, id)


@router.get("/audit", summary="The audit log, newest first (admins only)")
def get_audit(
    request: Request,
    target: Annotated[str | None, Query(description="Only entries about this submission, document or user")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> dict[str, Any]:
    with archive_of(request).database.session() as session:
        return {"entries": [
            {"at": e.at.isoformat(timespec="seconds") + "Z", "user": e.user_name, "action": e.action, "target": e.target,
             "detail": e.detail} for e in audit.entries(session, target, limit)]}


@router.get("/users", summary="The users (admins only)")
def get_users(request: Request) -> dict[str, Any]:
    with archive_of(request).database.session() as session:
        return {"users": [{"name": u.name, "role": u.role, "revoked": u.revoked is not None} for u in list_users(session)]}


@router.post("/users", summary="Add a user; the answer holds its token, shown this once (admins only)")
def post_user(
    request: Request,
    name: Annotated[str, Form()],
    role: Annotated[str, Form(description=", ".join(ROLES))],
) -> dict[str, str]:
    with archive_of(request).database.session() as session:
        token = add_user(session, name, role)
        audit.record(session, user_of(request), "user-add", name, role)
    return {"name": name, "role": role, "token": token}


@router.delete("/users/{name}", summary="Revoke a user's token (admins only)")
def delete_user(request: Request, name: str) -> dict[str, str]:
    with archive_of(request).database.session() as session:
        revoke_user(session, name)
        audit.record(session, user_of(request), "user-revoke", name)
    return {"name": name, "state": "revoked"}
