"""A real PostgreSQL server for the archive's tests, from Debian's ``postgresql`` package:
``initdb`` in a temporary folder owned by the ``postgres`` user (initdb refuses to run as root,
so as root it runs through ``runuser``), ``postgres`` listening on 127.0.0.1 on a free port,
stopped by its PID. :func:`postgres_url` skips the test with a one-line reason where it cannot
start; nothing is ever faked."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.network import free_port

#: Where Debian's ``postgresql`` package puts each major version's programs.
INSTALLED = Path("/usr/lib/postgresql")


def _binaries() -> Path | None:
    """The newest installed version's ``bin`` folder (None when PostgreSQL is not installed)."""
    found = [p.parent for p in INSTALLED.glob("*/bin/initdb")]
    return max(found, key=lambda b: int(b.parent.name) if b.parent.name.isdigit() else 0) if found else None


def _as_postgres() -> list[str]:
    """The command prefix that runs as the ``postgres`` user when we are root."""
    if os.geteuid() != 0:
        return []
    runuser = shutil.which("runuser")
    if runuser is None:
        raise RuntimeError("running as root without runuser: cannot start initdb as the postgres user")
    return [runuser, "-u", "postgres", "--"]


def _stop(data: Path, process: subprocess.Popen[bytes] | None) -> None:
    """Stop the server by the PID it wrote (``postmaster.pid``; runuser does not pass signals
    on): SIGINT is PostgreSQL's fast shutdown; then reap the process we started."""
    try:
        pid = int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pid = None
    if pid is not None:
        try:
            os.kill(pid, signal.SIGINT)
        except ProcessLookupError:
            pid = None
        deadline = time.monotonic() + 30
        while pid is not None and time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.1)
    if process is not None:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start_postgres() -> Iterator[str]:
    """Start a server; yield its URL (database ``coderiv``); stop it by PID and remove its folder."""
    bin_dir = _binaries()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install -y postgresql)")
    prefix = _as_postgres() if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="coderiv-pg-"))
    data = folder / "data"
    process: subprocess.Popen[bytes] | None = None
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
        folder.chmod(0o700)
        initdb = subprocess.run(
            [*prefix, str(bin_dir / "initdb"), "-D", str(data), "-U", "coderiv", "--auth=trust", "-E", "UTF8", "--no-sync"],
            capture_output=True, timeout=120)
        if initdb.returncode != 0:
            pytest.skip(f"initdb failed: {initdb.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
        port = free_port()
        with open(folder / "log", "wb") as log:  # the child keeps its own copy of the descriptor
            process = subprocess.Popen(
                [*prefix, str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-h", "127.0.0.1",
                 "-k", str(folder), "-c", "fsync=off"],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready = subprocess.run([str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True)
            if ready.returncode == 0:
                break
            if process.poll() is not None:
                pytest.skip(f"postgres exited: {(folder / 'log').read_text(errors='replace').strip().splitlines()[-1:]}")
            time.sleep(0.2)
        else:
            pytest.skip("postgres did not accept connections within 60 s")
        created = subprocess.run(
            [str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "coderiv", "coderiv"], capture_output=True)
        if created.returncode != 0:
            pytest.skip(f"createdb failed: {created.stderr.decode(errors='replace').strip()}")
        yield f"postgresql://coderiv@127.0.0.1:{port}/coderiv"
    finally:
        _stop(data, process)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server for the whole session (its URL); skipped where it cannot start."""
    yield from start_postgres()


def fresh_database(server_url: str, name: str) -> str:
    """A new empty database on the server (its URL)."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(server_url.replace("postgresql://", "postgresql+psycopg://"), isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(sqlalchemy.text(f'DROP DATABASE IF EXISTS "{name}"'))
        connection.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return server_url.rsplit("/", 1)[0] + f"/{name}"
