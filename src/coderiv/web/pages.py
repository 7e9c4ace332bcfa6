"""The HTML pages: the check page (upload or paste), a check's results with a progress indicator
while verification runs, the collection, and a document's page. Jinja2 templates escape every
value; the only script is ``static/check.js`` (drag and drop, progress polling)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from coderiv.pairs.engine import DEFAULT_METHOD, METHODS
from coderiv.ranking.measures import DEFAULT_MEASURE, MEASURES
from coderiv.web import views
from coderiv.web.checks import MAX_TOP, CheckOptions, rank, verify
from coderiv.web.context import WebContext
from coderiv.web.inputs import query_document
from coderiv.web.jobs import Job
from coderiv.web.pool import Busy

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
router = APIRouter(include_in_schema=False)


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
    )


def _verify_in_background(ctx: WebContext, job: Job) -> None:
    def work() -> None:
        try:
            verify(ctx.snapshots.current(), job.outcome, job.progress)
            job.state = "done"
        except Exception as exc:  # shown on the page as one line; the server keeps running
            job.error = str(exc) or type(exc).__name__
            job.state = "failed"

    try:
        ctx.pool.submit(work)
    except Busy as exc:
        job.outcome.verify_note = f"not verified: {exc}"
        job.state = "done"


@router.post("/check")
async def start_check(
    request: Request,
    file: Annotated[UploadFile | None, File()] = None,
    text: Annotated[str | None, Form()] = None,
    measure: Annotated[str, Form()] = DEFAULT_MEASURE,
    top: Annotated[int, Form()] = 10,
) -> Response:
    """Rank now (fast), verify in the background, and send the browser to the results page."""
    ctx = context(request)
    options = CheckOptions(measure, top, verify=True)
    document = await query_document(file, text, ctx.settings.max_upload)
    outcome = await ctx.pool.run(lambda: rank(ctx.snapshots.current(), document, options))
    job = ctx.jobs.add(options, outcome)
    _verify_in_background(ctx, job)
    return RedirectResponse(f"/check/{job.id}", status_code=303)


@router.get("/check/{job_id}", response_class=HTMLResponse)
def results_page(request: Request, job_id: str) -> HTMLResponse:
    job = context(request).jobs.get(job_id)
    if job is None:
        raise views.NotAvailable("no such check (checks are kept for an hour); start a new one")
    return page(request, "results.html", job=job, outcome=job.outcome, result=job.outcome.result)


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
