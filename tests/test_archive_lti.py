"""The archive as an LTI 1.3 tool, tested against a real LTI 1.3 platform (``lti1p3platform``,
tests/support/lti_platform.py) over HTTP on 127.0.0.1: a platform registered with ``coderiv lti
add``; a student's launch (OIDC login, the signed launch checked against the platform's JWKS)
reaches the upload page as that student, the submission is checked and its similarity returned
to the platform's line item as a score (AGS, the tool's assertion checked against the tool's
JWKS); an instructor reads the course roster (NRPS) and places the tool with Deep Linking; and
a forged or expired token, a wrong issuer or audience, a replayed nonce and an unregistered
platform are refused in one line with an audit row, nothing stored. On SQLite and on a real
PostgreSQL server."""

from __future__ import annotations

import datetime as dt
import html
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

pytest.importorskip("jwt", reason="the lti extra (coderiv[lti]) is not installed")
pytest.importorskip("lti1p3platform", reason="the test platform (lti1p3platform) is not installed")
import jwt  # noqa: E402
import requests  # noqa: E402
import sqlalchemy  # noqa: E402

from coderiv.archive import audit  # noqa: E402
from coderiv.archive.db import Database  # noqa: E402
from coderiv.archive.models import LtiLaunch, LtiNonce, Submission, User, now  # noqa: E402
from coderiv.cli.main import main  # noqa: E402
from tests.support.archive import P, Q, build_collection, wait_until  # noqa: E402
from tests.support.lti_platform import (  # noqa: E402
    CLIENT_ID,
    DEPLOYMENT_ID,
    Platform,
    register_command,
    rsa_pem,
    start_platform,
    start_tool,
)
from tests.support.postgres import fresh_database, postgres_server  # noqa: E402, F401

pytestmark = pytest.mark.slow  # two servers and the worker processes run for real


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def sites(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Platform, str]]:
    root = tmp_path_factory.mktemp("archive-lti")
    index = build_collection(root)
    url = f"sqlite:///{root / 'archive.sqlite'}"
    if request.param == "postgresql":
        url = fresh_database(request.getfixturevalue("postgres_server"), "lti")
    tool, server, thread = start_tool(index, url)
    assert server.started
    platform = start_platform(tool)
    added = CliRunner().invoke(main, register_command(platform, url))
    assert added.exit_code == 0, added.output
    assert f"platform 1 registered: {platform.issuer} (client {CLIENT_ID})" in added.output
    yield tool, platform, url
    platform.stop()
    server.should_exit = True
    thread.join(30)


def launch_form(answer: requests.Response) -> dict[str, str]:
    """The fields of the platform's auto-submitting launch form (what a browser posts)."""
    fields = dict(re.findall(r'name="(id_token|state)" value="([^"]*)"', answer.text))
    return {k: html.unescape(v) for k, v in fields.items()}


def launch(tool: str, platform: Platform, person: str, deep: bool = False) -> tuple[requests.Session, requests.Response]:
    """What a browser does: start at the platform, follow the OIDC login, post the launch form."""
    browser = requests.Session()
    auth_page = browser.get(platform.start_url(person, deep), timeout=30)  # /start -> /lti/login -> the platform's /auth
    assert auth_page.status_code == 200 and "id_token" in auth_page.text, auth_page.text[:300]
    return browser, browser.post(f"{tool}/lti/launch", data=launch_form(auth_page), timeout=30)


