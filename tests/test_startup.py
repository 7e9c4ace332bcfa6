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


#: Modules a one-query or one-report process has no use for: the build (writer, analysis
#: workers and their processes, the Dask cluster, the cosine statistics' compiled loops), the
#: stemmers of an index that does not stem, and, for a query, the report's and pairs' engines.
BUILD_MODULES = {
    "coderiv.index.builder.writer", "coderiv.index.builder.analysis_workers", "coderiv.system.child_processes", "coderiv.system.cluster",
    "coderiv.index.builder.cosine_statistics", "coderiv.index.builder.compiled_writer", "multiprocessing", "snowballstemmer", "scipy",
}


def _modules_of_command(args: list[str]) -> set[str]:
    """The modules loaded by the end of ``coderiv ARGS`` run in a fresh interpreter."""
    code = (
        "import sys, json\nfrom coderiv.cli import main\ntry:\n    main(" + repr(args) + ", prog_name='coderiv')\n"
        "except SystemExit as exit:\n    assert not exit.code, exit.code\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {m.split(".")[0] if not m.startswith("coderiv.") else m for m in json.loads(done.stderr.strip().splitlines()[-1])}


def test_a_query_and_a_report_import_nothing_of_the_build(tmp_path) -> None:
    from coderiv import Index
    from coderiv.ranking.containment import chunk_store_spec
    from tests.support.files import write_docs

    words = "river delta marsh wetland estuary sediment tide channel levee basin floodplain meander".split()
    docs = {f"d{i}.txt": " ".join(words[(i + j) % len(words)] for j in range(40)) for i in range(6)}
    folder = write_docs(tmp_path / "c", docs)
    Index.update_from(folder, tmp_path / "i", stores=[chunk_store_spec()], workers=1)
    query = ["query", str(folder / "d1.txt"), "--index", str(tmp_path / "i"), "-q"]
    loaded = _modules_of_command(query)
    assert "coderiv.index.index" in loaded and "numpy" in loaded  # what the work does need
    assert loaded & BUILD_MODULES == set()
    assert {m for m in loaded if m.startswith(("coderiv.report", "coderiv.pairs", "coderiv.overlap", "coderiv.web"))} == set()
    report = _modules_of_command(["report", str(folder / "d1.txt"), "--index", str(tmp_path / "i"), "-q", "--format", "json"])
    assert "coderiv.report.build" in report and "coderiv.pairs.table" in report
    assert report & BUILD_MODULES == set()
    assert {"coderiv.pairs.run", "coderiv.pairs.lineage"} & report == set()


def _blas_threads_after_command_start(env_value: str | None) -> int:
    """Threads of a fresh interpreter after the command line's start-up settings and the import
    of numpy (Linux: one entry a thread in /proc/self/task); OPENBLAS_NUM_THREADS as given."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if env_value is not None:
        env["OPENBLAS_NUM_THREADS"] = env_value
    code = (
        "import os\nfrom coderiv.__main__ import single_threaded_blas\nsingle_threaded_blas()\n"
        "import numpy\nprint(len(os.listdir('/proc/self/task')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=env)
    return int(done.stdout)


def test_the_command_line_keeps_blas_to_one_thread_unless_told() -> None:
    """OpenBLAS would start a spinning thread per core at numpy's import (2 on this machine's 2
    cores); the command line asks for one, and a user's own setting wins."""
    import os

    if not os.path.isdir("/proc/self/task"):
        import pytest

        pytest.skip("needs Linux's /proc")
    assert _blas_threads_after_command_start(None) == 1
    if (os.cpu_count() or 1) >= 2:  # (OpenBLAS starts no more threads than cores)
        assert _blas_threads_after_command_start("2") == 2
