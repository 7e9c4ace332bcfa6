"""An archive to test against: a small collection indexed with the chunk store and a pair table
(what the report and the matches over time need), a database with one user of each role, and
polling for a submission's state."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coderiv.index.index import Index
from coderiv.pairs.methods import get_method
from coderiv.pairs.run import run_pairs
from tests.support.files import write_docs

# 86 and 88 characters: the report counts P's 15 words and Q's 16 (tests/test_web.py)
P = "the lighthouse keeper climbed the stairs every evening to light the lamp above the bay"
Q = "a recipe for bread needs flour water salt and patience more than any machine could offer"
R = "glaciers carve valleys slowly while rivers cut canyons through soft sandstone over ages"
COLLECTION = {
    "src1.txt": P,
    "src2.txt": Q + " completely different words follow here",
    "other.txt": "nothing in common with anything else at all in this small test collection",
}


def build_collection(root: Path, docs: dict[str, str] | None = None) -> Path:
    """Index ``docs`` (default :data:`COLLECTION`) in ``root/docs`` at ``root/index`` with the
    chunk store and the chunks pair table; returns the index folder."""
    folder = write_docs(root / "docs", docs or COLLECTION)
    Index.update_from(folder, root / "index", workers=1)
    spec = get_method("chunks").store
    Index.update_from(folder, root / "index", stores=[spec], workers=1)
    run_pairs(Index.open(root / "index"), "chunks")
    return root / "index"


def add_users(url: str) -> dict[str, str]:
    """One user of each role (and a second submitter): name → token."""
    from coderiv.archive.db import Database
    from coderiv.archive.users import add_user

    database = Database(url)
    with database.session() as session:
        tokens = {name: add_user(session, name, role) for name, role in
                  [("sam", "submitter"), ("sue", "submitter"), ("eve", "examiner"), ("ada", "admin")]}
    database.dispose()
    return tokens


def wait_until(probe: Callable[[], Any], seconds: float = 60.0, every: float = 0.1) -> Any:
    """The first true value of ``probe`` within ``seconds`` (else its last value)."""
    deadline = time.monotonic() + seconds
    value = probe()
    while not value and time.monotonic() < deadline:
        time.sleep(every)
        value = probe()
    return value


def multipart(fields: dict[str, tuple[str, bytes] | str]) -> tuple[bytes, str]:
    """A multipart/form-data body and its content type (a file is ``(name, bytes)``)."""
    boundary = "coderiv-test-boundary-7d1f"
    parts = []
    for key, value in fields.items():
        if isinstance(value, tuple):
            head = f'Content-Disposition: form-data; name="{key}"; filename="{value[0]}"\r\nContent-Type: text/plain'
            body = value[1]
        else:
            head, body = f'Content-Disposition: form-data; name="{key}"', value.encode()
        parts.append(f"--{boundary}\r\n{head}\r\n\r\n".encode() + body + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def call(base: str, token: str, method: str, path: str, body: bytes | None = None, content_type: str | None = None) -> Any:
    """A JSON API call to a running server (the answer's JSON, or ``{"status": code}`` on an error)."""
    import json
    import urllib.error
    import urllib.request

    headers = {"Authorization": f"Bearer {token}"}
    if content_type:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(base + path, body, headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, "error": exc.read().decode(errors="replace")}
    except OSError as exc:
        return {"status": 0, "error": str(exc)}


def start_server(index: Path, url: str, port: int, log: Path, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> Any:
    """``coderiv serve --archive`` in a subprocess on ``port`` (stopped by the caller, by its PID)."""
    import os
    import subprocess
    import sys

    import coderiv

    source = str(Path(coderiv.__file__).parents[1])
    environment = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join([source, *sys.path])}
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "coderiv.cli.main", "serve", "--archive", "--index", str(index), "--database", url,
             "--port", str(port), *args],
            env=environment, stdout=out, stderr=subprocess.STDOUT)


def server_ready(base: str, token: str, seconds: float = 60.0) -> bool:
    """Whether the server at ``base`` answers the API within ``seconds``."""
    return bool(wait_until(lambda: "submissions" in call(base, token, "GET", "/api/submissions"), seconds, 0.2))
