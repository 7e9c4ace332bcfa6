"""The archive service's smaller guarantees (issue 44 item 6): a database outage answers 503
with ``Retry-After`` (a real PostgreSQL server stopped under the app), only an examiner may ask
for a submission to be archived (as the page offers it), and the retention setting is applied
when the server starts, before it answers anything."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
from fastapi.testclient import TestClient  # noqa: E402

from coderiv.archive.db import Database  # noqa: E402
from coderiv.archive.models import AuditEntry, Submission, now  # noqa: E402
from coderiv.archive.service import ArchiveSettings  # noqa: E402
from coderiv.archive.writer import ArchiveWriter  # noqa: E402
from coderiv.web.app import create_app  # noqa: E402
from coderiv.web.context import ServeSettings  # noqa: E402
from tests.support.archive import P, add_users, build_collection  # noqa: E402
from tests.support.postgres import start_postgres  # noqa: E402


def old_submission(database: Database, sid: str, days: float, **values: object) -> None:
    with database.session() as session:
        session.add(Submission(id=sid, user_id=1, created=now() - dt.timedelta(days=days), filename="a.txt", format="txt",
                               size=1, sha256="0" * 64, text="a", state="done", attempts=1, decision="open", **values))


def test_the_retention_setting_is_applied_when_the_writer_starts(tmp_path: Path) -> None:
    index = build_collection(tmp_path)
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    add_users(url)
    database = Database(url)
    old_submission(database, "o" * 32, 10)
    old_submission(database, "n" * 32, 0.5)
    writer = ArchiveWriter(database, index, interval=3600, retention_days=1)
    writer.start()
    try:
        with database.session() as session:  # no wait: start returned after expiring
            assert [s.id for s in session.query(Submission)] == ["n" * 32]
            assert [(e.action, e.target) for e in session.query(AuditEntry)] == [("expire", "o" * 32)]
    finally:
        writer.stop()
        database.dispose()


def test_only_an_examiner_may_ask_to_archive_a_submission(tmp_path: Path) -> None:
    index = build_collection(tmp_path)
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    tokens = add_users(url)
    client = TestClient(create_app(ServeSettings(index, archive=ArchiveSettings(url, workers=1))))  # no lifespan: no workers
    upload = {"file": ("t.txt", P.encode())}
    refused = client.post("/api/submissions", files=upload, data={"archive": "true"}, headers={"Authorization": f"Bearer {tokens['sam']}"})
    assert (refused.status_code, refused.json()) == (403, {
        "error": "a submitter may not ask to archive a submission: an examiner decides what joins the collection"})
    page = client.post("/submissions", files=upload, data={"archive": "true"}, headers={"Authorization": f"Bearer {tokens['sam']}"})
    assert page.status_code == 403
    plain = client.post("/api/submissions", files=upload, headers={"Authorization": f"Bearer {tokens['sam']}"})
    examiner = client.post("/api/submissions", files=upload, data={"archive": "true"}, headers={"Authorization": f"Bearer {tokens['eve']}"})
    assert (plain.status_code, examiner.status_code) == (202, 202)
    database = Database(url)
    with database.session() as session:
        assert sorted((s.user.name, s.archive_requested) for s in session.query(Submission)) == [("eve", True), ("sam", False)]
    database.dispose()


@pytest.mark.slow
def test_a_database_outage_answers_503_with_retry_after(tmp_path: Path) -> None:
    index = build_collection(tmp_path)
    server = start_postgres()
    url = next(server)
    tokens = add_users(url)
    eve = {"Authorization": f"Bearer {tokens['eve']}"}
    client = TestClient(create_app(ServeSettings(index, archive=ArchiveSettings(url, workers=1))))
    try:
        assert client.get("/api/submissions", headers=eve).status_code == 200
    finally:
        server.close()  # PostgreSQL stopped (by its PID) under the running app
    for path in ("/api/submissions", "/api/submissions/" + "0" * 32):
        answer = client.get(path, headers=eve)
        assert (answer.status_code, answer.headers["retry-after"], answer.json()) == (
            503, "5", {"error": "the archive's database does not answer; try again in a few seconds"}), path
    page = client.get("/submissions", headers=eve)
    assert page.status_code == 503 and page.headers["retry-after"] == "5"
    assert "the archive&#39;s database does not answer" in page.text
    upload = client.post("/api/submissions", files={"file": ("t.txt", P.encode())}, headers=eve)
    assert (upload.status_code, upload.headers["retry-after"]) == (503, "5")
