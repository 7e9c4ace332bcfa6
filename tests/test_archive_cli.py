"""``coderiv users`` (add prints the token once, list, revoke) on the archive's default SQLite
file beside the index, and the one-line errors: a missing coderiv[archive], a bad role, an
archive option without --archive."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")

from coderiv.cli.main import main  # noqa: E402


def test_users_add_list_revoke(tmp_path: Path) -> None:
    runner = CliRunner()
    index = str(tmp_path / "idx")
    added = runner.invoke(main, ["users", "add", "eve", "--role", "examiner", "--index", index])
    assert added.exit_code == 0, added.output
    token = added.stdout.strip()
    assert len(token) == 43 and "shown only once" in added.stderr
    stored = sqlite3.connect(tmp_path / "idx.archive.sqlite").execute("select name, role, token_hash from users").fetchall()
    assert stored == [("eve", "examiner", hashlib.sha256(token.encode()).hexdigest())]
    assert runner.invoke(main, ["users", "add", "sam", "--role", "submitter", "--index", index]).exit_code == 0
    assert runner.invoke(main, ["users", "list", "--index", index]).stdout == "eve\texaminer\tactive\nsam\tsubmitter\tactive\n"
    assert runner.invoke(main, ["users", "revoke", "sam", "--index", index]).exit_code == 0
    assert runner.invoke(main, ["users", "list", "--index", index]).stdout.splitlines()[1] == "sam\tsubmitter\trevoked"
    again = runner.invoke(main, ["users", "add", "eve", "--role", "admin", "--index", index])
    assert (again.exit_code, again.output.strip().splitlines()[-1]) == (
        1, "Error: there is already a user 'eve' (revoke it first, or choose another name)")
    unknown = runner.invoke(main, ["users", "revoke", "nobody", "--index", index])
    assert (unknown.exit_code, unknown.output.strip().splitlines()[-1]) == (1, "Error: no user 'nobody'")


def test_a_missing_archive_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # import sqlalchemy now raises ImportError
    result = CliRunner().invoke(main, ["users", "list", "--index", str(tmp_path / "idx")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "Error: coderiv users needs the optional dependencies coderiv[archive]: pip install 'coderiv[archive]'")
    served = CliRunner().invoke(main, ["serve", "--archive", "--index", str(tmp_path / "idx")])
    assert served.output.strip().splitlines()[-1] == (
        "Error: coderiv serve --archive needs the optional dependencies coderiv[archive]: pip install 'coderiv[archive]'")


def test_archive_options_need_archive(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", "--index", str(tmp_path / "idx"), "--database", "sqlite:///x.db"])
    assert (result.exit_code, result.output.strip().splitlines()[-1]) == (
        1, "Error: --database, --webhook, --archive-all, --repository and --retention-days need --archive")


def test_a_shared_token_does_not_apply_to_the_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODERIV_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["serve", "--archive", "--index", str(tmp_path), "--token", "a" * 20])
    assert (result.exit_code, result.output.strip().splitlines()[-1]) == (
        1, "Error: --token does not apply with --archive: every user has a token of their own (coderiv users add)")


def test_a_bad_database_url_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["users", "list", "--database", "nosuchdb://x"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith("Error: cannot use the database nosuchdb://x: ")


def test_lti_platforms_add_list_remove(tmp_path: Path) -> None:
    pytest.importorskip("jwt", reason="the lti extra (coderiv[lti]) is not installed")
    runner = CliRunner()
    index = str(tmp_path / "idx")
    urls = ["--login-url", "https://lms.example/auth", "--token-url", "https://lms.example/token",
            "--jwks-url", "https://lms.example/jwks"]
    added = runner.invoke(main, ["lti", "add", "https://lms.example", "--client-id", "c1", "--deployment-id", "d1", *urls,
                                 "--index", index])
    assert added.exit_code == 0 and "platform 1 registered: https://lms.example (client c1)" in added.stderr
    assert runner.invoke(main, ["lti", "list", "--index", index]).stdout == "1\thttps://lms.example\tc1\td1\n"
    again = runner.invoke(main, ["lti", "add", "https://lms.example", "--client-id", "c1", *urls, "--index", index])
    assert (again.exit_code, again.output.strip().splitlines()[-1]) == (
        1, "Error: the platform https://lms.example with client id c1 is registered already")
    bad = runner.invoke(main, ["lti", "add", "https://lms.example", "--client-id", "c2", "--login-url", "file:///etc/passwd",
                               "--token-url", "https://lms.example/token", "--jwks-url", "https://lms.example/jwks", "--index", index])
    assert bad.output.strip().splitlines()[-1] == "Error: the platform's login URL must be http(s) (got 'file:///etc/passwd')"
    assert runner.invoke(main, ["lti", "remove", "https://lms.example", "--client-id", "c1", "--index", index]).exit_code == 0
    assert runner.invoke(main, ["lti", "list", "--index", index]).stdout == ""
    gone = runner.invoke(main, ["lti", "remove", "https://lms.example", "--client-id", "c1", "--index", index])
    assert gone.output.strip().splitlines()[-1] == "Error: no platform https://lms.example with client id c1"
