"""Users, roles and API tokens. A token is 32 random bytes (URL-safe), shown once when the user is
added and stored only as its SHA-256: a token of that entropy needs no slow hash, and a stolen
database gives no usable token. Revoking a user refuses their token from then on."""

from __future__ import annotations

import hashlib
import re
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from coderiv.archive.models import User, now
from coderiv.archive.states import Role, parse
from coderiv.errors import InputError

#: User names: letters, digits and ``._@-``, as a learning platform's account names are.
NAME_RE = re.compile(r"[A-Za-z0-9._@-]{1,100}")


def token_hash(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def add_user(session: Session, name: str, role: Role | str) -> str:
    """Add ``name`` with ``role`` and return its token (the only time it is seen)."""
    if not NAME_RE.fullmatch(name):
        raise InputError(f"a user name is 1 to 100 letters, digits or . _ @ - (got {name!r})")
    role = parse(Role, role, "role")
    if session.scalar(select(User).where(User.name == name)) is not None:
        raise InputError(f"there is already a user {name!r} (revoke it first, or choose another name)")
    token = secrets.token_urlsafe(32)
    session.add(User(name=name, role=role, token_hash=token_hash(token)))
    session.flush()
    return token


def list_users(session: Session) -> list[User]:
    return list(session.scalars(select(User).order_by(User.name)))


def revoke_user(session: Session, name: str) -> User:
    """Refuse ``name``'s token from now on (the user's submissions stay)."""
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise InputError(f"no user {name!r}")
    if user.revoked is None:
        user.revoked = now()
    return user


def authenticate(session: Session, token: str) -> User | None:
    """The live user whose token this is (None for an unknown or revoked one)."""
    user = session.scalar(select(User).where(User.token_hash == token_hash(token)))
    return user if user is not None and user.revoked is None else None
