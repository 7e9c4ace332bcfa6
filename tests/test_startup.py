"""What a one-query process imports (issue 27, start-up): the command line loads a command's
module only when that command runs, and ``coderiv query`` loads neither scipy nor the pairs
engine, the web server or the evaluation. Checked in fresh interpreters, by module, not by time."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from coderiv.cli.main import COMMAND_MODULES, command_of, main
from coderiv.cli.query import VERSIONS_MIN_PERCENT
from coderiv.pairs.groups import VERSIONS_MIN_PERCENT as GROUPS_VERSIONS_MIN_PERCENT


def modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout))


def heavy(modules: set[str]) -> set[str]:
    roots = ("scipy", "numpy", "coderiv.pairs", "coderiv.web", "coderiv.evaluation", "coderiv.report", "fastapi", "numba")
    return {root for root in roots if any(m == root or m.startswith(root + ".") for m in modules)}


def test_the_command_group_imports_no_command_module() -> None:
    loaded = modules_after("from coderiv.cli import main")
    assert heavy(loaded) == set()
    assert not any(m.startswith("coderiv.cli.") and m not in ("coderiv.cli.main",) for m in loaded)


def test_a_query_process_loads_only_what_ranking_needs() -> None:
    assert heavy(modules_after("import coderiv.cli.query")) == {"numpy"}


def test_every_command_is_where_the_group_says() -> None:
    assert set(COMMAND_MODULES) == set(main.list_commands(click.Context(main)))
    for name in COMMAND_MODULES:
        assert command_of(name).name == name


def test_the_versions_threshold_is_the_groups_one() -> None:
    assert VERSIONS_MIN_PERCENT == GROUPS_VERSIONS_MIN_PERCENT
