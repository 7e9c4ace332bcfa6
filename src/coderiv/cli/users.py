"""``coderiv users``: the archive's users (``add`` prints the token once, ``list``, ``revoke``);
needs ``coderiv[archive]``. The database is the one ``coderiv serve --archive`` uses: SQLite
beside the index, or ``--database URL`` ($CODERIV_DATABASE)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from coderiv.archive.states import Role
from coderiv.cli.options import F, friendly_errors, index_option

if TYPE_CHECKING:
    from coderiv.archive.db import Database

database_option = click.option(
    "--database", envvar="CODERIV_DATABASE", default=None,
    help="SQLAlchemy URL of the archive (e.g. postgresql://user@host/db) [default: SQLite beside the index; also $CODERIV_DATABASE].",
)


def archive_options(func: F) -> F:
    """``--index`` and ``--database`` (the archive beside the index), with the one-line errors:
    what every ``coderiv users`` and ``coderiv lti`` command takes."""
    return index_option(database_option(friendly_errors(func)))


def _database(index_dir: Path, url: str | None) -> Database:
    """The archive's database, after checking its extra is installed (before any import of it)."""
    from coderiv.extras import require

    require("sqlalchemy", "archive", "coderiv users")
    require("alembic", "archive", "coderiv users")
    from coderiv.archive.db import Database, default_url

    return Database(url or default_url(index_dir))


@click.group("users")
def users_command() -> None:
    """The archive's users: submitters see their own submissions, examiners all, admins manage users."""


@users_command.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice([r.value for r in Role]), required=True)
@archive_options
def add_command(name: str, role: str, index_dir: Path, database: str | None) -> None:
    """Add a user and print its token (shown this once; stored hashed)."""
    db = _database(index_dir, database)
    from coderiv.archive import audit
    from coderiv.archive.users import add_user

    with db.session() as session:
        token = add_user(session, name, role)
        audit.record(session, None, "user-add", name, f"{role} (command line)")
    click.echo(token)
    click.echo(f"user {name} ({role}) added; the token above is shown only once", err=True)


@users_command.command("list")
@archive_options
def list_command(index_dir: Path, database: str | None) -> None:
    """The users, their roles, and whether they are revoked."""
    db = _database(index_dir, database)
    from coderiv.archive.users import list_users

    with db.session() as session:
        for user in list_users(session):
            state = "revoked" if user.revoked is not None else "active"
            click.echo(f"{user.name}\t{user.role}\t{state}")


@users_command.command("revoke")
@click.argument("name")
@archive_options
def revoke_command(name: str, index_dir: Path, database: str | None) -> None:
    """Refuse NAME's token from now on (its submissions stay)."""
    db = _database(index_dir, database)
    from coderiv.archive import audit
    from coderiv.archive.users import revoke_user

    with db.session() as session:
        revoke_user(session, name)
        audit.record(session, None, "user-revoke", name, "command line")
    click.echo(f"user {name} revoked", err=True)


COMMANDS = [users_command]
