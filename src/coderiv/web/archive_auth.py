"""Who is asking, and may they: with the archive on, every request but the static files carries a
user's token (``Authorization: Bearer``, or the cookie a browser gets from ``?token=``), and
each path needs a role. Submitters reach their submissions and the API's description;
examiners every page and route but user management; admins everything. Which submission a
user may see is decided by the routes (:func:`coderiv.archive.service.find`)."""

from __future__ import annotations

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from coderiv.archive.db import Database
from coderiv.archive.models import User
from coderiv.archive.users import authenticate
from coderiv.web.security import TOKEN_COOKIE, error_response, presented_token

#: Path prefixes each role may reach (longest first wins; anything else needs an examiner).
ANY_USER = ("/api/submissions", "/submissions", "/docs", "/openapi.json", "/me")
ADMIN_ONLY = ("/api/users", "/users", "/api/audit")
PUBLIC = ("/static/",)


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") or path.startswith(p + "?") for p in prefixes)


def allowed(role: str, path: str) -> bool:
    """Whether a user of ``role`` may request ``path``."""
    if _under(path, ADMIN_ONLY):
        return role == "admin"
    if _under(path, ANY_USER):
        return True
    return role in ("examiner", "admin")


class UserAuth:
    """Resolve the token to a live user (401 otherwise), check the path's role (403), and leave
    the user in ``request.state.user``."""

    def __init__(self, app: ASGIApp, database: Database) -> None:
        self.app = app
        self.database = database

    def _user(self, token: str) -> User | None:
        with self.database.session() as session:
            return authenticate(session, token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or _under(path, PUBLIC):
            await self.app(scope, receive, send)
            return
        token, from_query = presented_token(scope)
        user = await anyio.to_thread.run_sync(self._user, token) if token else None
        if user is None:
            why = "this archive needs a user's token" if token is None else "unknown or revoked token"
            await error_response(
                scope, send, 401,
                f"{why}: send 'Authorization: Bearer TOKEN', or open the page once with ?token=TOKEN",
                [(b"www-authenticate", b'Bearer realm="coderiv"')],
            )
            return
        if not allowed(user.role, path):
            await error_response(scope, send, 403, f"a {user.role} may not open {path}")
            return
        scope.setdefault("state", {})["user"] = user
        if not from_query:
            await self.app(scope, receive, send)
            return

        async def set_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                cookie = f"{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie.encode())]
            await send(message)

        await self.app(scope, receive, set_cookie)
