"""The ASGI application: :func:`create_app` wires the pages, the JSON API, the static files, the
error pages and the safety middleware around one index folder.

Errors are one line, as a page or as ``{"error": "..."}`` on ``/api``: bad input 400, an id or
pair table that is not there 404, an upload over the limit 413, a busy server 503 with
``Retry-After``, no usable index 503, the archive's database not answering 503 with
``Retry-After``; anything unexpected is logged and answered with a 500
that shows no traceback.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from coderiv._version import __version__
from coderiv.archive.states import Role
from coderiv.errors import CoderivError, CorruptIndexError, ForbiddenError, IndexNotFoundError, NotFoundError
from coderiv.web import api, pages
from coderiv.web.api_docs import add_api_docs
from coderiv.web.auth import AnonymousBodies, TokenCookie, Unauthorized, require
from coderiv.web.context import ServeSettings, WebContext
from coderiv.web.pool import RETRY_AFTER, Busy
from coderiv.web.security import BodyLimit, HostCheck, SameOrigin, SecurityHeaders, wants_json

log = logging.getLogger("coderiv.web")

#: The paths a learning platform's page posts to from its own site (web.lti_routes).
LTI_CROSS_SITE = ("/lti/login", "/lti/launch")
#: Multipart overhead allowed beyond the upload limit (field names, boundaries, other fields).
FORM_OVERHEAD = 64 * 1024


def _status(exc: CoderivError) -> int:
    if isinstance(exc, Unauthorized):
        return 401
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ForbiddenError):
        return 403
    if isinstance(exc, (Busy, IndexNotFoundError, CorruptIndexError)):
        return 503
    return 400


def error(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """A one-line error: JSON for the API (:func:`~coderiv.web.security.wants_json`), an error page elsewhere."""
    if wants_json(request.url.path):
        return JSONResponse({"error": message}, status_code=status, headers=headers)
    response = pages.page(request, "error.html", status=status, status_code=status, message=message)
    response.headers.update(headers or {})
    return response


def _one_line(exc: RequestValidationError) -> str:
    problems = []
    for item in exc.errors():
        where = ".".join(str(part) for part in item.get("loc", ()) if part not in ("body", "query"))
        problems.append(f"{where}: {item.get('msg', 'invalid')}" if where else str(item.get("msg", "invalid")))
    return "; ".join(problems) or "invalid request"


def create_app(settings: ServeSettings) -> FastAPI:
    """The web application serving the index at ``settings.index_dir``."""
    context = WebContext.create(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if context.archive is not None:
            context.archive.start()
        yield
        if context.archive is not None:
            context.archive.stop()
        context.pool.shutdown()

    # two files: the document and a template (a browser sends an empty part for an unused file field)
    app = FastAPI(
        title="coderiv",
        version=__version__,
        description=(
            "Find the coderivatives of a document (versions, revisions, mirrors, plagiarisms) in an "
            "indexed collection. Every percentage is absolute: the document scored against itself is 100%."
        ),
        lifespan=lifespan,
        docs_url=None,  # served from the package by web.api_docs (FastAPI's loads from a CDN)
        redoc_url=None,
        openapi_url=None,  # served by web.api_docs too, behind the same authorisation as every route
        form_limits={"max_files": 2, "max_fields": 16, "max_part_size": settings.max_upload},
    )
    app.state.context = context
    # the index's pages and API: an examiner's on an archive (a token's on a server with one)
    examiner = [Depends(require(Role.EXAMINER))]
    app.include_router(pages.router, dependencies=examiner)
    app.include_router(api.router, dependencies=examiner)
    if context.archive is not None:
        from coderiv.web import archive_api, archive_pages, lti_routes

        app.include_router(archive_api.router)
        app.include_router(archive_pages.router)
        app.include_router(lti_routes.router)
    app.mount("/static", StaticFiles(directory=str(Path(__file__).parent / "static")), name="static")
    add_api_docs(app, [Depends(require(Role.SUBMITTER))])

    @app.exception_handler(CoderivError)
    async def coderiv_error(request: Request, exc: CoderivError) -> Response:
        status = _status(exc)
        headers = {"Retry-After": str(RETRY_AFTER)} if isinstance(exc, Busy) else None
        if isinstance(exc, Unauthorized):
            headers = {"WWW-Authenticate": 'Bearer realm="coderiv"'}
        return error(request, status, str(exc), headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return error(request, exc.status_code, str(exc.detail), dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return error(request, 422, _one_line(exc))

    if context.archive is not None:
        from coderiv.archive.db import OUTAGE_RETRY_AFTER, OUTAGES

        async def database_down(request: Request, exc: Exception) -> Response:
            log.warning("the archive's database did not answer on %s: %s", request.url.path, type(exc).__name__)
            return error(request, 503, "the archive's database does not answer; try again in a few seconds",
                         {"Retry-After": str(OUTAGE_RETRY_AFTER)})

        for outage in OUTAGES:
            app.add_exception_handler(outage, database_down)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s", request.url.path)
        return error(request, 500, f"internal error ({type(exc).__name__}); the server log has the details")

    # the last added is the outermost: headers on every answer, hosts and origins checked first
    app.add_middleware(BodyLimit, limit=settings.max_upload + FORM_OVERHEAD)
    app.add_middleware(TokenCookie)  # the cookie for a token given once in ?token= (web.auth)
    if context.archive is not None or settings.token:  # no anonymous upload is read (web.auth.AnonymousBodies)
        why = "this archive needs a user's token" if context.archive is not None else "this server needs a token"
        app.add_middleware(AnonymousBodies, why=why, public=LTI_CROSS_SITE if context.archive is not None else ())
    # no cross-site form posts, token or not (but the LTI launch, signed by the platform)
    app.add_middleware(SameOrigin, exempt=LTI_CROSS_SITE if context.archive is not None else ())
    if settings.hosts is not None:
        app.add_middleware(HostCheck, allowed=settings.hosts)
    app.add_middleware(SecurityHeaders)
    return app
