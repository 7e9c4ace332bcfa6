"""Faults of the archive's queue, on a real ``coderiv serve --archive`` process: a worker killed
by SIGKILL in the middle of a check, and the whole server killed by SIGKILL with checks running
and queued. In both, nothing accepted is lost: the cut-off check is run again and completes,
the others are checked once. Only the PIDs this test started (and the workers it reads from
the database or the process table below its server) are killed. The checks are slowed by
``CODERIV_ARCHIVE_FAULT_DELAY`` so that a kill lands mid-check."""

from __future__ import annotations

import os
import signal
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")

from tests.support.archive import (  # noqa: E402
    P,
    Q,
    R,
    add_users,
    build_collection,
    call,
    multipart,
    server_ready,
    start_server,
    wait_until,
)
from tests.support.network import free_port  # noqa: E402
from tests.support.processes import alive, children_of, stop_process  # noqa: E402

pytestmark = pytest.mark.faults

SLOW = {"CODERIV_ARCHIVE_FAULT_DELAY": "3"}
ARGS = ("--check-workers", "1", "--lease", "2")


def rows(db: Path, query: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(db, timeout=30) as connection:
        return connection.execute(query, args).fetchall()


def submit(base: str, token: str, name: str, text: str) -> str:
    body, kind = multipart({"file": (name, text.encode())})
    answer = call(base, token, "POST", "/api/submissions", body, kind)
    assert answer.get("state") == "queued", answer
    return str(answer["id"])


def checking(db: Path, sid: str) -> int | None:
    """The PID of the worker checking ``sid`` now (None when it is not being checked)."""
    found = rows(db, "select state, worker from submissions where id = ?", sid)
    if not found or found[0][0] != "checking":
        return None
    return int(str(found[0][1]).rsplit(":", 1)[1])


def all_done(db: Path, ids: list[str]) -> bool:
    states = dict(rows(db, "select id, state from submissions"))  # type: ignore[arg-type]
    return all(states.get(i) == "done" for i in ids)


@pytest.fixture
def archive(tmp_path: Path) -> tuple[Path, str, Path, dict[str, str]]:
    index = build_collection(tmp_path)
    db = tmp_path / "archive.sqlite"
    url = f"sqlite:///{db}"
    return index, url, db, add_users(url)


def test_a_worker_killed_mid_check_is_replaced_and_the_check_runs_again(
    archive: tuple[Path, str, Path, dict[str, str]], tmp_path: Path,
) -> None:
    index, url, db, tokens = archive
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(index, url, port, tmp_path / "serve.log", SLOW, ARGS)
    try:
        assert server_ready(base, tokens["sam"]), (tmp_path / "serve.log").read_text()
        first = submit(base, tokens["sam"], "first.txt", P + " " + Q)
        second = submit(base, tokens["sam"], "second.txt", R)
        victim = wait_until(lambda: checking(db, first), 60)
        assert victim and victim in children_of(server.pid)  # a worker process of this server
        os.kill(victim, signal.SIGKILL)
        assert wait_until(lambda: all_done(db, [first, second]), 120), rows(db, "select id, state, reason from submissions")
        assert not alive(victim)
        assert rows(db, "select attempts, overall from submissions where id = ?", first) == [(2, 100.0)]
        assert rows(db, "select state from checks where submission_id = ? order by id", first) == [("interrupted",), ("done",)]
        assert rows(db, "select attempts from submissions where id = ?", second) == [(1,)]  # checked once
        report = call(base, tokens["sam"], "GET", f"/api/submissions/{first}/report?format=json")
        assert (report["total_words"], report["overall"]) == (31, 100.0)
        assert victim not in children_of(server.pid) and len(children_of(server.pid)) >= 1  # replaced
    finally:
        stop_process(server)


def test_a_server_killed_mid_check_resumes_every_accepted_submission(
    archive: tuple[Path, str, Path, dict[str, str]], tmp_path: Path,
) -> None:
    index, url, db, tokens = archive
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    server = start_server(index, url, port, log, SLOW, ARGS)
    try:
        assert server_ready(base, tokens["sam"]), log.read_text()
        ids = [submit(base, tokens["sam"], f"doc{i}.txt", f"{P} {i}") for i in range(3)]
        assert wait_until(lambda: checking(db, ids[0]), 60)
        workers = children_of(server.pid)
        assert workers
        server.kill()  # SIGKILL, by its PID
        server.wait()
        assert wait_until(lambda: not any(alive(w) for w in workers), 20)  # its workers die with it
        assert rows(db, "select state from submissions where id = ?", ids[0]) == [("checking",)]
        assert [s for (s,) in rows(db, "select state from submissions where id != ?", ids[0])] == ["queued", "queued"]
    finally:
        stop_process(server)
    restarted = start_server(index, url, port, log, SLOW, ARGS)
    try:
        assert server_ready(base, tokens["sam"]), log.read_text()
        assert wait_until(lambda: all_done(db, ids), 120), rows(db, "select id, state, reason from submissions")
        assert rows(db, "select attempts from submissions where id = ?", ids[0]) == [(2,)]
        assert rows(db, "select state from checks where submission_id = ? order by id", ids[0]) == [("interrupted",), ("done",)]
        assert sorted(a for (a,) in rows(db, "select attempts from submissions where id != ?", ids[0])) == [1, 1]
        for sid in ids:  # P's 15 words are in src1.txt, the digit after them is not: 15/16
            assert call(base, tokens["sam"], "GET", f"/api/submissions/{sid}")["overall"] == 100 * 15 / 16
    finally:
        stop_process(restarted)
