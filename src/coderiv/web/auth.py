"""Who is asking, and may they: the one authorisation every route depends on.

A request carries a token as ``Authorization: Bearer``, as the cookie a browser got from opening
a page once with ``?token=``, or in that query string. With the archive on, the token is a
user's (:func:`coderiv.archive.users.authenticate`) and each route names the least role it needs
(roles are nested: :meth:`coderiv.archive.states.Role.may`); a server started with ``--token``
knows one token, which may do everything; a server on 127.0.0.1 without a token asks nothing.
Routes declare it as a dependency (:func:`require`, or :func:`signed_in` when they need the
user); the static files and Swagger UI's files need none. A token given in the query string is
put in a cookie by :class:`TokenCookie`, so a browser sends it from then on."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from fastapi import Request

from coderiv.archive.states import Role
from coderiv.errors import CoderivError, ForbiddenError
from coderiv.web.security import ASGIApp, Message, Receive, Scope, Send, error_response

if TYPE_CHECKING:
    from coderiv.archive.models import User

TOKEN_COOKIE = "coderiv_token"
#: The key in the request's state that asks :class:`TokenCookie` to set the cookie.
SET_COOKIE = "coderiv_set_token_cookie"
#: What a refused request is told to do.
HOW = "send 'Authorization: Bearer TOKEN', or open the page once with ?token=TOKEN"


class Unauthorized(CoderivError):
    """No token, or one this server does not know (HTTP 401 with ``WWW-Authenticate``)."""


def presented_token(scope: Scope) -> tuple[str | None, bool]:
    """The token a request carries (``Authorization: Bearer``, the cookie, or ``?token=``), and
    whether it came in the query string (then the answer sets the cookie)."""
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value.lower().startswith(b"bearer "):
            return value[7:].decode("latin-1").strip(), False
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            cookie: SimpleCookie = SimpleCookie()
            try:
                cookie.load(value.decode("latin-1"))
            except Exception:  # a malformed cookie header is no token
                continue
            if TOKEN_COOKIE in cookie:
                return cookie[TOKEN_COOKIE].value, False
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if "token" in query:
        return query["token"][0], True
    return None, False


def authorise(request: Request, role: Role) -> User | None:
    """The user asking, if they may do what ``role`` may (None on a server without users);
    :class:`Unauthorized` without a known token, :class:`ForbiddenError` for a lesser role."""
    from coderiv.web.context import WebContext

    context: WebContext = request.app.state.context
    token, from_query = presented_token(request.scope)
    user: User | None = None
    if context.archive is not None:
        from coderiv.archive.users import authenticate

        if token is not None:
            with context.archive.database.session() as session:
                user = authenticate(session, token)
        if user is None:
            why = "this archive needs a user's token" if token is None else "unknown or revoked token"
            raise Unauthorized(f"{why}: {HOW}")
        if not user.role.may(role):
            raise ForbiddenError(f"a {user.role} may not open {request.url.path}")
    elif context.settings.token:
        if token is None or not secrets.compare_digest(token.encode(), context.settings.token.encode()):
            why = "this server needs a token" if token is None else "wrong token"
            raise Unauthorized(f"{why}: {HOW}")
    else:
        return None
    if from_query:
        setattr(request.state, SET_COOKIE, token)
    return user


def require(role: Role) -> Callable[[Request], None]:
    """A dependency: the request must come from someone who may do what ``role`` may."""

    def dependency(request: Request) -> None:
        authorise(request, role)

    return dependency


def signed_in(role: Role) -> Callable[[Request], User]:
    """A dependency giving the archive's user asking, who may do what ``role`` may (only on the
    archive's routes, which exist only with the archive on)."""

    def dependency(request: Request) -> User:
        user = authorise(request, role)
        if user is None:  # the archive's routes are mounted only with the archive
            raise Unauthorized(f"this archive needs a user's token: {HOW}")
        return user

    return dependency


class AnonymousBodies:
    """Refuse (401) a request that carries a body but no credential at all, on a server that
    needs one, before a byte of the body is read: FastAPI reads a form before it runs the route's
    dependencies, so without this an anonymous client could make the server parse an upload up
    to the size limit only to be told 401. Nothing is decided here but "no token at all"; the
    token itself is checked by :func:`authorise`. ``public`` paths (the LTI login and launch,
    whose proof is in their body) pass."""

    def __init__(self, app: ASGIApp, why: str, public: tuple[str, ...] = ()) -> None:
        self.app = app
        self.why = why
        self.public = public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] == "http" and str(scope.get("method", "GET")).upper() in ("POST", "PUT", "PATCH")
                and str(scope.get("path", "")) not in self.public and presented_token(scope)[0] is None):
            await error_response(scope, send, 401, f"{self.why}: {HOW}", [(b"www-authenticate", b'Bearer realm="coderiv"')])
            return
        await self.app(scope, receive, send)


class TokenCookie:
    """Set the token cookie on the answer to a request whose token came in ``?token=`` (after
    :func:`authorise` accepted it), whatever kind of response the route made."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_cookie(message: Message) -> None:
            token = scope.get("state", {}).get(SET_COOKIE)
            if message["type"] == "http.response.start" and token:
                cookie = f"{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            await send(message)

        await self.app(scope, receive, with_cookie if scope["type"] == "http" else send)  # (lifespan: as it is)
