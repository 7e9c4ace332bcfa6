"""The progress bar on a real terminal (issue 43 item 9): ``coderiv index docs.tar.gz`` run in
tmux shows the read stage against the archive's size in bytes, then the write stage counting
the stores written, and both bars stay on the screen when it is done. Needs tmux (CI installs
it); a machine without it skips in one line."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from tqdm import tqdm

pytestmark = pytest.mark.slow

TMUX = shutil.which("tmux")


def make_archive(path: Path) -> int:
    with tarfile.open(path, "w:gz") as tar:
        for k in range(40):
            data = " ".join(f"word{k}x{j}" for j in range(400)).encode()
            info = tarfile.TarInfo(f"docs/d{k:02d}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path.stat().st_size


def run_in_terminal(tmp_path: Path, command: list[str], seconds: float = 120.0) -> str:
    """Run ``command`` in a new tmux server of our own (its own socket) on a 200-column terminal;
    return the whole screen and history once it has ended."""
    assert TMUX is not None
    socket, done = f"coderiv-test-{os.getpid()}", tmp_path / "done"
    env = f"PYTHONPATH={shlex.quote(os.pathsep.join(sys.path))}"
    shell = f"cd {shlex.quote(str(tmp_path))} && {env} {shlex.join(command)}; touch {shlex.quote(str(done))}; sleep 60"
    term = {**os.environ, "TERM": os.environ.get("TERM") or "xterm-256color"}  # CI may run without one
    subprocess.run([TMUX, "-L", socket, "new-session", "-d", "-x", "200", "-y", "50", shell], check=True, env=term)
    try:
        deadline = time.monotonic() + seconds
        while not done.exists():
            assert time.monotonic() < deadline, "the command did not end"
            time.sleep(0.2)
        return subprocess.run([TMUX, "-L", socket, "capture-pane", "-p", "-S", "-"], check=True, capture_output=True,
                              text=True).stdout
    finally:
        subprocess.run([TMUX, "-L", socket, "kill-server"], check=False)


@pytest.mark.skipif(TMUX is None, reason="needs tmux (apt install tmux)")
def test_indexing_an_archive_shows_its_read_and_write_stages_on_a_terminal(tmp_path: Path) -> None:
    size = make_archive(tmp_path / "docs.tar.gz")
    screen = run_in_terminal(tmp_path, [sys.executable, "-m", "coderiv", "index", "docs.tar.gz", "--index", "idx",
                                        "--report-ready", "--workers", "1"])
    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    read = [line for line in lines if line.startswith("indexing: 100%|") and "stores written" not in line]
    written = [line for line in lines if line.startswith("indexing: 100%|") and "stores written" in line]
    total = tqdm.format_sizeof(size)  # the archive's compressed bytes, as the bar scales them
    assert len(read) == 1 and f"| {total}/{total} [" in read[0], screen
    assert len(written) == 1 and "| 2/2 stores written [" in written[0], screen  # terms and chunks
    assert any(line.startswith("40 documents in idx (added 40") for line in lines), screen
    assert lines.index(read[0]) < lines.index(written[0])
