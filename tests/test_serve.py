"""``coderiv serve``: safe defaults (loopback, a token otherwise), one-line errors (missing
extra, missing index), and the server started with what the options say."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from coderiv.cli.main import main
from coderiv.cli.serve import is_loopback
from coderiv.index.index import Index
from tests.support.files import write_docs


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    Index.update_from(write_docs(tmp_path / "docs", {"a.txt": "alpha beta gamma"}), tmp_path / "index", workers=1)
    return tmp_path / "index"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.0.1", True), ("localhost", True), ("::1", True),
     ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("example.org", False)],
)
def test_which_hosts_are_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_another_host_needs_a_token(runner: Any, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODERIV_TOKEN", raising=False)
    result = runner.invoke(main, ["serve", "--index", str(index_dir), "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: --host 0.0.0.0 makes the server reachable from other machines: give --token or set CODERIV_TOKEN"
    )


@pytest.mark.parametrize("token", ["short", "has spaces in it, sixteen+", "semi;colon;is;not;allowed"])
def test_a_token_must_be_long_and_plain(runner: Any, index_dir: Path, token: str) -> None:
    result = runner.invoke(main, ["serve", "--index", str(index_dir), "--token", token])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: the token must be at least 16 characters of letters, digits and . _ ~ + / = - (e.g. openssl rand -hex 16)"
    )


def test_a_missing_index_and_a_missing_extra_are_one_line_errors(runner: Any, tmp_path: Path, index_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    result = runner.invoke(main, ["serve", "--index", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: no index at {tmp_path / 'none'}: build one with 'coderiv index FOLDER' (or pass --index DIR)"
    monkeypatch.setitem(sys.modules, "fastapi", None)  # import fastapi now raises ImportError
    result = runner.invoke(main, ["serve", "--index", str(index_dir)])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: coderiv serve needs the optional dependencies coderiv[web]: pip install 'coderiv[web]'"


def test_the_server_runs_with_the_options(runner: Any, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    started: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.update(app=app, **kw))
    monkeypatch.setenv("CODERIV_TOKEN", "t0ken-t0ken-t0ken")
    result = runner.invoke(main, ["serve", "--index", str(index_dir), "--host", "0.0.0.0", "--port", "8123",
                                  "--max-upload-mb", "2", "--workers", "3", "--queue", "1"])
    assert result.exit_code == 0, result.output
    assert (started["host"], started["port"]) == ("0.0.0.0", 8123)
    settings = started["app"].state.context.settings
    assert (settings.index_dir, settings.token, settings.max_upload) == (index_dir, "t0ken-t0ken-t0ken", 2 * 1024 * 1024)
    assert settings.hosts is None  # a token guards it; any host name
    pool = started["app"].state.context.pool
    assert (pool.workers, pool.capacity) == (3, 4)
    assert f"coderiv serving {index_dir} on http://0.0.0.0:8123/" in result.output


def test_a_loopback_server_without_a_token_checks_host_names(runner: Any, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    started: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.update(app=app, **kw))
    monkeypatch.delenv("CODERIV_TOKEN", raising=False)
    result = runner.invoke(main, ["serve", "--index", str(index_dir), "--host", "127.0.0.2"])
    assert result.exit_code == 0, result.output
    settings = started["app"].state.context.settings
    assert (settings.token, settings.hosts) == (None, ("127.0.0.1", "localhost", "::1", "127.0.0.2"))
