"""The archive through the web app (``coderiv serve --archive``) with real worker processes:
submit, check, report, decide, archive into the index (the older document gains the match and
says it is new), delete, export, the webhook; and the roles: every route refuses the roles it
must refuse, and one submitter cannot read, list or guess another's submission."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")
pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
from fastapi.testclient import TestClient  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402

from coderiv.archive.models import Submission  # noqa: E402
from coderiv.archive.service import ArchiveSettings  # noqa: E402
from coderiv.index.index import Index  # noqa: E402
from coderiv.pairs.table import PairTable  # noqa: E402
from coderiv.web.app import create_app  # noqa: E402
from coderiv.web.context import ServeSettings  # noqa: E402
from tests.support.archive import P, Q, R, add_users, build_collection, wait_until  # noqa: E402
from tests.support.network import loopback_http  # noqa: E402

pytestmark = pytest.mark.slow  # worker processes start and check for real (a few seconds a module)


class Hook(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        Hook.received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def webhook() -> Iterator[str]:
    with loopback_http(Hook) as url:
        yield url


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, webhook: str) -> Iterator[tuple[TestClient, dict[str, str], Path]]:
    root = tmp_path_factory.mktemp("archive-web")
    index = build_collection(root)
    url = f"sqlite:///{root / 'archive.sqlite'}"
    tokens = add_users(url)
    app = create_app(ServeSettings(index, archive=ArchiveSettings(url, workers=2, lease=5, webhook=webhook, webhook_allow_private=True)))
    with TestClient(app) as client:
        yield client, tokens, index


def auth(tokens: dict[str, str], name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens[name]}"}


def submit(client: TestClient, headers: dict[str, str], text: str, name: str = "q.txt", **form: str) -> str:
    answer = client.post("/api/submissions", files={"file": (name, text.encode())}, data=form, headers=headers)
    assert answer.status_code == 202, answer.text
    assert answer.json()["state"] == "queued"
    return str(answer.json()["id"])


def finished(client: TestClient, headers: dict[str, str], sid: str) -> dict[str, Any]:
    def probe() -> dict[str, Any] | None:
        body: dict[str, Any] = client.get(f"/api/submissions/{sid}", headers=headers).json()
        return body if body["state"] in ("done", "failed") else None

    body = wait_until(probe, 90)
    assert body, f"submission {sid} was not checked in 90 s"
    return body  # type: ignore[no-any-return]


def test_a_submission_is_checked_once_with_its_report(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    sam = auth(tokens, "sam")
    sid = submit(client, sam, P + " " + Q)
    assert re.fullmatch(r"[0-9a-f]{32}", sid)  # 128 random bits
    body = finished(client, sam, sid)
    # P's 15 words are in src1 and Q's 16 in src2 (tests/test_web.py): 100% overall, 16/31 and 15/31
    assert (body["state"], body["overall"], body["top_source"], body["attempts"]) == ("done", 100.0, "src2.txt", 1)
    assert body["sources"] == [{"doc_id": "src2.txt", "share": 100 * 16 / 31, "student_paper": None},
                               {"doc_id": "src1.txt", "share": 100 * 15 / 31, "student_paper": None}]  # not earlier theses
    assert [c["state"] for c in body["checks"]] == ["done"]
    exported = client.get(f"/api/submissions/{sid}/export", headers=sam).json()
    assert exported["text"] == P + " " + Q  # read by the worker; the uploaded bytes are not kept
    archive = client.app.state.context.archive  # type: ignore[attr-defined]
    with archive.database.session() as session:
        assert session.get(Submission, sid).upload is None
    assert body["report_url"] == f"/api/submissions/{sid}/report"
    report = client.get(body["report_url"], params={"format": "json"}, headers=sam).json()
    assert (report["total_words"], report["covered_words"], report["overall"]) == (31, 31, 100.0)
    page = client.get(body["report_url"], headers=sam)
    assert "sandbox allow-scripts" in page.headers["content-security-policy"] and "src1.txt" in page.text
    assert wait_until(lambda: [h for h in Hook.received if h["id"] == sid], 10) == [{"id": sid, "state": "done", "overall": 100.0}]


def test_a_document_without_words_fails_with_the_reason(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    body = finished(client, auth(tokens, "sam"), submit(client, auth(tokens, "sam"), "... --- !!!", "dots.txt"))
    assert body["state"] == "failed"
    assert body["reason"].startswith("dots.txt has no words after analysis")
    binary = finished(client, auth(tokens, "sam"), submit(client, auth(tokens, "sam"), "\x00\x01\x02\x03" * 300, "data.bin"))
    assert binary["state"] == "failed" and binary["reason"].startswith("data.bin"), binary["reason"]
    refused = client.post(f"/api/submissions/{body['id']}/archive", headers=auth(tokens, "eve"))
    assert refused.status_code == 400 and refused.json()["error"].endswith("only a checked one is archived")


def test_the_list_is_paginated_and_a_submitter_lists_only_their_own(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    sue = auth(tokens, "sue")
    mine = [submit(client, sue, f"{R} number {i}", f"sue{i}.txt") for i in range(3)]
    listed = client.get("/api/submissions", params={"per_page": 2}, headers=sue).json()
    second = client.get("/api/submissions", params={"per_page": 2, "page": 2}, headers=sue).json()
    assert (listed["total"], len(listed["submissions"]), len(second["submissions"])) == (3, 2, 1)
    assert {s["id"] for s in listed["submissions"] + second["submissions"]} == set(mine)
    everyone = client.get("/api/submissions", params={"per_page": 100}, headers=auth(tokens, "eve")).json()
    assert set(mine) < {s["id"] for s in everyone["submissions"]} and everyone["total"] > 3
    assert {s["user"] for s in everyone["submissions"]} >= {"sam", "sue"}


def test_one_submitter_cannot_read_list_or_guess_anothers_submission(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    sam, sue = auth(tokens, "sam"), auth(tokens, "sue")
    sid = submit(client, sam, P, "private.txt")
    finished(client, sam, sid)
    for path in (f"/api/submissions/{sid}", f"/api/submissions/{sid}/report", f"/api/submissions/{sid}/report?format=json",
                 f"/api/submissions/{sid}/export", f"/submissions/{sid}"):
        assert client.get(path, headers=sue).status_code == 404, path
        assert client.get(path, headers=sam).status_code == 200, path
    # another's id answers exactly as an id that does not exist
    other = client.get(f"/api/submissions/{sid}", headers=sue).json()["error"]
    assert other == f"no submission {sid!r}"
    guess = "0" * 32
    assert client.get(f"/api/submissions/{guess}", headers=sue).json()["error"] == f"no submission {guess!r}"
    assert sid not in client.get("/api/submissions", params={"per_page": 100}, headers=sue).text
    assert sid not in client.get("/submissions", headers=sue).text
    assert client.post(f"/api/submissions/{sid}/decision", data={"state": "cleared"}, headers=sue).status_code == 403


def test_no_token_or_a_revoked_one_is_refused(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    assert client.get("/api/submissions").status_code == 401
    assert client.get("/api/submissions", headers={"Authorization": "Bearer nope"}).json()["error"].startswith(
        "unknown or revoked token")
    made = client.post("/api/users", data={"name": "tmp", "role": "submitter"}, headers=auth(tokens, "ada")).json()
    assert client.get("/api/submissions", headers={"Authorization": f"Bearer {made['token']}"}).status_code == 200
    assert client.delete("/api/users/tmp", headers=auth(tokens, "ada")).json() == {"name": "tmp", "state": "revoked"}
    assert client.get("/api/submissions", headers={"Authorization": f"Bearer {made['token']}"}).status_code == 401
    users = client.get("/api/users", headers=auth(tokens, "ada")).json()["users"]
    assert {"name": "tmp", "role": "submitter", "revoked": True} in users


def test_the_cookie_from_token_in_the_address_signs_a_browser_in(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    answer = client.get("/submissions", params={"token": tokens["eve"]})
    assert answer.status_code == 200 and "Signed in as <strong>eve</strong> (examiner)" in answer.text
    assert "HttpOnly; SameSite=Strict" in answer.headers["set-cookie"]
    client.cookies.clear()


def test_decision_archive_and_the_older_document_gains_the_match(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, index = site
    sam, eve = auth(tokens, "sam"), auth(tokens, "eve")
    sid = submit(client, sam, P + " and then " + R, "thesis.txt")
    finished(client, sam, sid)
    decided = client.post(f"/api/submissions/{sid}/decision", data={"state": "misconduct", "note": "copied src1"}, headers=eve)
    assert decided.json()["decision"] == "misconduct"
    assert [(d["by"], d["state"], d["note"]) for d in decided.json()["decisions"]] == [("eve", "misconduct", "copied src1")]
    assert client.post(f"/api/submissions/{sid}/decision", data={"state": "guilty"}, headers=eve).json()["error"] == (
        "the decision must be one of open, cleared, misconduct (got 'guilty')")
    first_look = client.get("/api/archive/document", params={"id": "src1.txt"}, headers=eve).json()
    assert client.post(f"/api/submissions/{sid}/archive", headers=eve).json()["archive_requested"] is True
    doc = f"archive/{sid}.txt"
    assert wait_until(lambda: client.get(f"/api/submissions/{sid}", headers=eve).json()["archived_doc"], 60) == doc
    opened = Index.open(index)
    assert opened.facts(doc) is not None and (Path(str(opened.source)) / doc).read_text() == P + " and then " + R
    assert doc in [d for _, _, d in PairTable.open(opened, "chunks").similar("src1.txt")]  # the pair table, incrementally
    looked = client.get("/api/archive/document", params={"id": "src1.txt"}, headers=eve).json()
    new = [m for m in looked["matches"] if m["doc_id"] == doc]
    assert len(new) == 1 and new[0]["new"] is True and looked["last_seen"] is not None
    assert doc not in {m["doc_id"] for m in first_look["matches"]}
    again = client.get("/api/archive/document", params={"id": "src1.txt"}, headers=eve).json()
    assert [m["new"] for m in again["matches"] if m["doc_id"] == doc] == [False]  # seen now
    page = client.get("/archive/document", params={"id": "src1.txt"}, headers=eve).text
    assert doc in page
    # checked again after archiving: never its own source; the history keeps both checks
    assert client.post(f"/api/submissions/{sid}/recheck", headers=sam).status_code == 403
    assert client.post(f"/api/submissions/{sid}/recheck", headers=eve).json()["state"] == "queued"
    rechecked = finished(client, eve, sid)
    assert [c["state"] for c in rechecked["checks"]] == ["done", "done"] and rechecked["top_source"] == "src1.txt"
    # a later copy of the archived thesis is checked against it
    later = submit(client, sam, P + " and then " + R, "copy.txt")
    assert finished(client, sam, later)["top_source"] == doc
    archived_later = client.post(f"/api/submissions/{later}/archive", headers=eve)
    assert archived_later.status_code == 200
    wait_until(lambda: client.get(f"/api/submissions/{later}", headers=eve).json()["archived_doc"], 60)
    fresh = client.get("/api/archive/document", params={"id": "src1.txt"}, headers=eve).json()["matches"]
    assert {m["doc_id"]: m["new"] for m in fresh}[f"archive/{later}.txt"] is True
    assert {m["doc_id"]: m["new"] for m in fresh}[doc] is False
    exported = client.get(f"/api/submissions/{sid}/export", headers=eve).json()
    assert exported["text"] == P + " and then " + R and exported["decisions"][0]["note"] == "copied src1"
    actions = {e["action"] for e in exported["audit"]}
    assert {"submit", "decide", "archive", "recheck"} <= actions and "view" not in actions  # reads of the page: no rows
    logged = client.get("/api/audit", params={"target": sid}, headers=auth(tokens, "ada")).json()["entries"]
    assert logged[0]["action"] == "export" and logged[0]["user"] == "eve"  # newest first: the export just made
    assert ("sam", "submit", "thesis.txt") in {(e["user"], e["action"], e["detail"]) for e in logged}
    assert ("eve", "decide", "misconduct: copied src1") in {(e["user"], e["action"], e["detail"]) for e in logged}
    # deleting the archived submission removes its text, reports and file; the index forgets it
    assert client.delete(f"/api/submissions/{later}", headers=eve).json() == {"id": later, "state": "deleted"}
    assert client.get(f"/api/submissions/{later}", headers=eve).status_code == 404
    assert Index.open(index).facts(f"archive/{later}.txt") is None
    assert not (Path(str(opened.source)) / f"archive/{later}.txt").exists()


# -- roles: every route of the app, each role -------------------------------------------------

NONE = "00000000000000000000000000000000"
EVERYONE = {"sam", "eve", "ada"}
EXAMINERS = {"eve", "ada"}
#: no token needed: the answer is never 401 or 403
PUBLIC = {"", "sam", "eve", "ada"}
#: (method, route path) -> (the request's path, form data, the roles that may) for every route
ROUTES: dict[tuple[str, str], tuple[str, dict[str, str] | None, set[str]]] = {
    ("GET", "/"): ("/", None, EXAMINERS),
    ("POST", "/check"): ("/check", {"text": P}, EXAMINERS),
    ("GET", "/check/{job_id}"): ("/check/x", None, EXAMINERS),
    ("GET", "/check/{job_id}/report"): ("/check/x/report", None, EXAMINERS),
    ("GET", "/collection"): ("/collection", None, EXAMINERS),
    ("GET", "/document"): ("/document?id=src1.txt", None, EXAMINERS),
    ("POST", "/api/check"): ("/api/check", {"text": P}, EXAMINERS),
    ("POST", "/api/report"): ("/api/report", {"text": P}, EXAMINERS),
    ("GET", "/api/checks/{job_id}"): ("/api/checks/x", None, EXAMINERS),
    ("GET", "/api/info"): ("/api/info", None, EXAMINERS),
    ("GET", "/api/documents"): ("/api/documents", None, EXAMINERS),
    ("GET", "/api/document"): ("/api/document?id=src1.txt", None, EXAMINERS),
    ("GET", "/api/groups"): ("/api/groups", None, EXAMINERS),
    ("GET", "/docs"): ("/docs", None, EVERYONE),
    ("GET", "/openapi.json"): ("/openapi.json", None, EVERYONE),
    ("POST", "/api/submissions"): ("/api/submissions", None, EVERYONE),
    ("GET", "/api/submissions"): ("/api/submissions", None, EVERYONE),
    ("GET", "/api/submissions/{submission_id}"): (f"/api/submissions/{NONE}", None, EVERYONE),
    ("GET", "/api/submissions/{submission_id}/report"): (f"/api/submissions/{NONE}/report", None, EVERYONE),
    ("GET", "/api/submissions/{submission_id}/export"): (f"/api/submissions/{NONE}/export", None, EVERYONE),
    ("POST", "/api/submissions/{submission_id}/decision"): (f"/api/submissions/{NONE}/decision", {"state": "open"}, EXAMINERS),
    ("POST", "/api/submissions/{submission_id}/archive"): (f"/api/submissions/{NONE}/archive", {}, EXAMINERS),
    ("DELETE", "/api/submissions/{submission_id}"): (f"/api/submissions/{NONE}", None, EXAMINERS),
    ("POST", "/api/submissions/{submission_id}/recheck"): (f"/api/submissions/{NONE}/recheck", {}, EXAMINERS),
    ("POST", "/submissions/{submission_id}/recheck"): (f"/submissions/{NONE}/recheck", {}, EXAMINERS),
    ("GET", "/api/archive/document"): ("/api/archive/document?id=src1.txt", None, EXAMINERS),
    ("GET", "/api/users"): ("/api/users", None, {"ada"}),
    ("GET", "/api/audit"): ("/api/audit", None, {"ada"}),
    ("POST", "/api/users"): ("/api/users", {"name": "x", "role": "nobody"}, {"ada"}),
    ("DELETE", "/api/users/{name}"): ("/api/users/nobody", None, {"ada"}),
    ("GET", "/submissions"): ("/submissions", None, EVERYONE),
    ("POST", "/submissions"): ("/submissions", None, EVERYONE),
    ("GET", "/submissions/{submission_id}"): (f"/submissions/{NONE}", None, EVERYONE),
    ("POST", "/submissions/{submission_id}/decision"): (f"/submissions/{NONE}/decision", {"state": "open"}, EXAMINERS),
    ("POST", "/submissions/{submission_id}/archive"): (f"/submissions/{NONE}/archive", {}, EXAMINERS),
    ("POST", "/submissions/{submission_id}/delete"): (f"/submissions/{NONE}/delete", {}, EXAMINERS),
    ("GET", "/archive/document"): ("/archive/document?id=src1.txt", None, EXAMINERS),
    # LTI 1.3: the platform's endpoints answer without a token (their proof is a signed launch)
    ("GET", "/lti/login"): ("/lti/login", None, PUBLIC),
    ("POST", "/lti/login"): ("/lti/login", {}, PUBLIC),
    ("POST", "/lti/launch"): ("/lti/launch", {}, PUBLIC),
    ("GET", "/lti/jwks"): ("/lti/jwks", None, PUBLIC),
    ("GET", "/lti/submit"): ("/lti/submit?launch=1", None, EVERYONE),
    ("POST", "/lti/submit"): ("/lti/submit", {"launch": "1"}, EVERYONE),
    ("GET", "/api/lti/roster"): ("/api/lti/roster?launch=1", None, EXAMINERS),
}


def test_the_role_table_names_every_route(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, _, _ = site
    routes = set()
    pending = list(client.app.routes)  # type: ignore[attr-defined]
    while pending:
        route = pending.pop()
        if isinstance(route, Mount):
            continue  # /static (public) and the API page's assets
        included = getattr(route, "original_router", None)  # an included router (FastAPI 0.165)
        if included is not None:
            pending.extend(included.routes)
            continue
        assert isinstance(route, Route)
        routes |= {(method, route.path) for method in route.methods or () if method != "HEAD"}
    assert routes == set(ROUTES)


@pytest.mark.parametrize("route", sorted(ROUTES), ids=lambda r: f"{r[0]} {r[1]}")
def test_every_route_checks_the_role(site: tuple[TestClient, dict[str, str], Path], route: tuple[str, str]) -> None:
    client, tokens, _ = site
    path, form, allowed = ROUTES[route]
    method = route[0]
    no_token = client.request(method, path, data=form).status_code
    assert no_token not in (401, 403) if allowed is PUBLIC else no_token == 401  # no token: nobody (but the platform's)
    for name in ("sam", "eve", "ada"):
        answer = client.request(method, path, data=form, headers=auth(tokens, name))
        if name in allowed:
            assert answer.status_code not in (401, 403), (name, answer.status_code, answer.text)
        else:
            assert answer.status_code == 403, (name, answer.status_code, answer.text)


def test_the_api_is_described_with_its_bearer_token(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    described = client.get("/openapi.json", headers=auth(tokens, "sam")).json()
    assert {"/api/submissions", "/api/submissions/{submission_id}", "/api/submissions/{submission_id}/report"} <= set(described["paths"])
    assert described["components"]["securitySchemes"]["HTTPBearer"] == {
        "type": "http", "scheme": "bearer", "description": "A user's token (coderiv users add NAME --role ROLE)"}
    assert described["paths"]["/api/submissions"]["post"]["security"] == [{"HTTPBearer": []}]


def test_every_archive_route_describes_its_answer(site: tuple[TestClient, dict[str, str], Path]) -> None:
    client, tokens, _ = site
    described = client.get("/openapi.json", headers=auth(tokens, "sam")).json()
    prefixes = ("/api/submissions", "/api/archive", "/api/audit", "/api/users")
    answers = {(method.upper(), path): operation["responses"] for path, methods in described["paths"].items()
               if path.startswith(prefixes) for method, operation in methods.items()}
    assert set(answers) == {route for route in ROUTES if route[1].startswith(prefixes)} and len(answers) == 14
    schemas = described["components"]["schemas"]
    for route, responses in answers.items():
        success = next(code for code in responses if code.startswith("2"))
        for media, content in responses[success]["content"].items():
            schema = content.get("schema", {})
            assert schema, (route, media)
            if media == "application/json" and "$ref" in schema:
                assert schemas[schema["$ref"].rsplit("/", 1)[1]]["properties"], route
    record = schemas["SubmissionRecord"]["properties"]
    assert {"id", "state", "overall", "sources", "checks", "decisions"} <= set(record)
    assert schemas["SubmissionState"]["enum"] == ["queued", "checking", "done", "failed"]
    assert answers[("GET", "/api/submissions/{submission_id}")]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SubmissionRecord"}


def test_static_files_need_no_token(site: tuple[TestClient, dict[str, str], Path]) -> None:
    assert site[0].get("/static/style.css").status_code == 200
