"""The webhook signs its body (issue 42 item 5): ``X-Coderiv-Signature: t=UNIX,sha256=HEX``, an
HMAC-SHA256 with the archive's secret over ``"UNIX." + body``, sent by the real sender to a
real receiver, which checks it as docs/archive.md says; a changed body, time or secret fails."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")

from coderiv.archive.db import Database  # noqa: E402
from coderiv.archive.models import Submission, User  # noqa: E402
from coderiv.archive.notifications import Sender, enqueue  # noqa: E402
from coderiv.archive.states import DecisionState, Role, SubmissionState  # noqa: E402
from coderiv.archive.webhook import signature, webhook_target  # noqa: E402
from coderiv.cli.main import main  # noqa: E402
from tests.support.network import loopback_http  # noqa: E402

SECRET = "a-secret-of-the-archive-0123"


def verify(secret: str, header: str, body: bytes, now: float, tolerance: float = 300) -> bool:
    """What a receiver does (docs/archive.md): recompute, compare in constant time, refuse old."""
    fields = dict(part.split("=", 1) for part in header.split(","))
    expected = hmac.new(secret.encode(), fields["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields["sha256"]) and abs(now - int(fields["t"])) <= tolerance


def test_the_signature_is_an_hmac_of_the_time_and_the_body() -> None:
    body = b'{"id": "x", "state": "done", "overall": 42.0}'
    header = signature(SECRET, body, 1_765_000_000)
    assert header == "t=1765000000,sha256=" + hmac.new(SECRET.encode(), b"1765000000." + body, hashlib.sha256).hexdigest()
    assert verify(SECRET, header, body, 1_765_000_100)
    assert not verify(SECRET, header, body.replace(b"42.0", b"4.0"), 1_765_000_100)  # the body changed
    assert not verify(SECRET, header.replace("t=1765000000", "t=1765000001"), body, 1_765_000_100)  # the time changed
    assert not verify("another-secret-0123456", header, body, 1_765_000_100)
    assert not verify(SECRET, header, body, 1_765_001_000)  # too old: a replay


class Receiver(BaseHTTPRequestHandler):
    got: list[tuple[str | None, bytes]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        Receiver.got.append((self.headers.get("X-Coderiv-Signature"), self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    with loopback_http(Receiver) as url:
        yield url


def test_the_sender_signs_each_delivery(tmp_path: Path, receiver: str) -> None:
    database = Database(f"sqlite:///{tmp_path / 'archive.sqlite'}")
    with database.session() as session:
        user = User(name="u", role=Role.SUBMITTER, token_hash="h")
        submission = Submission(user=user, filename="a.txt", format="txt", size=1, sha256="0" * 64, text="a",
                                state=SubmissionState.DONE, attempts=1, decision=DecisionState.OPEN, archive_requested=False)
        session.add(submission)
        session.flush()
        enqueue(session, submission.id, SubmissionState.DONE, 42.0)
    Receiver.got.clear()
    sent = Sender(database, webhook_target(receiver, True), 10, SECRET).send_due()
    assert sent == 1
    (header, body), = Receiver.got
    assert header is not None and verify(SECRET, header, body, time.time())
    assert json.loads(body) == {"id": submission.id, "state": "done", "overall": 42.0}
    with database.session() as session:
        enqueue(session, submission.id, SubmissionState.DONE, 43.0)
    Sender(database, webhook_target(receiver, True), 10, None).send_due()
    assert Receiver.got[1][0] is None  # no secret, no signature
    database.dispose()


def test_a_secret_without_a_webhook_or_too_short_is_one_line(tmp_path: Path) -> None:
    for extra in (["--webhook-secret", SECRET], ["--webhook", "http://127.0.0.1:9/h", "--webhook-allow-private",
                                                  "--webhook-secret", "short"]):
        result = CliRunner().invoke(main, ["serve", "--archive", "--index", str(tmp_path / "idx"), *extra])
        assert (result.exit_code, result.output.strip().splitlines()[-1]) == (
            1, "Error: --webhook-secret signs the deliveries of --webhook: give both, the secret at least 16 characters")
