"""The suite's tiers (pyproject's [tool.pytest.ini_options], tests/conftest.py): the default run
leaves out every tier marker, every custom marker a test uses is a tier, and a file named on
the command line runs whatever its tier (``-m`` still applies when given)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIERS = ["cluster", "faults", "browser", "compiled", "slow"]
PYTEST_MARKS = {"parametrize", "skip", "skipif", "xfail", "usefixtures", "filterwarnings"}


def test_the_default_run_leaves_out_every_tier(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":", 1)[0] for line in pytestconfig.getini("markers")}
    assert set(TIERS) <= registered
    addopts = pytestconfig.getini("addopts")
    assert "--strict-markers" in addopts  # a misspelt tier is an error, not a test in the fast tier
    assert addopts[addopts.index("-m") + 1] == "not (cluster or faults or browser or compiled or slow)"


def test_every_custom_marker_a_test_uses_is_a_tier() -> None:
    used = {
        node.attr
        for path in (ROOT / "tests").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Attribute) and ast.unparse(node.value) == "pytest.mark"
    }
    assert used - PYTEST_MARKS == set(TIERS)


def collect(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    return done.returncode, done.stdout.strip().splitlines()[-1]


@pytest.mark.slow  # two pytest processes: 5.5 s at a load of 4.6
def test_a_file_named_on_the_command_line_runs_whatever_its_tier() -> None:
    # test_compiled_writer.py is all in the compiled tier: named, its 11 tests are collected
    code, last = collect("tests/test_compiled_writer.py")
    assert (code, last.split(" in ")[0]) == (0, "11 tests collected")
    code, last = collect("tests/test_compiled_writer.py", "-m", "not compiled")  # an explicit -m still selects
    assert (code, last.split(" in ")[0]) == (5, "no tests collected (11 deselected)")
