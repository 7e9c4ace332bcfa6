"""``coderiv lti``: the learning platforms the archive trusts as LTI 1.3 tool (``add`` registers
one: its issuer, the client id it gave the tool, the deployment, and its OIDC login, token and
key set URLs; ``list``; ``remove``). Needs ``coderiv[archive,lti]``; the database is the one
``coderiv serve --archive`` uses (docs/archive.md, "LTI 1.3")."""

from __future__ import annotations

from pathlib import Path

import click

from coderiv.cli.users import _database, archive_options


@click.group("lti")
def lti_command() -> None:
    """The learning platforms that may launch the archive (LTI 1.3)."""


@lti_command.command("add")
@click.argument("issuer")
@click.option("--client-id", required=True, help="The client id the platform gave this tool.")
@click.option("--deployment-id", default=None, help="The deployment id (launches of another are refused).")
@click.option("--login-url", required=True, help="The platform's OIDC authorisation URL.")
@click.option("--token-url", required=True, help="The platform's OAuth 2 token URL (scores, roster).")
@click.option("--jwks-url", required=True, help="The platform's public key set URL.")
@archive_options
def add_command(issuer: str, client_id: str, deployment_id: str | None, login_url: str, token_url: str, jwks_url: str,
                index_dir: Path, database: str | None) -> None:
    """Trust the platform ISSUER; prints the tool's URLs to give it."""
    db = _database(index_dir, database)
    from coderiv.archive import audit
    from coderiv.archive.lti import register

    try:
        with db.session() as session:
            platform = register(session, issuer, client_id, login_url, token_url, jwks_url, deployment_id)
            audit.record(session, None, "lti-add", issuer, f"client {client_id} (command line)")
            number = platform.id
    finally:
        db.dispose()
    click.echo(f"platform {number} registered: {issuer} (client {client_id})", err=True)
    click.echo("give it: login URL /lti/login, launch and redirect URL /lti/launch, key set URL /lti/jwks", err=True)


@lti_command.command("list")
@archive_options
def list_command(index_dir: Path, database: str | None) -> None:
    """The registered platforms: id, issuer, client id, deployment."""
    db = _database(index_dir, database)
    from sqlalchemy import select

    from coderiv.archive.models import LtiPlatform

    try:
        with db.session() as session:
            for p in session.scalars(select(LtiPlatform).order_by(LtiPlatform.id)):
                click.echo(f"{p.id}\t{p.issuer}\t{p.client_id}\t{p.deployment_id or '-'}")
    finally:
        db.dispose()


@lti_command.command("remove")
@click.argument("issuer")
@click.option("--client-id", required=True)
@archive_options
def remove_command(issuer: str, client_id: str, index_dir: Path, database: str | None) -> None:
    """Stop trusting the platform (its launches are refused from now on)."""
    db = _database(index_dir, database)
    from coderiv.archive import audit
    from coderiv.archive.lti import platform_by
    from coderiv.errors import InputError

    try:
        with db.session() as session:
            platform = platform_by(session, issuer, client_id)
            if platform is None:
                raise InputError(f"no platform {issuer} with client id {client_id}")
            session.delete(platform)
            audit.record(session, None, "lti-remove", issuer, f"client {client_id} (command line)")
    finally:
        db.dispose()
    click.echo(f"platform {issuer} (client {client_id}) removed", err=True)


COMMANDS = [lti_command]
