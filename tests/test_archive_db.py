"""The archive's database on SQLite and on a real PostgreSQL server: the migrations build the
schema of the models from an empty database and never recreate it; tokens are stored hashed
and revocable; the queue's claims, leases and re-runs; retention, export and deletion."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
pytest.importorskip("alembic", reason="the archive extra (coderiv[archive]) is not installed")
import sqlalchemy  # noqa: E402

from coderiv.archive import audit  # noqa: E402
from coderiv.archive.db import Database, default_url, head_revision  # noqa: E402
from coderiv.archive.models import Base, Check, Decision, Submission, User, now  # noqa: E402
from coderiv.archive.queue import MAX_ATTEMPTS, claim, heartbeat  # noqa: E402
from coderiv.archive.retention import delete, expire, export  # noqa: E402
from coderiv.archive.users import add_user, authenticate, list_users, revoke_user  # noqa: E402
from coderiv.errors import InputError  # noqa: E402
from tests.support.postgres import fresh_database, postgres_server  # noqa: E402, F401

_counter = iter(range(1_000_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'archive.sqlite'}"
    server: str = request.getfixturevalue("postgres_server")
    return fresh_database(server, f"test_{next(_counter)}")


@pytest.fixture
def database(url: str) -> Iterator[Database]:
    db = Database(url)
    yield db
    db.dispose()


def test_an_empty_database_is_migrated_to_the_models_schema(url: str) -> None:
    db = Database(url)
    inspector = sqlalchemy.inspect(db.engine)
    assert set(inspector.get_table_names()) == {*Base.metadata.tables, "alembic_version"}
    for name, table in Base.metadata.tables.items():
        assert {c["name"] for c in inspector.get_columns(name)} == {c.name for c in table.columns}, name
        indexed = {tuple(i["column_names"]) for i in inspector.get_indexes(name)}
        assert {tuple(c.name for c in i.columns) for i in table.indexes} <= indexed, name
    with db.engine.connect() as connection:
        assert connection.execute(sqlalchemy.text("select version_num from alembic_version")).scalar() == head_revision() == "0005"
    db.dispose()


def test_opening_again_migrates_in_place_and_keeps_the_data(url: str) -> None:
    first = Database(url)
    with first.session() as session:
        add_user(session, "ann", "admin")
    first.dispose()
    again = Database(url)
    with again.session() as session:
        assert [(u.name, u.role) for u in list_users(session)] == [("ann", "admin")]
    again.dispose()


def test_a_database_of_an_older_revision_is_upgraded_with_its_data(url: str) -> None:
    from coderiv.archive.db import make_engine, migrate

    engine = make_engine(url)
    migrate(engine, "0001")  # as an earlier coderiv left it
    with engine.begin() as connection:
        assert "upload" not in {c["name"] for c in sqlalchemy.inspect(connection).get_columns("submissions")}
        connection.execute(sqlalchemy.text(
            "insert into users (id, name, role, token_hash, created) values (1, 'old', 'examiner', 'h', '2026-01-01 00:00:00')"))
        connection.execute(sqlalchemy.text(
            "insert into submissions (id, user_id, created, filename, format, size, sha256, text, state, attempts, decision,"
            " archive_requested) values ('s1', 1, '2026-01-02 00:00:00', 'a.txt', 'txt', 4, 'x', 'kept', 'done', 1, 'open', false)"))
    engine.dispose()
    db = Database(url)  # opening migrates to the newest revision
    with db.session() as session:
        submission = session.get(Submission, "s1")
        assert submission is not None and (submission.text, submission.user.name, submission.upload) == ("kept", "old", None)
        # issue 42: the rows made before repository modes were compared with archived ones only
        assert (submission.repository, submission.author, submission.pooled) == ("archived", None, None)
    with db.engine.connect() as connection:
        assert connection.execute(sqlalchemy.text("select version_num from alembic_version")).scalar() == "0005"
    db.dispose()


def test_sqlite_runs_in_wal_mode_beside_the_index(tmp_path: Path) -> None:
    assert default_url(tmp_path / "idx") == f"sqlite:///{tmp_path / 'idx.archive.sqlite'}"
    db = Database(default_url(tmp_path / "idx"))
    with db.engine.connect() as connection:
        assert connection.execute(sqlalchemy.text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(sqlalchemy.text("PRAGMA busy_timeout")).scalar() == 30000
    db.dispose()


def test_tokens_are_stored_hashed_and_revocable(database: Database) -> None:
    with database.session() as session:
        token = add_user(session, "sam", "submitter")
    assert len(token) == 43  # 32 random bytes, URL-safe base64
    with database.session() as session:
        stored = session.scalar(sqlalchemy.select(User.token_hash))
        assert stored == hashlib.sha256(token.encode()).hexdigest() != token
        user = authenticate(session, token)
        assert user is not None and (user.name, user.role) == ("sam", "submitter")
        assert authenticate(session, token + "x") is None
        revoke_user(session, "sam")
    with database.session() as session:
        assert authenticate(session, token) is None


@pytest.mark.parametrize(("name", "role", "message"), [
    ("bad name", "admin", "a user name is 1 to 100 letters"),
    ("ok", "boss", "the role must be one of submitter, examiner, admin (got 'boss')"),
])
def test_bad_users_are_one_line_errors(database: Database, name: str, role: str, message: str) -> None:
    with database.session() as session, pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        add_user(session, name, role)


def test_a_user_name_is_taken_once(database: Database) -> None:
    with database.session() as session:
        add_user(session, "sam", "submitter")
    with database.session() as session, pytest.raises(InputError, match="there is already a user 'sam'"):
        add_user(session, "sam", "examiner")


def _submit(database: Database, text: str = "some text", created: dt.datetime | None = None) -> str:
    with database.session() as session:
        user = session.scalar(sqlalchemy.select(User)) or User(name="u", role="submitter", token_hash="h")
        submission = Submission(user=user, filename="a.txt", format="txt", size=len(text), sha256="0" * 64, text=text,
                                state="queued", attempts=0, decision="open", archive_requested=False, created=created or now())
        session.add(submission)
        session.flush()
        return submission.id


def test_ids_are_random_128_bit_hex(database: Database) -> None:
    ids = {_submit(database) for _ in range(20)}
    assert len(ids) == 20 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_one_worker_claims_a_submission_and_the_oldest_first(database: Database) -> None:
    first = _submit(database, "first", now() - dt.timedelta(seconds=10))
    second = _submit(database, "second")
    with database.session() as session:
        a = claim(session, "w1")
    with database.session() as session:
        b = claim(session, "w2")
    with database.session() as session:
        c = claim(session, "w3")
    assert a is not None and b is not None and c is None
    assert (a.submission_id, a.text, b.submission_id) == (first, "first", second)
    with database.session() as session:
        assert heartbeat(session, a, "w1") is True
        assert heartbeat(session, a, "w2") is False  # not w2's claim
        assert [s.state for s in session.scalars(sqlalchemy.select(Submission))] == ["checking", "checking"]


def test_a_claim_whose_lease_ran_out_is_checked_again(database: Database) -> None:
    sid = _submit(database)
    with database.session() as session:
        first = claim(session, "dead", lease=30)
    with database.session() as session:
        assert claim(session, "w2") is None  # the lease holds
        session.get(Submission, sid).lease_until = now() - dt.timedelta(seconds=1)  # type: ignore[union-attr]
    with database.session() as session:
        again = claim(session, "w2")
    assert first is not None and again is not None and again.submission_id == sid and again.check_id != first.check_id
    with database.session() as session:
        submission = session.get(Submission, sid)
        assert submission is not None and (submission.worker, submission.attempts) == ("w2", 2)
        assert [(c.state, c.worker) for c in submission.checks] == [("interrupted", "dead"), ("checking", "w2")]
        assert heartbeat(session, first, "dead") is False  # the dead worker lost it


def test_a_check_cut_off_every_time_fails_with_the_reason(database: Database) -> None:
    sid = _submit(database)
    for attempt in range(MAX_ATTEMPTS):
        with database.session() as session:
            assert claim(session, f"w{attempt}") is not None
            session.get(Submission, sid).lease_until = now() - dt.timedelta(seconds=1)  # type: ignore[union-attr]
    with database.session() as session:
        assert claim(session, "last") is None
    with database.session() as session:
        submission = session.get(Submission, sid)
        assert submission is not None and submission.state == "failed"
        assert submission.reason == "the check was cut off 3 times (its worker stopped each time)"


def test_expiry_deletes_only_old_unarchived_submissions(database: Database) -> None:
    old = _submit(database, "old", now() - dt.timedelta(days=31))
    young = _submit(database, "young", now() - dt.timedelta(days=29))
    archived = _submit(database, "kept", now() - dt.timedelta(days=40))
    waiting = _submit(database, "waiting", now() - dt.timedelta(days=40))
    failed = _submit(database, "failed", now() - dt.timedelta(days=40))
    with database.session() as session:
        session.get(Submission, archived).archived = now()  # type: ignore[union-attr]
        session.get(Submission, waiting).archive_requested = True  # type: ignore[union-attr]
        never = session.get(Submission, failed)
        assert never is not None
        never.archive_requested, never.state = True, "failed"  # it will never be archived
    with database.session() as session:
        assert sorted(expire(session, 30)) == sorted([old, failed])
    with database.session() as session:
        assert {s.id for s in session.scalars(sqlalchemy.select(Submission))} == {young, archived, waiting}
        assert [(e.action, e.target, e.detail) for e in audit.entries(session, old)] == [("expire", old, "older than 30 days")]


def test_export_holds_the_record_and_delete_removes_it_all(database: Database, tmp_path: Path) -> None:
    sid = _submit(database, "the text")
    with database.session() as session:
        user = session.scalar(sqlalchemy.select(User))
        assert user is not None
        session.add(Check(submission_id=sid, state="done", overall=42.0, report_json='{"overall": 42.0}', ranking_json="[]"))
        session.add(Decision(submission_id=sid, user_id=user.id, state="cleared", note="cited"))
        audit.record(session, user, "view", sid)
    with database.session() as session:
        submission = session.get(Submission, sid)
        assert submission is not None
        record = export(session, submission)
        assert (record["text"], record["checks"][0]["report"], record["decisions"][0]["note"]) == ("the text", {"overall": 42.0}, "cited")
        assert [(e["user"], e["action"]) for e in record["audit"]] == [("u", "view")]
        (tmp_path / "archive").mkdir()
        (tmp_path / "archive" / f"{sid}.txt").write_text("the text")
        submission.archived_doc = f"archive/{sid}.txt"
        assert delete(session, submission, user, tmp_path) is True
    assert not (tmp_path / "archive" / f"{sid}.txt").exists()
    with database.session() as session:
        assert session.scalars(sqlalchemy.select(Submission)).all() == []
        assert session.scalars(sqlalchemy.select(Check)).all() == []
        assert session.scalars(sqlalchemy.select(Decision)).all() == []
        assert [e.action for e in audit.entries(session, sid)] == ["delete", "view"]  # the log outlives it


def test_the_writer_thread_applies_the_retention_setting(database: Database, tmp_path: Path) -> None:
    from coderiv.archive.writer import ArchiveWriter
    from tests.support.archive import wait_until

    old = _submit(database, "old", now() - dt.timedelta(days=8))
    young = _submit(database, "young", now() - dt.timedelta(days=6))
    writer = ArchiveWriter(database, tmp_path / "no-index", interval=0.05, retention_days=7)
    writer.start()
    try:
        def ids() -> set[str]:
            with database.session() as session:
                return set(session.scalars(sqlalchemy.select(Submission.id)))

        assert wait_until(lambda: ids() == {young}, 30), (old, ids())
    finally:
        writer.stop()


def test_two_writers_archiving_one_batch_record_each_match_once(database: Database, tmp_path: Path) -> None:
    from coderiv.archive.models import DocumentMatch
    from coderiv.archive.writer import ArchiveWriter, record_matches
    from coderiv.index.index import Index
    from tests.support.archive import P, build_collection

    index = build_collection(tmp_path)
    sid = _submit(database, P + " copied")
    with database.session() as session:
        submission = session.get(Submission, sid)
        assert submission is not None
        submission.state, submission.archive_requested = "done", True
    assert ArchiveWriter(database, index).run_once() == [f"archive/{sid}.txt"]
    with database.session() as session:  # a second server's writer took the same batch meanwhile
        assert record_matches(session, Index.open(index), [f"archive/{sid}.txt"], ["chunks"]) == 0
    with database.session() as session:
        pairs = sorted((m.doc, m.match) for m in session.scalars(sqlalchemy.select(DocumentMatch)))
    assert pairs == [(f"archive/{sid}.txt", "src1.txt"), ("src1.txt", f"archive/{sid}.txt")]
