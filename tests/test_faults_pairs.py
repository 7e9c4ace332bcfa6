"""Fault tests of ``coderiv pairs``: killed while it adds a store (analysis workers) or while a
local Dask cluster computes the pairs, it leaves no process behind, the index unharmed, and the
next run's table equal to a clean run's (issue 10)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from coderiv.cli.main import main
from tests.support.faults import SRC, slow_collection
from tests.support.processes import alive, descendants_of, signal_and_reap, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table from /proc")]


def start_pairs(index: Path, stderr: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    with open(stderr, "wb") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", "coderiv.cli.main", "pairs", "--index", str(index), "--method", "resemblance", *extra],
            stdout=subprocess.DEVNULL, stderr=errors, env=env, start_new_session=True,
        )


def table(runner: CliRunner, index: Path) -> str:
    out = runner.invoke(main, ["similar", "--all", "--method", "resemblance", "--index", str(index), "--format", "tsv"])
    assert out.exit_code == 0, out.output
    return out.stdout


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A slow collection, its index without the resemblance store, and a clean run's table."""
    root = tmp_path_factory.mktemp("pairs-faults")
    source = slow_collection(root / "c", 160)
    runner = CliRunner()
    assert runner.invoke(main, ["index", str(source), "--index", str(root / "bare"), "-q", "--workers", "2"]).exit_code == 0
    shutil.copytree(root / "bare", root / "clean")
    assert runner.invoke(main, ["pairs", "--index", str(root / "clean"), "--method", "resemblance", "-q"]).exit_code == 0
    return source, root / "bare", table(runner, root / "clean")


@pytest.mark.parametrize("phase", ["adding the store", "dask cluster"])
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_killed_pairs_leaves_no_process_and_the_next_run_equals_a_clean_one(
    tmp_path: Path, collection: tuple[Path, Path, str], phase: str, signum: int, runner: CliRunner
) -> None:
    source, bare, clean_table = collection
    index = tmp_path / "i"
    shutil.copytree(bare, index)
    if phase == "dask cluster":  # the store exists: the run goes straight to the cluster
        assert runner.invoke(main, ["pairs", "--index", str(index), "--method", "resemblance", "-q"]).exit_code == 0
        extra = ("--full", "--dask", "local", "--workers", "2")
        wanted = 3  # two workers and their nanny or the scheduler's helpers
    else:
        extra = ()
        wanted = 2  # the analysis workers re-reading the collection
        # rendering again, as an index without kept texts does: with them the re-reading takes
        # no docutils and ends before the kill (text/extracted_cache.py)
        (index / "extracted.sqlite").unlink(missing_ok=True)
    verified_before = runner.invoke(main, ["info", "--verify", "--index", str(index)])
    proc = start_pairs(index, tmp_path / "stderr", *extra)
    seen = wait_for(lambda: descendants_of(proc.pid) if len(descendants_of(proc.pid)) >= wanted else None, 60)
    time.sleep(0.2)
    seen = (seen or set()) | descendants_of(proc.pid)
    signal_and_reap(proc, signum if seen else signal.SIGKILL)
    assert seen, f"the {phase} processes did not start"
    assert proc.returncode != 0, "pairs finished before it was killed: the test did not exercise a fault"
    survivors = wait_for(lambda: not any(alive(p) for p in seen), 10)
    assert survivors, f"orphans after {signal.Signals(signum).name}: {[p for p in seen if alive(p)]}"
    if signum != signal.SIGKILL:
        assert proc.returncode == 128 + signum
        assert f"{signal.Signals(signum).name}: any index being written was left as it was before" in (
            tmp_path / "stderr"
        ).read_text()
    verified = runner.invoke(main, ["info", "--verify", "--index", str(index)])
    assert verified.exit_code == 0 and re.search(r"^verified +True$", verified.output, re.M), verified.output
    assert verified.output == verified_before.output  # nothing of the killed run shows
    # the next run is not blocked and gives exactly the clean table
    again = runner.invoke(main, ["pairs", "--index", str(index), "--method", "resemblance", "-q"])
    assert again.exit_code == 0, again.output
    assert table(runner, index) == clean_table