def test_a_students_launch_submits_is_checked_and_returns_the_score(sites: tuple[str, Platform, str]) -> None:
    tool, platform, url = sites
    browser, landed = launch(tool, platform, "alice-17")
    assert landed.status_code == 200 and urlsplit(landed.url).path == "/lti/submit", landed.text[:300]
    assert '<strong id="lti-name">Alice Novakova</strong>' in landed.text
    launch_id = parse_qs(urlsplit(landed.url).query)["launch"][0]
    sent = browser.post(f"{tool}/lti/submit", data={"launch": launch_id, "title": "Bread"},
                        files={"file": ("thesis.txt", (P + " " + Q).encode())}, timeout=30)
    assert sent.status_code == 200 and "/submissions/" in sent.url
    sid = sent.url.rsplit("/", 1)[1]
    checked = wait_until(lambda: (b := browser.get(f"{tool}/api/submissions/{sid}", timeout=30).json())["state"] == "done" and b, 120)
    assert checked and (checked["overall"], checked["author"], checked["title"]) == (100.0, "Alice Novakova", "Bread")
    assert wait_until(lambda: platform.scores, 60), "no score reached the platform"
    score = platform.scores[0]
    assert (score["userId"], score["scoreGiven"], score["scoreMaximum"], score["gradingProgress"]) == (
        "alice-17", 100.0, 100.0, "FullyGraded")
    database = Database(url)
    with database.session() as session:
        student = session.scalar(sqlalchemy.select(User).join(LtiLaunch, LtiLaunch.user_id == User.id)
                                 .where(LtiLaunch.sub == "alice-17"))
        assert student is not None and student.role == "submitter"
        stored = session.get(Submission, sid)
        assert stored is not None and stored.user_id == student.id and stored.lti_score_sent is not None
        assert [e.action for e in audit.entries(session, platform.issuer)][::-1][:2] == ["lti-add", "lti-launch"]
    database.dispose()
    page = browser.get(f"{tool}/submissions/{sid}", timeout=30).text
    assert "similarity returned as the score on" in page and "(through the learning platform)" in page


def test_an_instructor_reads_the_roster_and_places_the_tool(sites: tuple[str, Platform, str]) -> None:
    tool, platform, _ = sites
    browser, landed = launch(tool, platform, "ivan-3")
    launch_id = parse_qs(urlsplit(landed.url).query)["launch"][0]
    members = browser.get(f"{tool}/api/lti/roster", params={"launch": launch_id}, timeout=30).json()
    assert members == [
        {"user_id": "alice-17", "name": "Alice Novakova", "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"]},
        {"user_id": "ivan-3", "name": "Ivan Horak", "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"]},
    ]
    student, _ = launch(tool, platform, "alice-17")
    assert student.get(f"{tool}/api/lti/roster", params={"launch": launch_id}, timeout=30).status_code == 403
    deep_browser, chooser = launch(tool, platform, "ivan-3", deep=True)
    assert chooser.status_code == 200 and 'id="deep-link-form"' in chooser.text
    assert f"form-action {platform.base}" in chooser.headers["content-security-policy"]
    action = html.unescape(re.search(r'<form method="post" action="([^"]+)"', chooser.text).group(1))  # type: ignore[union-attr]
    token = html.unescape(re.search(r'name="JWT" value="([^"]+)"', chooser.text).group(1))  # type: ignore[union-attr]
    placed = deep_browser.post(action, data={"JWT": token}, timeout=30)  # the platform checks it against /lti/jwks
    assert placed.status_code == 200 and "placed" in placed.text
    assert platform.deep_links[-1] == [{"type": "ltiResourceLink", "title": "coderiv: check the thesis", "url": f"{tool}/lti/launch"}]


def _login(tool: str, issuer: str) -> tuple[str, str]:
    """Start a login at the tool as the platform would; its state and nonce (from the redirect)."""
    answer = requests.get(f"{tool}/lti/login", params={"iss": issuer, "login_hint": "alice-17", "client_id": CLIENT_ID},
                          allow_redirects=False, timeout=30)
    assert answer.status_code == 302, answer.text
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    return query["state"][0], query["nonce"][0]


