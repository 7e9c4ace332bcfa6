"""The HTML pages: the check page (upload or paste), a check's results with a progress indicator
while verification runs, the collection, and a document's page. Jinja2 templates escape every
value; the only script is ``static/check.js`` (drag and drop, progress polling)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from coderiv.archive.states import Role, SubmissionState
from coderiv.errors import CoderivError
from coderiv.output import html_visible
from coderiv.pairs.methods import DEFAULT_METHOD, METHODS
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES
from coderiv.report import ReportOptions, render_html
from coderiv.web import views
from coderiv.web.checks import MAX_TOP, CheckOptions, CheckOutcome, has_report_store, rank, report
from coderiv.web.context import WebContext
from coderiv.web.inputs import check_options, request_document
from coderiv.web.jobs import Job
from coderiv.web.pool import Busy
from coderiv.web.snapshot import Snapshot

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.finalize = html_visible  # control characters of ids and names shown as escapes
TEMPLATES.env.globals.update(Role=Role, SubmissionState=SubmissionState)  # the archive's pages compare with these
router = APIRouter(include_in_schema=False)
log = logging.getLogger("coderiv.web")

#: The report page's own policy: its inline CSS/JS may run, sandboxed, framed by this server only.
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
    "frame-ancestors 'self'; sandbox allow-scripts"
)


def context(request: Request) -> WebContext:
    ctx: WebContext = request.app.state.context
    return ctx


def page(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    return TEMPLATES.TemplateResponse(request, template, values, status_code=status)


@router.get("/", response_class=HTMLResponse)
def check_page(request: Request) -> HTMLResponse:
    ctx = context(request)
    snapshot = ctx.snapshots.current()
    return page(
        request, "check.html", measures=MEASURES.names(), default_measure=DEFAULT_MEASURE, max_top=MAX_TOP,
        documents=snapshot.index.n_docs, generation=snapshot.generation, max_upload=ctx.settings.max_upload,
        defaults=ReportOptions(), report_ready=has_report_store(snapshot),
    )


def _report_in_background(ctx: WebContext, job: Job, snapshot: Snapshot) -> None:
    """Build the report on the generation that ranked (ranking and report never disagree on it)."""

    def work() -> None:
        try:
            report(snapshot, job.outcome, job.options, job.progress, job.at_stage)
            job.state = "done"
        except CoderivError as exc:  # shown on the page as one line
            job.error = str(exc)
            job.state = "failed"
        except Exception as exc:  # logged; the page names only its type
            log.exception("report of check %s failed", job.id)
            job.error = f"internal error ({type(exc).__name__}); the server log has the details"
            job.state = "failed"

    try:
        ctx.pool.submit(work)
    except Busy as exc:
        job.outcome.report_note = f"no report: {exc}"
        job.state = "done"


@router.post("/check")
async def start_check(
    request: Request,
    options: Annotated[CheckOptions, Depends(check_options)],
    file: Annotated[UploadFile | None, File()] = None,
    text: Annotated[str | None, Form()] = None,
    doc: Annotated[str | None, Form()] = None,
) -> Response:
    """Rank now (fast), build the report in the background, send the browser to the results."""
    ctx = context(request)
    document, options = await request_document(ctx, file, text, doc, options)

    def ranked() -> tuple[Snapshot, CheckOutcome]:
        snapshot = ctx.snapshots.current()
        return snapshot, rank(snapshot, document, options)

    snapshot, outcome = await ctx.pool.run(ranked)
    job = ctx.jobs.add(options, outcome)
    _report_in_background(ctx, job, snapshot)
    return RedirectResponse(f"/check/{job.id}", status_code=303)


def _job(request: Request, job_id: str) -> Job:
    job = context(request).jobs.get(job_id)
    if job is None:
        raise views.NotAvailable("no such check (checks are kept for an hour); start a new one")
    return job


@router.get("/check/{job_id}", response_class=HTMLResponse)
def results_page(request: Request, job_id: str) -> HTMLResponse:
    job = _job(request, job_id)
    sources: dict[str, Any] = {}  # doc id -> (its report source, whether it is the source itself or a version)
    if job.outcome.report is not None:
        for source in job.outcome.report.sources:
            sources[source.doc_id] = (source, True)
            sources.update({v.doc_id: (source, False) for v in source.versions})
    return page(request, "results.html", job=job, outcome=job.outcome, result=job.outcome.result, sources=sources)


@router.get("/check/{job_id}/report", response_class=HTMLResponse)
def report_page(request: Request, job_id: str, download: bool = False) -> HTMLResponse:
    """The evidence report as its own self-contained page (shown in a frame on the results page).

    Its inline script and styles are allowed by a CSP of its own that also sandboxes it: the page
    runs in an opaque origin, so it can read no cookie and call no API of this server."""
    job = _job(request, job_id)
    if job.outcome.report is None:
        raise views.NotAvailable(job.outcome.report_note or "the report is not ready yet")
    headers = {
        "Content-Security-Policy": REPORT_CSP,
        "X-Frame-Options": "SAMEORIGIN",
    }
    if download:
        headers["Content-Disposition"] = 'attachment; filename="coderiv-report.html"'
    if job.report_html is None:
        job.report_html = render_html(job.outcome.report)
    return HTMLResponse(job.report_html, headers=headers)


@router.get("/collection", response_class=HTMLResponse)
def collection_page(request: Request, q: Annotated[str, Query()] = "") -> HTMLResponse:
    snapshot = context(request).snapshots.current()
    found, total = views.search_ids(snapshot, q)
    return page(request, "collection.html", info=views.info(snapshot), q=q, found=found, total=total)


@router.get("/document", response_class=HTMLResponse)
def document_page(
    request: Request,
    id: Annotated[str, Query()],
    method: Annotated[str, Query()] = DEFAULT_METHOD,
    group_min: Annotated[float, Query(gt=0, le=100)] = views.DEFAULT_GROUP_MIN,
) -> HTMLResponse:
    record = views.document(context(request).snapshots.current(), id, method, group_min)
    return page(request, "document.html", doc=record, methods=sorted(METHODS))
