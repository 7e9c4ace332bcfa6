"""A check that overlaps a new index generation (issue 44 item 1): the archive's real writer
publishes a generation (and removes the old one) while a check runs on the old one, at the
moment the report re-reads its candidates' texts, just before it opens the pair table. The
check must end done on the generation it opened (a reader holds what it opened: the manifest's
digest is taken at open, never re-read by path), and a check that meets what the new
generation removed (a deleted archived source) runs again on the current generation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")

from coderiv.archive.checker import Checker  # noqa: E402
from coderiv.archive.db import Database  # noqa: E402
from coderiv.archive.models import Submission  # noqa: E402
from coderiv.archive.retention import delete  # noqa: E402
from coderiv.archive.writer import ArchiveWriter, archive_doc_id  # noqa: E402
from coderiv.index.reader import live_version  # noqa: E402
from coderiv.text.sources import DocumentTexts  # noqa: E402
from tests.support.archive import P, Q, R, add_users, build_collection  # noqa: E402


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[tuple[Path, Database, ArchiveWriter]]:
    index = build_collection(tmp_path)
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    add_users(url)
    database = Database(url)
    yield index, database, ArchiveWriter(database, index)
    database.dispose()


def archived(database: Database, writer: ArchiveWriter, text: str) -> str:
    """A checked submission of ``text`` archived by the real writer (a new generation); its id."""
    with database.session() as session:
        submission = Submission(user_id=1, filename="a.txt", format="txt", size=len(text), sha256="0" * 64, text=text,
                                state="done", attempts=1, decision="open", archive_requested=True)
        session.add(submission)
        session.flush()
        sid = submission.id
    assert writer.run_once() == [archive_doc_id(sid)]
    return sid


def during_the_report(monkeypatch: pytest.MonkeyPatch, action: Callable[[], Any]) -> list[Any]:
    """Run ``action`` once, the first time a report re-reads its candidates' texts (mid-check:
    ranking and candidates done on the opened generation, the pair table not yet opened)."""
    done: list[Any] = []
    real = DocumentTexts.get

    def get(self: DocumentTexts, doc_ids: Any) -> dict[str, str]:
        if not done:
            done.append(action())
        return real(self, doc_ids)

    monkeypatch.setattr(DocumentTexts, "get", get)
    return done


def test_a_check_overlapping_a_new_generation_ends_done_on_the_one_it_opened(
    archive: tuple[Path, Database, ArchiveWriter], monkeypatch: pytest.MonkeyPatch,
) -> None:
    index, database, writer = archive
    checker = Checker(index)
    opened = checker.index().version
    during = during_the_report(monkeypatch, lambda: archived(database, writer, R + " an unrelated archived text"))
    result = checker.check(P + " " + Q, "q.txt")
    assert during and live_version(index) != opened and not (index / opened).exists()  # the old folder is gone
    # P's 15 words in src1 and Q's 16 in src2 (tests/test_archive_web.py), on the generation it opened
    assert (result.generation, result.overall, result.top_source) == (opened, 100.0, "src2.txt")


def test_a_check_whose_source_was_deleted_under_it_runs_again_on_the_current_generation(
    archive: tuple[Path, Database, ArchiveWriter], monkeypatch: pytest.MonkeyPatch,
) -> None:
    index, database, writer = archive
    sid = archived(database, writer, R)
    checker = Checker(index)
    opened = checker.index().version

    def remove() -> None:  # as DELETE /api/submissions/{id} does: the file, then the index
        with database.session() as session:
            submission = session.get(Submission, sid)
            assert submission is not None
            delete(session, submission, None, index.parent / "docs")
        writer.run_once(reindex=True)

    during = during_the_report(monkeypatch, remove)
    result = checker.check(R, "copy.txt")
    assert during and result.generation == live_version(index) != opened
    # the only source was removed: nothing matches on the current generation
    assert (result.overall, result.top_source) == (0.0, None)


def test_a_check_the_index_keeps_changing_under_goes_back_to_the_queue(
    archive: tuple[Path, Database, ArchiveWriter], monkeypatch: pytest.MonkeyPatch,
) -> None:
    from coderiv.archive import checker as checking
    from coderiv.archive.models import Check
    from coderiv.archive.queue import claim
    from coderiv.archive.worker import Worker

    index, database, _ = archive
    with database.session() as session:
        session.add(Submission(id="s" * 32, user_id=1, filename="q.txt", format="txt", size=3, sha256="0" * 64, text=P,
                               state="queued", attempts=0, decision="open"))
    worker = Worker(database, index, lease=60.0, notify=False, parent=None)
    with database.session() as session:
        claimed = claim(session, worker.name, 60.0)
    assert claimed is not None
    runs: list[str] = []

    def vanished(self: Checker, opened: Any, *args: Any) -> Any:
        runs.append(opened.version)
        raise FileNotFoundError("gen-000001/manifest.json")

    monkeypatch.setattr(Checker, "_check", vanished)
    monkeypatch.setattr(Checker, "moved", lambda self, opened: True)  # a writer publishing all along
    worker.check(claimed)
    assert len(runs) == checking.RETRIES + 1
    with database.session() as session:
        submission = session.get(Submission, "s" * 32)
        assert submission is not None
        assert (submission.state, submission.attempts, submission.worker, submission.reason) == ("queued", 0, None, None)
        check = session.get(Check, claimed.check_id)
        assert check is not None
        why = f"the index changed under the check {checking.RETRIES + 1} times; queued again"
        assert (check.state, check.reason) == ("interrupted", why)


@pytest.mark.slow
def test_checks_overlapping_the_archive_writers_publications_all_end_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real server (two worker processes, the writer thread): examiners' submissions archived
    as they are checked while plain ones are checked, every check paused one second after it
    opened the index so that publications land inside checks."""
    from fastapi.testclient import TestClient

    from coderiv.archive.service import ArchiveSettings
    from coderiv.web.app import create_app
    from coderiv.web.context import ServeSettings
    from tests.support.archive import wait_until

    monkeypatch.setenv("CODERIV_ARCHIVE_FAULT_DELAY", "1")
    index = build_collection(tmp_path)
    url = f"sqlite:///{tmp_path / 'archive.sqlite'}"
    tokens = add_users(url)
    eve, sam = ({"Authorization": f"Bearer {tokens[n]}"} for n in ("eve", "sam"))
    first = live_version(index)
    with TestClient(create_app(ServeSettings(index, archive=ArchiveSettings(url, workers=2, lease=10)))) as client:
        writer = client.app.state.context.archive.writer  # type: ignore[attr-defined]
        ids = []
        for i in range(12):
            archived_one = i % 2 == 0
            text = f"{R} archived number {i} with words of its own {i * 7}" if archived_one else f"{P} {Q} plain {i}"
            answer = client.post("/api/submissions", files={"file": (f"d{i}.txt", text.encode())},
                                 data={"archive": "true"} if archived_one else {}, headers=eve if archived_one else sam)
            ids.append(answer.json()["id"])

        def states() -> list[str] | None:
            writer.wake()  # publish as soon as a checked one waits
            found = [client.get(f"/api/submissions/{i}", headers=eve).json() for i in ids]
            settled = all(s["state"] in ("done", "failed") for s in found) and all(
                s["archived_doc"] for s in found[::2] if s["state"] == "done")
            return [s["state"] for s in found] if settled else None

        final = wait_until(states, 180, 0.3)
        generations = {c["generation"] for i in ids for c in client.get(f"/api/submissions/{i}", headers=eve).json()["checks"]}
    assert final == ["done"] * 12
    assert int(live_version(index)[4:]) - int(first[4:]) >= 3  # at least three publications
    assert len(generations) >= 2  # checks ran on several generations