def _token(platform: Platform, nonce: str, key: str | None = None, **changes: Any) -> str:
    moment = int(time.time())
    claims: dict[str, Any] = {
        "iss": platform.issuer, "aud": CLIENT_ID, "sub": "mallory", "iat": moment, "exp": moment + 300, "nonce": nonce,
        "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
        "https://purl.imsglobal.org/spec/lti/claim/version": "1.3.0",
        "https://purl.imsglobal.org/spec/lti/claim/deployment_id": DEPLOYMENT_ID,
        "https://purl.imsglobal.org/spec/lti/claim/roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"],
    }
    claims.update(changes)
    kid = platform.registration().get_kid()
    return jwt.encode(claims, key or platform.private_pem, algorithm="RS256", headers={"kid": kid})


def test_bad_launches_are_refused_with_an_audit_row_and_nothing_stored(sites: tuple[str, Platform, str]) -> None:
    tool, platform, url = sites
    database = Database(url)

    def counts() -> tuple[int, int]:
        with database.session() as session:
            return (len(session.scalars(sqlalchemy.select(User)).all()), len(session.scalars(sqlalchemy.select(LtiLaunch)).all()))

    before = counts()
    other_key, _ = rsa_pem()
    cases = []
    for label, changes, key in [
        ("forged", {}, other_key),
        ("expired", {"exp": int(time.time()) - 3600, "iat": int(time.time()) - 7200}, None),
        ("issuer", {"iss": "http://127.0.0.1:9/another-platform"}, None),
        ("audience", {"aud": "another-tool"}, None),
    ]:
        state, nonce = _login(tool, platform.issuer)
        cases.append((label, requests.post(f"{tool}/lti/launch", data={"id_token": _token(platform, nonce, key, **changes),
                                                                        "state": state}, timeout=30)))
    messages = {label: (answer.status_code, html.unescape(answer.text)) for label, answer in cases}
    assert all(status == 400 for status, _ in messages.values()), messages
    assert "does not verify against the platform's keys (forged)" in messages["forged"][1]
    assert "the launch's id_token has expired" in messages["expired"][1]
    assert f"was not issued by {platform.issuer}" in messages["issuer"][1]
    assert f"is not for this tool (audience is not {CLIENT_ID})" in messages["audience"][1]
    # a good token, then the same state and nonce again: the replay is refused
    state, nonce = _login(tool, platform.issuer)
    good = requests.post(f"{tool}/lti/launch", data={"id_token": _token(platform, nonce), "state": state},
                         allow_redirects=False, timeout=30)
    assert good.status_code == 303
    after_good = counts()
    replay = requests.post(f"{tool}/lti/launch", data={"id_token": _token(platform, nonce), "state": state}, timeout=30)
    assert replay.status_code == 400 and "used already (a replayed nonce)" in replay.text
    unknown = requests.get(f"{tool}/lti/login", params={"iss": "http://127.0.0.1:9/unknown", "login_hint": "x"},
                           allow_redirects=False, timeout=30)
    assert unknown.status_code == 400 and "the platform http://127.0.0.1:9/unknown is not registered (coderiv lti add)" in unknown.text
    assert counts() == after_good and after_good == (before[0] + 1, before[1] + 1)  # only the good launch stored anything
    with database.session() as session:
        refusals = [e.detail for e in audit.entries(session) if e.action == "lti-refused"]
    assert len(refusals) == 6 and any("replayed nonce" in r for r in refusals) and any("not registered" in r for r in refusals)
    # a login left unfinished past its ten minutes is forgotten at the next login
    with database.session() as session:
        session.execute(sqlalchemy.update(LtiNonce).values(created=now() - dt.timedelta(minutes=11)))
    late, _ = _login(tool, platform.issuer)
    with database.session() as session:
        assert [n.state for n in session.scalars(sqlalchemy.select(LtiNonce))] == [late]
    expired = requests.post(f"{tool}/lti/launch", data={"id_token": "x", "state": state}, timeout=30)
    assert "no LTI login started with this state" in html.unescape(expired.text)
    database.dispose()

