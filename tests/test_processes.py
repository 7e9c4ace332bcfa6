"""Fault tests: a writer killed by a signal leaves no orphan workers, no lock, no damage.

Each case starts ``coderiv index`` as a subprocess in a session of its own, waits until its
analysis workers exist, kills it (by its PID only), then checks the process table for survivors
of that session, and that the next ``coderiv index`` succeeds and equals a fresh build.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from coderiv import Index

SRC = str(Path(__file__).resolve().parents[1] / "src")
WAIT = 60.0  # upper bound of every wait, in seconds (reached only when something is wrong)


def _coderiv(log: Path, *args: str) -> subprocess.Popen[bytes]:
    """``coderiv ARGS`` in a new session (its PID is the session id); output goes to ``log``
    (a pipe would be held open by orphans, and reading it would never end)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "coderiv.cli.main", *args],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )


def _session_members(sid: int) -> list[int]:
    """PIDs of live (not zombie) processes in session ``sid`` (from /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            members.append(int(entry))
    return members


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def collection(tmp_path_factory) -> Path:
    """About 6 MB of text in 1,200 files: several analysis batches, so the pool is busy."""
    folder = tmp_path_factory.mktemp("faults") / "c"
    folder.mkdir()
    rng = random.Random(7)
    vocabulary = [f"w{n}" for n in range(5000)]
    for n in range(1200):
        (folder / f"doc{n:05d}.txt").write_text(" ".join(rng.choices(vocabulary, k=800)), "utf-8")
    return folder


@pytest.fixture(scope="module")
def fresh(collection, tmp_path_factory) -> Index:
    out = tmp_path_factory.mktemp("fresh") / "i"
    Index.update_from(collection, out, workers=2)
    return Index.open(out)


def _same(a: Index, b: Index) -> None:
    assert a.doc_ids == b.doc_ids
    for name in ("keys", "ptr", "docs", "vals"):
        np.testing.assert_array_equal(np.asarray(getattr(a.terms, name)), np.asarray(getattr(b.terms, name)))
    np.testing.assert_array_equal(np.asarray(a.doc_norms), np.asarray(b.doc_norms))


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_a_killed_writer_leaves_no_orphans_and_the_next_run_succeeds(collection, fresh, tmp_path, signum):
    index = tmp_path / "i"
    writer = _coderiv(tmp_path / "killed.log", "index", str(collection), "--index", str(index), "--workers", "2", "--quiet")
    try:
        _wait_for(lambda: len(_session_members(writer.pid)) >= 3 or writer.poll() is not None, "the workers")
        assert writer.poll() is None, "the writer finished before its workers could be seen"
        os.kill(writer.pid, signum)
        writer.wait(timeout=WAIT)
        _wait_for(lambda: not _session_members(writer.pid), "the workers to die with their parent")
    finally:
        if _session_members(writer.pid):
            os.killpg(writer.pid, signal.SIGKILL)  # the session this test created, and only it
        if writer.poll() is None:
            writer.kill()
            writer.wait(timeout=WAIT)
    if signum != signal.SIGKILL:
        assert writer.returncode == 128 + signum  # a clean exit: temporary folders removed
        assert not list(index.glob("tmp-*"))
    again = _coderiv(tmp_path / "again.log", "index", str(collection), "--index", str(index), "--workers", "2", "--quiet")
    assert again.wait(timeout=5 * WAIT) == 0, (tmp_path / "again.log").read_text()
    assert not list(index.glob("tmp-*"))
    _same(Index.open(index), fresh)
