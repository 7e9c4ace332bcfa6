"""Turning a request's upload or pasted text into a query document, with the CLI's checks
(:func:`coderiv.text.reading.read_query_bytes`). Nothing from the request reaches the file
system: the upload is read into memory and its file name is only a label.

Nothing is extracted on the event loop: an uploaded file (the document or a template) is read in
a child process within the server's time and memory budget (:func:`coderiv.text.isolated.read_isolated`),
waited for by a thread of the bounded worker pool, and pasted text is read in that pool too; so a
hostile upload costs one worker and one child process, never the other requests."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Annotated

from fastapi import File, Form, Request, UploadFile

from coderiv.errors import InputError
from coderiv.ranking.measures import DEFAULT_MEASURE
from coderiv.report import ReportOptions
from coderiv.text.isolated import read_isolated
from coderiv.text.reading import QueryDocument, read_query_bytes
from coderiv.web.checks import MAX_TOP, CheckOptions, indexed_document
from coderiv.web.context import WebContext

PASTED_LABEL = "pasted text"


def display_name(filename: str | None) -> str:
    """The last component of an uploaded file's name (browsers may send a whole path)."""
    name = PurePosixPath((filename or "").replace("\\", "/")).name.strip()
    return name or "upload"


async def uploaded_document(ctx: WebContext, file: UploadFile) -> QueryDocument:
    """An uploaded file's visible text, read in a child process within the read budget."""
    label = display_name(file.filename)
    data = await file.read()  # bounded: the body limit stopped a larger request
    if not data:
        raise InputError(f"{label} is empty")
    max_bytes, budget = ctx.settings.max_upload, ctx.settings.read_budget
    markup = ctx.snapshots.current().index.markup  # read as the index read its documents
    return await ctx.pool.run(lambda: read_isolated(data, label, budget, max_bytes, markup))


async def query_document(ctx: WebContext, file: UploadFile | None, text: str | None) -> QueryDocument:
    """The query from an uploaded file, or else from pasted text; one-line errors otherwise
    (a document of the index as the query is :func:`coderiv.web.checks.indexed_document`)."""
    if file is not None and file.filename:
        return await uploaded_document(ctx, file)
    if text is not None and text.strip():
        data, max_bytes = text.encode("utf-8"), ctx.settings.max_upload
        return await ctx.pool.run(lambda: read_query_bytes(data, PASTED_LABEL, max_bytes))
    raise InputError("give a document: upload a file or paste its text")


async def check_options(
    request: Request,
    measure: Annotated[str, Form(description="Ranking measure (SPEC §3)")] = DEFAULT_MEASURE,
    top: Annotated[int, Form(description=f"Matches, and report candidates per search (1 to {MAX_TOP})")] = 10,
    quotes: Annotated[bool, Form(description="Report: exclude quoted text and block quotes")] = True,
    bibliography: Annotated[bool, Form(description="Report: exclude the bibliography")] = True,
    min_words: Annotated[int, Form(description="Report: exclude matches of fewer words (0: keep all)")] = ReportOptions.min_words,
    common: Annotated[str, Form(description="Report: exclude passages found in more than this many documents (empty: off)")] = "",
    versions: Annotated[bool, Form(description="Report: group versions of one source")] = True,
    template: Annotated[UploadFile | None, File(description="Report: a template whose text is not counted")] = None,
) -> CheckOptions:
    """The check's options from the form fields (shared by the page and the API)."""
    templates: tuple[tuple[str, str], ...] = ()
    if template is not None and template.filename:
        ctx: WebContext = request.app.state.context
        templates = ((display_name(template.filename), (await uploaded_document(ctx, template)).text),)
    common_docs = None
    if common.strip():
        if not common.strip().isdigit():
            raise InputError(f"common must be a number of documents (got {common!r})")
        common_docs = int(common)
    return CheckOptions(
        measure, top, exclude_quotes=quotes, exclude_bibliography=bibliography, min_words=min_words,
        common_docs=common_docs, group_versions=versions, templates=templates,
    )


@dataclass(frozen=True)
class DocumentFields:
    """The fields of a JSON API request that name its document: an upload, pasted text, or a
    document of the index."""

    file: UploadFile | None
    text: str | None
    doc: str | None


def document_fields(
    file: Annotated[UploadFile | None, File(description="The document (text or HTML)")] = None,
    text: Annotated[str | None, Form(description="The document's text, when no file is sent")] = None,
    doc: Annotated[str | None, Form(description="A document of the index as the query (instead of file or text)")] = None,
) -> DocumentFields:
    """The document fields of ``/api/check`` and ``/api/report`` (a FastAPI dependency: the form
    fields are declared once for both)."""
    return DocumentFields(file, text, doc)


async def request_document(
    ctx: WebContext, file: UploadFile | None, text: str | None, doc: str | None, options: CheckOptions
) -> tuple[QueryDocument, CheckOptions]:
    """The query of a request: a document of the index named by ``doc`` (read in the worker
    pool, and never its own source in the report), else the upload or the pasted text."""
    if doc:
        document = await ctx.pool.run(lambda: indexed_document(ctx.snapshots.current(), doc))
        return document, replace(options, exclude_docs=(*options.exclude_docs, doc))
    return await query_document(ctx, file, text), options
