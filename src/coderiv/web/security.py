"""ASGI middleware that keeps the server safe by default: a body size limit, host and origin
checks, and security headers on every response (who may ask is :mod:`coderiv.web.auth`).

Written as plain ASGI (not per-route code) so that no route can forget them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from starlette.exceptions import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Pages of the app: scripts and styles from this server only, no framing, no plugins.
STRICT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-src 'self'; frame-ancestors 'none'"
)
#: The API documentation (Swagger UI, served from the package): its scripts are files of this
#: server too, but it sets inline styles on its elements.
DOCS_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
DOCS_PATHS = ("/docs",)


async def _respond(send: Send, status: int, body: bytes, content_type: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode()), *headers],
    })
    await send({"type": "http.response.body", "body": body})


def wants_json(path: str) -> bool:
    """Whether an answer (an error too) to ``path`` is JSON: the API's paths are, pages are not."""
    return path == "/api" or path.startswith("/api/")


async def error_response(scope: Scope, send: Send, status: int, message: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A one-line error as JSON (API paths) or as a minimal page (everything else)."""
    if wants_json(str(scope.get("path", ""))):
        await _respond(send, status, json.dumps({"error": message}).encode(), "application/json", headers)
        return
    from html import escape

    page = (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>coderiv: error</title><link rel=icon href=\"data:,\">"
        '<link rel=stylesheet href="/static/style.css"></head><body><main>'
        f'<h1>{status}</h1><p class="error">{escape(message)}</p>'
        "</main></body></html>"
    )
    await _respond(send, status, page.encode(), "text/html; charset=utf-8", headers)


class BodyLimit:
    """Refuse a request body larger than ``limit`` bytes with 413, by its Content-Length before
    reading a byte, or as soon as a streamed body passes the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        message = f"the upload is larger than the server's {self.limit}-byte limit"
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await error_response(scope, send, 413, message)
                return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            incoming = await receive()
            if incoming["type"] == "http.request":
                seen += len(incoming.get("body", b""))
                if seen > self.limit:  # FastAPI passes an HTTPException from reading the body on as it is
                    raise HTTPException(413, message)
            return incoming

        async def tracking_send(outgoing: Message) -> None:
            nonlocal started
            if outgoing["type"] == "http.response.start":
                started = True
            await send(outgoing)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except HTTPException as exc:  # read outside a route's error handling (none today)
            if started or exc.status_code != 413:
                raise
            await error_response(scope, send, 413, message)


class SecurityHeaders:
    """CSP without inline script, no sniffing, no framing, no referrer, on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        csp = DOCS_CSP if path in DOCS_PATHS else STRICT_CSP

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [
                    (b"content-security-policy", csp.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"same-origin"),  # no-referrer would make a same-origin form post say Origin: null
                    (b"cache-control", b"no-store"),
                ]
                message["headers"] = [*message.get("headers", []), *(h for h in extra if h[0] not in present)]
            await send(message)

        await self.app(scope, receive, with_headers)


#: Host names a browser uses for a server on this machine.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def host_name(header: str) -> str:
    """The host of a ``Host`` header, without its port (``[::1]:8000`` → ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class HostCheck:
    """Answer only requests addressed to one of ``allowed`` host names (400 otherwise).

    A server on 127.0.0.1 without a token relies on only this machine reaching it; a web page
    elsewhere could still make the browser talk to it through a domain name that resolves to
    127.0.0.1 (DNS rebinding). Such requests carry that domain in ``Host`` and are refused."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = {name.lower().strip("[]") for name in allowed}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), "")
        name = host_name(header)
        if name not in self.allowed:
            allowed = ", ".join(sorted(self.allowed))
            await error_response(scope, send, 400, f"this server answers only requests to {allowed} (got host {name!r})")
            return
        await self.app(scope, receive, send)


#: Methods that change something; a browser sends them cross-site only through forms or fetch.
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: ``Sec-Fetch-Site`` values a browser sends for a request that a page of this server made, or
#: that the user made directly (typed address, bookmark)
SAME_SITE_FETCH = frozenset({"same-origin", "none"})


def _origin_host(origin: str) -> str | None:
    """``host:port`` of an ``Origin`` header value (None for ``null`` or a malformed one)."""
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or not rest or scheme.lower() not in ("http", "https"):
        return None
    return rest.split("/", 1)[0].lower()


class SameOrigin:
    """Refuse (403) a state-changing request that a browser says came from another site.

    A server on 127.0.0.1 without a token would otherwise accept a form that any web page the
    user visits posts to it (cross-site request forgery). Browsers mark such requests with
    ``Sec-Fetch-Site: cross-site``/``same-site`` (Chromium, Firefox, Safari), which decides when
    present; an older browser without it must name this server in ``Origin`` (``null``, which
    sandboxed pages send, is refused; the pages' ``Referrer-Policy: same-origin`` keeps a
    same-origin form's Origin real). A request with neither header (curl, a learning platform's
    server, the API clients) is not a browser's and passes; so do GET and HEAD, and the paths in
    ``exempt``: the LTI login and launch, which a platform's page posts cross-site by design and
    which carry their own proof (a one-use state and a signed token).
    """

    def __init__(self, app: ASGIApp, exempt: tuple[str, ...] = ()) -> None:
        self.app = app
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or str(scope.get("method", "GET")).upper() not in UNSAFE_METHODS
                or str(scope.get("path", "")) in self.exempt):
            await self.app(scope, receive, send)
            return
        headers = {name.lower(): value.decode("latin-1") for name, value in scope.get("headers", [])}
        fetch_site = headers.get(b"sec-fetch-site")
        origin = headers.get(b"origin")
        host = headers.get(b"host", "").strip().lower()
        if fetch_site is not None:  # every current browser: its word decides
            cross = fetch_site.strip().lower() not in SAME_SITE_FETCH
        else:  # an older browser: the Origin it names must be this server
            cross = origin is not None and _origin_host(origin) != host
        if cross:
            await error_response(
                scope, send, 403, "refused: this request came from another site's page (cross-site request)",
            )
            return
        await self.app(scope, receive, send)
