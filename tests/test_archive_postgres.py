"""The archive on a real PostgreSQL server (tests/support/postgres.py; skipped with the reason
where it cannot start): two worker processes share one queue and check every submission once,
the report is stored and read back, and an examiner archives one into the index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
import sqlalchemy  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from coderiv.archive.db import Database  # noqa: E402
from coderiv.archive.models import Check, Submission  # noqa: E402
from coderiv.archive.service import ArchiveSettings  # noqa: E402
from coderiv.index.index import Index  # noqa: E402
from coderiv.web.app import create_app  # noqa: E402
from coderiv.web.context import ServeSettings  # noqa: E402
from tests.support.archive import P, Q, add_users, build_collection, wait_until  # noqa: E402
from tests.support.postgres import fresh_database, postgres_server  # noqa: E402, F401

pytestmark = pytest.mark.slow


@pytest.fixture
def site(tmp_path: Path, postgres_server: str) -> Iterator[tuple[TestClient, dict[str, str], Path, str]]:  # noqa: F811
    index = build_collection(tmp_path)
    url = fresh_database(postgres_server, "web")
    tokens = add_users(url)
    with TestClient(create_app(ServeSettings(index, archive=ArchiveSettings(url, workers=2, lease=5)))) as client:
        yield client, tokens, index, url


def test_two_workers_check_every_submission_once_on_postgresql(site: tuple[TestClient, dict[str, str], Path, str]) -> None:
    client, tokens, index, url = site
    sam = {"Authorization": f"Bearer {tokens['sam']}"}
    ids = [client.post("/api/submissions", files={"file": (f"d{i}.txt", f"{P} {Q} {i}".encode())}, headers=sam).json()["id"]
           for i in range(6)]

    def states() -> list[str]:
        return [client.get(f"/api/submissions/{i}", headers=sam).json()["state"] for i in ids]

    assert wait_until(lambda: set(states()) == {"done"}, 120), states()
    database = Database(url)
    with database.session() as session:
        assert sorted(session.scalars(sqlalchemy.select(Submission.attempts))) == [1] * 6
        checks = session.execute(sqlalchemy.select(Check.submission_id, Check.state)).all()
        assert sorted(checks) == sorted((i, "done") for i in ids)  # one check each
        assert len({w for (w,) in session.execute(sqlalchemy.select(Check.worker))}) <= 2
    database.dispose()
    # P's 15 words and Q's 16 are found, the trailing digit is not: 31/32
    report = client.get(f"/api/submissions/{ids[0]}/report", params={"format": "json"}, headers=sam).json()
    assert (report["total_words"], report["covered_words"]) == (32, 31)
    eve = {"Authorization": f"Bearer {tokens['eve']}"}
    client.post(f"/api/submissions/{ids[0]}/archive", headers=eve)
    assert wait_until(lambda: client.get(f"/api/submissions/{ids[0]}", headers=eve).json()["archived_doc"], 60)
    assert Index.open(index).facts(f"archive/{ids[0]}.txt") is not None
