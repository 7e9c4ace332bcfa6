"""The API's documentation at ``/docs``, served from the package: Swagger UI 5's files (it
reads the OpenAPI 3.1 that FastAPI writes) as the ``fastapi-offline`` package ships them (MIT;
Swagger UI is Apache-2.0; part of ``coderiv[web]``; we use only its files) and a start-up script
of our own, so the page works without internet and under the same no-inline-script policy as the
other pages (FastAPI's default ``/docs`` loads Swagger UI from a CDN and is blank offline).
The description it shows is ``/openapi.json``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.params import Depends
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

#: Where the page and Swagger UI's files are served.
DOCS_PATH = "/docs"
OPENAPI_PATH = "/openapi.json"
ASSETS_PATH = "/docs/assets"

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}: API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{assets}/swagger-ui-bundle.js"></script>
<script src="/static/api-docs.js"></script>
</body>
</html>
"""


def add_api_docs(app: FastAPI, dependencies: Sequence[Depends]) -> None:
    """Serve the API documentation page, its files (from the package: no network) and the
    OpenAPI description; the page and the description need ``dependencies`` (who may read them)."""
    import fastapi_offline  # coderiv[web]

    assets = Path(fastapi_offline.__file__).parent / "static"
    app.mount(ASSETS_PATH, StaticFiles(directory=str(assets)), name="api-docs-assets")

    @app.get(DOCS_PATH, include_in_schema=False, dependencies=dependencies)
    async def api_docs() -> HTMLResponse:
        return HTMLResponse(PAGE.format(title=app.title, assets=ASSETS_PATH))

    @app.get(OPENAPI_PATH, include_in_schema=False, dependencies=dependencies)
    async def openapi() -> JSONResponse:
        description: dict[str, Any] = app.openapi()
        return JSONResponse(description)
