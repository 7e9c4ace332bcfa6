"""The JSON API (described at ``/docs`` and ``/openapi.json``): check a document, follow a check,
read the collection's information, documents, similar documents and groups."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import JSONResponse

from coderiv.errors import CoderivError
from coderiv.pairs.methods import DEFAULT_METHOD
from coderiv.web import views
from coderiv.web.checks import CheckOptions, run_check, run_report
from coderiv.web.context import WebContext
from coderiv.web.inputs import DocumentFields, check_options, document_fields, request_document

router = APIRouter(prefix="/api", tags=["api"])


def context(request: Request) -> WebContext:
    ctx: WebContext = request.app.state.context
    return ctx


@router.post("/check", summary="Rank the collection against a document")
async def check(
    request: Request,
    options: Annotated[CheckOptions, Depends(check_options)],
    fields: Annotated[DocumentFields, Depends(document_fields)],
    verify: Annotated[bool, Form(description="Verify the matches with aligned passages")] = True,
) -> dict[str, Any]:
    """Rank the collection against the document (absolute percentages: the document scored
    against itself is 100%) and, with ``verify``, give each match the aligned passages it shares
    with the document and the share of the document they cover (``verified``, percent). The
    report fields of the form do not apply here (see ``/api/report``)."""
    ctx = context(request)
    options = replace(options, verify=verify)
    document, options = await request_document(ctx, fields.file, fields.text, fields.doc, options)
    outcome = await ctx.pool.run(lambda: run_check(ctx.snapshots.current(), document, options))
    return outcome.to_dict()


@router.post("/report", summary="The evidence report of a document (docs/report.md)")
async def report(
    request: Request,
    options: Annotated[CheckOptions, Depends(check_options)],
    fields: Annotated[DocumentFields, Depends(document_fields)],
    include_texts: Annotated[bool, Form(description="Add the document's and every source's visible text")] = False,
) -> dict[str, Any]:
    """The report's JSON form, as ``coderiv report --format json`` writes it: the overall
    similarity (share of the document's words found in any source), the sources with their
    shares, passages (character offsets) and the exclusions. Needs the index's chunk store."""
    ctx = context(request)
    document, options = await request_document(ctx, fields.file, fields.text, fields.doc, options)
    built = await ctx.pool.run(lambda: run_report(ctx.snapshots.current(), document, options))
    return built.to_dict(include_texts)


@router.get("/checks/{job_id}", summary="State of a check started from the web page")
async def check_status(request: Request, job_id: str) -> JSONResponse:
    """``state`` is ``verifying`` (with ``done`` of ``total`` candidates), ``done`` (with the
    result) or ``failed`` (with the error)."""
    job = context(request).jobs.get(job_id)
    if job is None:
        return JSONResponse({"error": "no such check (it may have expired)"}, status_code=404)
    status = job.status()
    if job.state == "done":
        status["result"] = job.outcome.to_dict()
    return JSONResponse(status)


@router.get("/info", summary="The index: statistics, analysis settings, pair tables")
def info(request: Request) -> dict[str, Any]:
    ctx = context(request)
    return views.info(ctx.snapshots.current())


@router.get("/documents", summary="Document ids containing a string")
def documents(
    request: Request,
    q: Annotated[str, Query(description="Part of a document id (case-insensitive)")] = "",
    limit: Annotated[int, Query(ge=1, le=views.MAX_SEARCH_RESULTS)] = 50,
) -> dict[str, Any]:
    found, total = views.search_ids(context(request).snapshots.current(), q, limit)
    return {"query": q, "total": total, "doc_ids": found}


@router.get("/document", summary="A document, its stored most similar documents and its group")
def document(
    request: Request,
    id: Annotated[str, Query(description="The document id, as the index has it")],
    method: Annotated[str, Query(description="Pair table method")] = DEFAULT_METHOD,
    group_min: Annotated[float, Query(gt=0, le=100, description="Group link threshold (percent)")] = views.DEFAULT_GROUP_MIN,
) -> dict[str, Any]:
    return views.document(context(request).snapshots.current(), id, method, group_min)


@router.get("/groups", summary="Groups of coderivative documents")
def groups(
    request: Request,
    method: Annotated[str, Query(description="Pair table method")] = DEFAULT_METHOD,
    min: Annotated[float, Query(gt=0, le=100, description="Link threshold (percent)")] = views.DEFAULT_GROUP_MIN,
    one_way: Annotated[bool, Query(description="Link when either document reaches min (default: both must)")] = False,
) -> dict[str, Any]:
    snapshot = context(request).snapshots.current()
    try:
        found = snapshot.groups(method, min, mutual=not one_way)
    except CoderivError as exc:
        raise views.NotAvailable(str(exc)) from None
    return {"method": method, "min": min, "mutual": not one_way, "groups": [g.to_dict() for g in found]}
