"""The archive's database: an engine for a URL (SQLite by default, one file beside the index, in
WAL mode with a busy timeout so readers never block the writer; PostgreSQL by URL when several
servers share one archive), sessions, and the schema brought to the newest Alembic revision at
start (migrated, never recreated)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy import exc as sqlalchemy_exc
from sqlalchemy.orm import Session, sessionmaker

from coderiv.errors import CoderivError

#: Milliseconds a SQLite connection waits for another writer before giving up.
BUSY_TIMEOUT_MS = 30_000
#: Seconds a client is told to wait (``Retry-After``) when the database does not answer.
OUTAGE_RETRY_AFTER = 5
#: What SQLAlchemy raises when the database cannot be reached or does not answer in time
#: (a stopped PostgreSQL, a dropped connection, a pool exhausted, SQLite locked past its
#: busy timeout): an outage the API answers with 503, not a fault of the request.
OUTAGES: tuple[type[Exception], ...] = (
    sqlalchemy_exc.OperationalError, sqlalchemy_exc.InterfaceError, sqlalchemy_exc.TimeoutError,
    sqlalchemy_exc.DisconnectionError,
)
#: The default database file's name, beside the index folder.
DEFAULT_NAME = "{index}.archive.sqlite"
MIGRATIONS = Path(__file__).parent / "migrations"


def default_url(index_dir: Path) -> str:
    """``sqlite:///`` of a file beside the index folder (``.coderiv`` → ``.coderiv.archive.sqlite``)."""
    index_dir = Path(index_dir).resolve()
    return f"sqlite:///{index_dir.with_name(DEFAULT_NAME.format(index=index_dir.name))}"


def _sqlite_pragmas(dbapi_connection: Any, _: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable at each checkpoint, never corrupt
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; a URL SQLAlchemy cannot use is a one-line error."""
    if url.startswith("postgresql://"):  # psycopg 3 is the driver coderiv[archive] installs
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    try:
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        return create_engine(url, pool_pre_ping=True)
    except Exception as exc:  # ArgumentError, NoSuchModuleError...
        raise CoderivError(f"cannot use the database {redact(url)}: {exc}") from None


def redact(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to the newest revision shipped in ``migrations/`` (an empty database
    gets every table; an older one its missing revisions; data is never dropped); ``revision``
    stops at an older one (tests of the migrations)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    except CoderivError:
        raise
    except Exception as exc:
        raise CoderivError(f"cannot open the archive database {redact(str(engine.url))}: {type(exc).__name__}: {exc}") from None


def head_revision() -> str:
    """The newest revision shipped with this coderiv."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


class Database:
    """An engine and its session factory, the schema migrated on opening."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        migrate(self.engine)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session committed at the end of the block (rolled back on an error)."""
        with self.sessions.begin() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
