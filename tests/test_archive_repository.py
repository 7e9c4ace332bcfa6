"""Sources with names and repository modes (issue 42 items 1 and 2), with real worker processes
and the real writer: in mode ``all`` a thesis that copies an archived thesis and a not yet
archived one names both ("student paper: alice.txt (Alice Novakova), archived ..., decision:
misconduct") within a word of the planted shares, the earlier pending thesis gains the later
match through the matches over time, a submitter sees the label without the link; a submission
may ask for another mode; and in mode ``none`` nothing of a checked submission remains after
its retention period."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
import sqlalchemy  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from coderiv.archive import audit  # noqa: E402
from coderiv.archive.models import Submission, now  # noqa: E402
from coderiv.archive.retention import expire  # noqa: E402
from coderiv.archive.service import ArchiveSettings  # noqa: E402
from coderiv.archive.states import RepositoryMode  # noqa: E402
from coderiv.index.index import Index  # noqa: E402
from coderiv.web.app import create_app  # noqa: E402
from coderiv.web.context import ServeSettings  # noqa: E402
from tests.support.archive import add_users, build_collection, wait_until  # noqa: E402

pytestmark = pytest.mark.slow  # worker processes and the writer run for real

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "so", "ti", "va", "pe", "du"]
#: 1000 made-up words, none in the collection or a stopword list
WORDS = ["".join(parts) for parts in itertools.product(SYLLABLES, repeat=3)]


def words(start: int, n: int) -> str:
    return " ".join(WORDS[start:start + n])


ALICE = words(0, 30)  # the archived thesis
BOB = words(100, 30)  # a thesis checked, not archived (a pending source in mode all)
OWN = words(200, 30)  # the later thesis's own words
#: the later thesis: 30 words of Alice's, 30 of Bob's, 30 of its own
CAROL = f"{ALICE} {BOB} {OWN}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, str], Path]]:
    root = tmp_path_factory.mktemp("archive-repository")
    index = build_collection(root)
    url = f"sqlite:///{root / 'archive.sqlite'}"
    tokens = add_users(url)
    settings = ArchiveSettings(url, workers=2, lease=5, retention_days=30, repository=RepositoryMode.ALL)
    app = create_app(ServeSettings(index, archive=settings))
    app.state.context.archive.writer.interval = 0.5  # type: ignore[union-attr]  # pool checked submissions promptly
    with TestClient(app) as client:
        yield client, tokens, index


def auth(tokens: dict[str, str], name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens[name]}"}


def submit(client: TestClient, headers: dict[str, str], text: str, name: str, **form: str) -> str:
    answer = client.post("/api/submissions", files={"file": (name, text.encode())}, data=form, headers=headers)
    assert answer.status_code == 202, answer.text
    return str(answer.json()["id"])


def settled(client: TestClient, headers: dict[str, str], sid: str, pooled: bool = True) -> dict[str, Any]:
    """The submission once checked (and, in mode all, in the collection as a pending source)."""
    def probe() -> dict[str, Any] | None:
        body: dict[str, Any] = client.get(f"/api/submissions/{sid}", headers=headers).json()
        ready = body["state"] in ("done", "failed") and (not pooled or body["archived_doc"] or body["state"] == "failed")
        return body if ready else None

    body = wait_until(probe, 120)
    assert body, f"submission {sid} did not settle"
    return body  # type: ignore[no-any-return]


def test_a_later_thesis_names_an_archived_and_a_pending_one(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, index = site
    sam, sue, eve = auth(tokens, "sam"), auth(tokens, "sue"), auth(tokens, "eve")
    alice = submit(client, sam, ALICE, "alice.txt", author="Alice Novakova", title="Lighthouses")
    assert settled(client, sam, alice)["pooled"] is not None
    client.post(f"/api/submissions/{alice}/decision", data={"state": "misconduct", "note": "x"}, headers=eve)
    client.post(f"/api/submissions/{alice}/archive", headers=eve)
    archived = wait_until(lambda: client.get(f"/api/submissions/{alice}", headers=eve).json()["archived"], 60)
    assert archived
    bob = submit(client, sue, BOB, "bob.txt", author="Bob Svoboda")
    bob_body = settled(client, sue, bob)
    assert (bob_body["archived"], bob_body["repository"], bob_body["archived_doc"]) == (None, "all", f"archive/{bob}.txt")
    seen_before = client.get("/api/archive/document", params={"id": f"archive/{bob}.txt"}, headers=eve).json()
    assert seen_before["matches"] == [] and seen_before["student_paper"]["url"] == f"/submissions/{bob}"

    carol = submit(client, sam, CAROL, "carol.txt", author="Carol Dvorak")
    body = settled(client, eve, carol)
    day = archived[:10]
    today = bob_body["created"][:10]
    named = {s["student_paper"]["label"]: s["share"] for s in body["sources"] if s["student_paper"]}
    assert set(named) == {
        f"student paper: alice.txt (Alice Novakova), archived {day}, decision: misconduct",
        f"student paper: bob.txt (Bob Svoboda), submitted {today}, not archived, decision: open",
    }
    for share in named.values():  # 30 of its 90 words each, within a word
        assert abs(share - 100 * 30 / 90) <= 100 / 90, body["sources"]
    assert body["top_source_label"] in named
    # the examiner gets the links to both submissions; the submitter (sam) only to their own
    links = {s["student_paper"]["submission_id"]: s["student_paper"]["url"] for s in body["sources"] if s["student_paper"]}
    assert links == {alice: f"/submissions/{alice}", bob: f"/submissions/{bob}"}
    mine = client.get(f"/api/submissions/{carol}", headers=sam).json()
    assert {s["student_paper"]["submission_id"]: s["student_paper"]["url"] for s in mine["sources"] if s["student_paper"]} == {
        alice: f"/submissions/{alice}", bob: None}
    report = client.get(f"/api/submissions/{carol}/report", params={"format": "json"}, headers=sam).json()
    assert {s["student_paper"] for s in report["sources"]} == set(named)
    shown = client.get(f"/api/submissions/{carol}/report", headers=sam).text  # the report page itself
    assert f"archive/{alice}.txt" not in shown and f"archive/{bob}.txt" not in shown
    assert f"student paper: alice.txt (Alice Novakova), archived {day}, decision: misconduct" in shown
    page = client.get(f"/submissions/{carol}", headers=sam).text
    assert f'<a class="paper" href="/submissions/{alice}">student paper: alice.txt (Alice Novakova)' in page
    assert '<span class="paper">student paper: bob.txt (Bob Svoboda)' in page
    # Bob's thesis, checked before Carol's arrived, gains her match (the matches over time)
    later = wait_until(lambda: client.get("/api/archive/document", params={"id": f"archive/{bob}.txt"}, headers=eve)
                       .json()["matches"], 60)
    assert [(m["doc_id"], m["new"], m["student_paper"]["filename"]) for m in later] == [(f"archive/{carol}.txt", True, "carol.txt")]
    assert Index.open(index).facts(f"archive/{bob}.txt") is not None  # a pending source in the index


def test_a_submission_may_ask_for_no_repository(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, index = site
    sam, eve = auth(tokens, "sam"), auth(tokens, "eve")
    sid = submit(client, sam, words(300, 25), "private.txt", repository="none")
    body = settled(client, sam, sid, pooled=False)
    assert (body["state"], body["repository"], body["archived_doc"]) == ("done", "none", None)
    refused = client.post(f"/api/submissions/{sid}/archive", headers=eve)
    assert refused.status_code == 400 and refused.json()["error"] == (
        f"submission {sid} was checked in repository mode none (check and forget); it is never archived")
    bad = client.post("/api/submissions", files={"file": ("x.txt", b"some words")}, data={"repository": "some"}, headers=sam)
    assert bad.json() == {"error": "the repository mode must be one of all, archived, none (got 'some')"}
    archive = client.app.state.context.archive  # type: ignore[attr-defined]
    archive.writer.run_once()
    assert Index.open(index).facts(f"archive/{sid}.txt") is None  # never pooled


def test_nothing_of_a_none_mode_submission_remains_after_its_retention(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, index = site
    sam = auth(tokens, "sam")
    forgotten = submit(client, sam, words(400, 25), "forget.txt", repository="none")
    pooled = submit(client, sam, words(500, 25), "pending.txt")  # mode all: a pending source, not archived
    settled(client, sam, forgotten, pooled=False)
    settled(client, sam, pooled)
    archive = client.app.state.context.archive  # type: ignore[attr-defined]
    folder = Path(str(Index.open(index).source))
    assert (folder / f"archive/{pooled}.txt").exists()
    with archive.database.session() as session:
        for sid in (forgotten, pooled):
            session.get(Submission, sid).created = now() - dt.timedelta(days=31)  # past the 30-day retention
    with archive.database.session() as session:
        gone = expire(session, 30, folder)
    assert set(gone) >= {forgotten, pooled} and gone.pooled
    archive.writer.run_once(reindex=True)
    with archive.database.session() as session:
        assert session.scalars(sqlalchemy.select(Submission).where(Submission.id.in_([forgotten, pooled]))).all() == []
        assert [e.action for e in audit.entries(session, forgotten)][0] == "expire"
    assert not (folder / f"archive/{pooled}.txt").exists() and not (folder / f"archive/{forgotten}.txt").exists()
    assert Index.open(index).facts(f"archive/{pooled}.txt") is None
    assert client.get(f"/api/submissions/{forgotten}", headers=sam).status_code == 404
