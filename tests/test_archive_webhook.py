"""The archive's webhook (issue 44 items 2 and 3): a URL that may not be used is refused at
start in one line (not a URL, a scheme other than http(s), a loopback, link-local or private
address without ``--webhook-allow-private``); a delivery ends within its whole-request deadline
against a receiver that answers a byte a second; deliveries are recorded in the database and
retried with backoff; and a dripping receiver never delays a check."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
import sqlalchemy  # noqa: E402

from coderiv.archive.db import Database  # noqa: E402
from coderiv.archive.models import Notification, Submission  # noqa: E402
from coderiv.archive.notifications import MAX_DELIVERIES, Sender, backoff, enqueue  # noqa: E402
from coderiv.archive.webhook import post, refused_kind, webhook_target  # noqa: E402
from coderiv.cli.main import main  # noqa: E402
from coderiv.errors import CoderivError  # noqa: E402
from tests.support.dripping import Dripper  # noqa: E402
from tests.support.postgres import fresh_database, postgres_server  # noqa: E402, F401

ALLOW = "pass --webhook-allow-private to allow a receiver on this machine or network"


@pytest.mark.parametrize(("url", "message"), [
    ("not a url", "Error: --webhook 'not a url' must be an http:// or https:// URL (got no scheme)"),
    ("file:///etc/passwd", "Error: --webhook 'file:///etc/passwd' must be an http:// or https:// URL (got file:)"),
    ("ftp://example.org/x", "Error: --webhook 'ftp://example.org/x' must be an http:// or https:// URL (got ftp:)"),
    ("http://", "Error: --webhook 'http://' names no host"),
    ("http://host:99999/", "Error: --webhook 'http://host:99999/' is not a URL (Port out of range 0-65535)"),
    ("http://127.0.0.1:9/hook", f"Error: --webhook 'http://127.0.0.1:9/hook' reaches a loopback address (127.0.0.1); {ALLOW}"),
    ("http://169.254.169.254/latest", f"Error: --webhook 'http://169.254.169.254/latest' reaches a link-local address "
                                      f"(169.254.169.254); {ALLOW}"),
    ("https://10.1.2.3/hook", f"Error: --webhook 'https://10.1.2.3/hook' reaches a private address (10.1.2.3); {ALLOW}"),
    ("http://[::ffff:192.168.0.1]/", f"Error: --webhook 'http://[::ffff:192.168.0.1]/' reaches a private address "
                                     f"(::ffff:192.168.0.1); {ALLOW}"),
])
def test_a_webhook_that_may_not_be_used_is_refused_at_start_in_one_line(tmp_path: Path, url: str, message: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--archive", "--index", str(tmp_path / "idx"), "--webhook", url])
    assert (result.exit_code, result.output.strip().splitlines()) == (1, [message])
    assert not (tmp_path / "idx.archive.sqlite").exists()  # refused before the database was made


def test_the_rule_of_addresses_and_the_operators_flag() -> None:
    assert [refused_kind(a) for a in ("127.0.0.1", "::1", "169.254.1.1", "fe80::1", "10.0.0.1", "172.16.0.1", "192.168.1.1",
                                      "0.0.0.0", "224.0.0.1", "93.184.216.34", "2606:4700::1111")] == [
        "loopback", "loopback", "link-local", "link-local", "private", "private", "private", "unspecified", "multicast", None, None]
    public = webhook_target("https://93.184.216.34/hooks/coderiv?k=1")
    assert (public.scheme, public.host, public.port, public.path) == ("https", "93.184.216.34", 443, "/hooks/coderiv?k=1")
    local = webhook_target("http://127.0.0.1:8123", allow_private=True)
    assert (local.port, local.path, local.allow_private) == (8123, "/", True)
    with pytest.raises(CoderivError, match="^--webhook 'http://localhost/' reaches a loopback address"):
        webhook_target("http://localhost/")  # a name is judged by what it resolves to
    assert "--webhook-allow-private" in CliRunner().invoke(main, ["serve", "--help"]).output


def test_a_delivery_ends_at_its_deadline_whatever_the_receiver_drips() -> None:
    dripper = Dripper(interval=1.0)  # the whole answer would take 66 s
    try:
        target = webhook_target(dripper.url, allow_private=True)
        with pytest.raises(CoderivError) as raised:
            post(target, b'{"id": "x"}', {"Content-Type": "application/json"}, deadline=2.0)
        assert str(raised.value) == "no answer from 127.0.0.1 within 2 s"
        assert dripper.bodies == [{"id": "x"}]
        assert wait(lambda: dripper.endings == ["cut"])  # the client hung up
        assert 1 <= dripper.sent[0] <= 4 < len(dripper.answer)  # a few bytes of 66, not the answer
    finally:
        dripper.close()


def wait(probe: object, seconds: float = 20.0) -> bool:
    from tests.support.archive import wait_until

    return bool(wait_until(probe, seconds))  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    from tests.support.archive import add_users

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    else:
        url = fresh_database(request.getfixturevalue("postgres_server"), f"hook_{tmp_path.name[-20:].replace('-', '_')}")
    add_users(url)
    db = Database(url)
    with db.session() as session:
        session.add(Submission(id="s" * 32, user_id=1, filename="q.txt", format="txt", size=1, sha256="0" * 64, text="q",
                               state="done", attempts=1, decision="open"))
        session.flush()
        enqueue(session, "s" * 32, "done", 100.0)
    yield db
    db.dispose()


def delivery(database: Database) -> Notification:
    with database.session() as session:
        found = session.scalars(sqlalchemy.select(Notification)).one()
        session.expunge(found)
        return found


def test_a_failed_delivery_is_retried_with_backoff_then_delivered(database: Database) -> None:
    refusing = Dripper(interval=0.0, status=500)
    try:
        sender = Sender(database, webhook_target(refusing.url, allow_private=True), deadline=5.0)
        assert sender.send_due() == 1
        first = delivery(database)
        assert (first.state, first.attempts, first.last_error) == ("pending", 1, "answered 500")
        waited = (first.next_at - dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)).total_seconds()
        assert 0 < waited <= backoff(1) == 5.0
        assert sender.send_due() == 0  # not due yet
        assert refusing.bodies == [{"id": "s" * 32, "state": "done", "overall": 100.0}]
    finally:
        refusing.close()
    answering = Dripper(interval=0.0)
    try:
        sender = Sender(database, webhook_target(answering.url, allow_private=True), deadline=5.0)
        due_now(database)
        assert sender.send_due() == 1
        done = delivery(database)
        assert (done.state, done.attempts, done.last_error) == ("delivered", 2, None) and done.delivered is not None
        assert answering.bodies == [{"id": "s" * 32, "state": "done", "overall": 100.0}]
    finally:
        answering.close()


def due_now(database: Database) -> None:
    with database.session() as session:
        session.execute(sqlalchemy.update(Notification).values(next_at=dt.datetime(2000, 1, 1)))


def test_a_delivery_is_given_up_after_its_last_try(database: Database) -> None:
    assert [backoff(n) for n in range(1, 10)] == [5, 10, 20, 40, 80, 160, 320, 600, 600]
    sender = Sender(database, webhook_target("http://127.0.0.1:9/hook", allow_private=True), deadline=2.0)  # nobody listens
    for _ in range(MAX_DELIVERIES):
        due_now(database)
        assert sender.send_due() == 1
    gone = delivery(database)
    assert (gone.state, gone.attempts) == ("given up", MAX_DELIVERIES)
    assert gone.last_error is not None and gone.last_error.startswith("127.0.0.1: ConnectionRefusedError")
    due_now(database)
    assert sender.send_due() == 0


@pytest.mark.slow
def test_a_dripping_receiver_never_delays_a_check(tmp_path: Path) -> None:
    """One check worker; the receiver drips a byte every 2 s and the delivery's deadline is a
    minute: every submission is checked while the first delivery is still being answered."""
    from fastapi.testclient import TestClient

    from coderiv.archive.service import ArchiveSettings
    from coderiv.web.app import create_app
    from coderiv.web.context import ServeSettings
    from tests.support.archive import P, Q, R, add_users, build_collection, wait_until

    index = build_collection(tmp_path)
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    tokens = add_users(url)
    sam = {"Authorization": f"Bearer {tokens['sam']}"}
    dripper = Dripper(interval=2.0)
    settings = ArchiveSettings(url, workers=1, lease=10, webhook=dripper.url, webhook_allow_private=True, webhook_deadline=60)
    try:
        with TestClient(create_app(ServeSettings(index, archive=settings))) as client:
            ids = [client.post("/api/submissions", files={"file": (f"d{i}.txt", text.encode())}, headers=sam).json()["id"]
                   for i, text in enumerate((P, Q, R))]

            def states() -> list[str]:
                return [client.get(f"/api/submissions/{i}", headers=sam).json()["state"] for i in ids]

            assert wait_until(lambda: states() == ["done"] * 3, 120), states()
            assert wait_until(lambda: dripper.endings, 30)  # the sender polls once a second
            assert dripper.endings[0] == "open" and dripper.sent[0] < len(dripper.answer)  # still dripping the first answer
            dripper.release()
            database = client.app.state.context.archive.database  # type: ignore[attr-defined]

            def delivered() -> list[str]:
                with database.session() as session:
                    return list(session.scalars(sqlalchemy.select(Notification.state)))

            assert wait_until(lambda: delivered() == ["delivered"] * 3, 60), delivered()
        assert sorted(b["id"] for b in dripper.bodies) == sorted(ids)
    finally:
        dripper.close()
