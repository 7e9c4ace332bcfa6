"""``coderiv serve``: the web page and JSON API over an index (needs ``coderiv[web]``). With
``--archive`` the index must hold the chunk store every check's report reads: one without it gets
it at start (its source read again, with progress), or the server refuses to start in one line
naming ``coderiv index SOURCE --report-ready``, so that no submission fails for it."""

from __future__ import annotations

import contextlib
import ipaddress
import re
import sys
import time
from pathlib import Path

import click

from coderiv.archive.states import RepositoryMode
from coderiv.cli.options import TerminalBar, friendly_errors, index_option
from coderiv.errors import CoderivError
from coderiv.extras import require

#: A token fit for a header and a cookie, long enough not to be guessed.
TOKEN_RE = re.compile(r"[A-Za-z0-9._~+/=-]{16,}")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ProgressLines:
    """Progress as a line at every tenth of the work, for a server whose standard error is a log
    rather than a terminal (the terminal gets the usual bar)."""

    def __init__(self, desc: str) -> None:
        self.desc = desc
        self.total: int | None = None
        self.done = 0
        self.told = 0
        self.unit = ""

    def start(self, total: int | None, unit: str) -> None:
        self.total, self.done, self.told, self.unit = total, 0, 0, unit

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.total:
            return
        tenth = min(10, self.done * 10 // self.total)
        if tenth > self.told:
            self.told = tenth
            click.echo(f"{self.desc}: {tenth * 10}% of {self.total:,} {self.unit}", err=True)


def ready_for_checks(index_dir: Path) -> None:
    """Give the index the chunk store the archive's checks read, if it lacks it (saying so, with
    progress), or refuse in one line when it cannot be added (its source is gone)."""
    from coderiv.index.builder.stores import with_store
    from coderiv.index.reader import open_index
    from coderiv.ranking.containment import chunk_store_spec
    from coderiv.text.remote import source_exists

    spec = chunk_store_spec()
    index = open_index(index_dir)
    if spec.name in index.specs:
        return
    command = f"'coderiv index SOURCE --index {index_dir} --report-ready'"
    if not index.source or not source_exists(index.source):
        raise CoderivError(
            f"the index {index_dir} has no chunk store, which the archive's checks read, and its source "
            f"{index.source} is gone: build it with {command}")
    started = time.monotonic()
    progress: TerminalBar | ProgressLines = TerminalBar(False, "chunk store") if sys.stderr.isatty() else ProgressLines("chunk store")
    with contextlib.ExitStack() as stack:
        if isinstance(progress, TerminalBar):
            stack.enter_context(progress)
        ready = with_store(index, spec, announce=lambda line: click.echo(f"--archive: {line}", err=True), progress=progress)
    if spec.name not in ready.specs:
        raise CoderivError(f"the index {index_dir} has no chunk store, which the archive's checks read: build it with {command}")
    click.echo(f"--archive: chunk store added in {time.monotonic() - started:.0f} s; checks can start", err=True)


@click.command("serve")
@index_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (anything but loopback needs --token).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--token", envvar="CODERIV_TOKEN", default=None, help="Token every request must carry (also $CODERIV_TOKEN).")
@click.option("--max-upload-mb", type=click.FloatRange(0.001), default=50.0, show_default=True, help="Largest document accepted.")
@click.option("--workers", type=click.IntRange(1), default=None, help="Checks run at once [default: number of cores].")
@click.option("--queue", type=click.IntRange(0), default=None, help="Checks waiting beyond that before 503 [default: 4 per worker].")
@click.option("--read-seconds", type=click.FloatRange(0.5), default=60.0, show_default=True,
              help="Time budget for reading one uploaded file (in a child process).")
@click.option("--read-memory-mb", type=click.IntRange(16), default=1024, show_default=True,
              help="Memory budget for reading one uploaded file (in a child process).")
@click.option("--max-words", type=click.IntRange(1), default=500_000, show_default=True,
              help="Largest uploaded document in words (refused beyond, by the reading child).")
@click.option("--archive", "archive_on", is_flag=True,
              help="Keep submissions, reports and decisions in a database, with users and roles (docs/archive.md).")
@click.option("--database", envvar="CODERIV_DATABASE", default=None,
              help="Archive: SQLAlchemy URL [default: SQLite beside the index; also $CODERIV_DATABASE].")
@click.option("--check-workers", type=click.IntRange(1), default=2, show_default=True,
              help="Archive: worker processes checking submissions.")
@click.option("--lease", type=click.FloatRange(1), default=30.0, show_default=True,
              help="Archive: seconds a check's claim lasts without a heartbeat (then it is checked again).")
@click.option("--webhook", default=None, help="Archive: http(s) URL told (POST JSON) when a check ends.")
@click.option("--webhook-secret", envvar="CODERIV_WEBHOOK_SECRET", default=None,
              help="Archive: key signing each webhook delivery (X-Coderiv-Signature, HMAC-SHA256; also $CODERIV_WEBHOOK_SECRET).")
@click.option("--webhook-allow-private", is_flag=True,
              help="Archive: let the webhook reach loopback, link-local and private addresses.")
@click.option("--archive-all", is_flag=True, help="Archive: add every checked submission to the collection.")
@click.option("--repository", type=click.Choice([m.value for m in RepositoryMode]), default=None,
              help="Archive: which checked submissions later ones are compared with: all (pending ones too), "
                   "archived (the default), none (check and forget; needs --retention-days).")
@click.option("--retention-days", type=click.FloatRange(0, min_open=True), default=None,
              help="Archive: delete unarchived submissions older than this [default: keep].")
@friendly_errors
def serve_command(
    index_dir: Path, host: str, port: int, token: str | None, max_upload_mb: float, workers: int | None, queue: int | None,
    read_seconds: float, read_memory_mb: int, max_words: int, archive_on: bool, database: str | None, check_workers: int, lease: float,
    webhook: str | None, webhook_secret: str | None, webhook_allow_private: bool, archive_all: bool, retention_days: float | None,
    repository: str | None,
) -> None:
    """Serve the check page, the collection pages and the JSON API (/docs) over the index.

    The index is opened read-only; after 'coderiv index' updates it, new requests use the new
    version without a restart.
    """
    require("fastapi", "web", "coderiv serve")
    uvicorn = require("uvicorn", "web", "coderiv serve")
    archive = None
    if archive_on:
        require("sqlalchemy", "archive", "coderiv serve --archive")
        require("alembic", "archive", "coderiv serve --archive")
        from coderiv.archive.service import ArchiveSettings

        if token:
            raise CoderivError("--token does not apply with --archive: every user has a token of their own (coderiv users add)")
        mode = RepositoryMode(repository or RepositoryMode.ARCHIVED)
        if mode == RepositoryMode.NONE and (retention_days is None or archive_all):
            raise CoderivError("--repository none forgets every submission after the retention period: "
                               "give --retention-days (and not --archive-all)")
        if webhook_secret is not None and (not webhook or len(webhook_secret) < 16):
            raise CoderivError("--webhook-secret signs the deliveries of --webhook: give both, the secret at least 16 characters")
        archive = ArchiveSettings(database, check_workers, lease, webhook, archive_all, retention_days, webhook_allow_private,
                                  repository=mode, webhook_secret=webhook_secret)
        if webhook:
            from coderiv.archive.webhook import webhook_target

            webhook_target(webhook, webhook_allow_private)  # refused now, in one line, not after every check
    elif database or webhook or archive_all or retention_days is not None or webhook_allow_private or repository:
        raise CoderivError("--database, --webhook, --archive-all, --repository and --retention-days need --archive")
    if not is_loopback(host) and not token and archive is None:
        raise CoderivError(f"--host {host} makes the server reachable from other machines: give --token or set CODERIV_TOKEN")
    if token and not TOKEN_RE.fullmatch(token):
        raise CoderivError("the token must be at least 16 characters of letters, digits and . _ ~ + / = - (e.g. openssl rand -hex 16)")
    from coderiv.text.isolated import Budget
    from coderiv.web.app import create_app
    from coderiv.web.context import ServeSettings
    from coderiv.web.security import LOOPBACK_NAMES
    from coderiv.web.snapshot import Snapshot

    Snapshot.open(index_dir)  # a missing or damaged index (one or sharded) is a one-line error now, not on the first request
    if archive is not None:
        ready_for_checks(index_dir)
    # without a token, a loopback server answers only requests addressed to this machine (no DNS rebinding)
    hosts = (*LOOPBACK_NAMES, host) if is_loopback(host) and not token else None
    budget = Budget(read_seconds, read_memory_mb << 20, max_words)
    settings = ServeSettings(index_dir, token or None, hosts, int(max_upload_mb * 1024 * 1024), workers, queue, budget, archive)
    click.echo(f"coderiv serving {index_dir} on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning", server_header=False)


COMMANDS = [serve_command]
