"""``coderiv serve --archive`` starts ready (issue 42 item 3): on the index ``coderiv index``
builds (no chunk store) it adds the store at start, saying so, and the first submission is
checked; without the source to read again it refuses in one line naming the command; and a
reader that needs a store another process is adding waits for it instead of failing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("sqlalchemy", reason="the archive extra (coderiv[archive]) is not installed")
pytest.importorskip("fastapi", reason="the web extra (coderiv[web]) is not installed")

import coderiv  # noqa: E402
from coderiv.cli.main import main  # noqa: E402
from coderiv.index.builder import stores  # noqa: E402
from coderiv.index.format.storage import write_lock  # noqa: E402
from coderiv.index.index import Index  # noqa: E402
from coderiv.ranking.containment import chunk_store_spec  # noqa: E402
from tests.support.archive import COLLECTION, P, Q, call, multipart, server_ready, wait_until  # noqa: E402
from tests.support.files import write_docs  # noqa: E402
from tests.support.network import free_port  # noqa: E402
from tests.support.processes import stop_process  # noqa: E402

CHUNKS = chunk_store_spec().name


def coderiv_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "coderiv", *args]


def environment() -> dict[str, str]:
    source = str(Path(coderiv.__file__).parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([source, *sys.path])}


@pytest.mark.slow
def test_serve_archive_on_a_plain_index_checks_the_first_submission(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", COLLECTION)
    index = tmp_path / "index"
    built = subprocess.run(coderiv_command("index", str(docs), "--index", str(index)), env=environment(),
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    assert CHUNKS not in Index.open(index).specs  # the README's index: terms only
    added = subprocess.run(coderiv_command("users", "add", "sam", "--role", "submitter", "--index", str(index)),
                           env=environment(), capture_output=True, text=True, check=True)
    token = added.stdout.strip()
    port, log = free_port(), tmp_path / "serve.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(coderiv_command("serve", "--archive", "--index", str(index), "--port", str(port)),
                                  env=environment(), stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        assert server_ready(base, token, 120), log.read_text()
        said = log.read_text().splitlines()
        assert said[0] == (f"--archive: adding store {CHUNKS} to the index (reading {docs} again); "
                           "'coderiv index SOURCE --report-ready' builds it in the index's own reading")
        assert "chunk store: 100% of" in log.read_text()  # the progress (a log, not a terminal: lines)
        assert any(line.startswith("--archive: chunk store added in ") for line in said)
        assert CHUNKS in Index.open(index).specs
        body, kind = multipart({"file": ("first.txt", (P + " " + Q).encode())})
        sid = call(base, token, "POST", "/api/submissions", body, kind)["id"]
        checked = wait_until(lambda: (r := call(base, token, "GET", f"/api/submissions/{sid}"))["state"] in ("done", "failed") and r,
                             120)
        assert checked and (checked["state"], checked["overall"], checked["top_source"]) == ("done", 100.0, "src2.txt"), checked
    finally:
        stop_process(server)


def test_without_its_source_the_server_refuses_in_one_line(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", COLLECTION)
    index = tmp_path / "index"
    Index.update_from(docs, index, workers=1)
    shutil.rmtree(docs)
    result = CliRunner().invoke(main, ["serve", "--archive", "--index", str(index), "--port", "0"])
    assert (result.exit_code, result.output.strip().splitlines()[-1]) == (1, (
        f"Error: the index {index} has no chunk store, which the archive's checks read, and its source {docs} is gone: "
        f"build it with 'coderiv index SOURCE --index {index} --report-ready'"))


def test_a_reader_waits_for_the_writer_then_adds_the_store(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", COLLECTION)
    index = tmp_path / "index"
    Index.update_from(docs, index, workers=1)
    said: list[str] = []
    held, release = threading.Event(), threading.Event()

    def writer() -> None:  # another process's update, holding the lock (flock is per open file)
        with write_lock(index):
            held.set()
            release.wait(60)

    thread = threading.Thread(target=writer)
    thread.start()
    held.wait(10)
    threading.Thread(target=lambda: wait_until(lambda: len(said) >= 2, 60) and release.set(), daemon=True).start()
    ready = stores.open_with_store(index, chunk_store_spec(), announce=said.append)
    thread.join()
    assert said[1] == f"another coderiv process is writing the index at {index}: waiting for it (at most 1800 s)"
    assert CHUNKS in ready.specs and len(said) == 2


def test_two_reports_at_once_on_an_index_without_the_store_both_report(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", COLLECTION)
    index = tmp_path / "index"
    Index.update_from(docs, index, workers=1)
    query = tmp_path / "q.txt"
    query.write_text(P + " " + Q)
    held = write_lock(index)
    held.__enter__()  # both wait behind this writer, then one adds the store and the other uses it
    runs = [subprocess.Popen(coderiv_command("report", str(query), "--index", str(index), "--format", "json"),
                             env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    waiting = f"another coderiv process is writing the index at {index}: waiting for it"
    log = [""] * 2
    try:
        for i, run in enumerate(runs):
            assert run.stderr is not None
            log[i] = wait_until(lambda r=run: _line_with(r, waiting), 120)
    finally:
        held.__exit__(None, None, None)
    outs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outs
    assert all(waiting in line for line in log)
    assert all('"overall": 100.0' in out for out, _ in outs)


def _line_with(run: subprocess.Popen[str], text: str) -> str | None:
    assert run.stderr is not None
    line = run.stderr.readline()
    return line if text in line else None
