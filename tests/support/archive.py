"""An archive to test against: a small collection indexed with the chunk store and a pair table
(what the report and the matches over time need), a database with one user of each role, and
polling for a submission's state."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coderiv.index.index import Index
from coderiv.pairs.run import require_store, run_pairs
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
    spec = require_store(Index.open(root / "index"), "chunks")
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
