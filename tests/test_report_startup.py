"""What a report process imports before its work starts (issue 27, start-up): ``coderiv report``'s
module loads neither the report package nor anything of pairs, the web server, the evaluation,
scipy or numba; the report package (search, verification, exclusions) does not load Jinja2,
which only the HTML page needs, after the work. Checked in fresh interpreters, by module."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "numba", "jinja2", "coderiv.pairs", "coderiv.web", "coderiv.evaluation", "fastapi", "dask")


def loaded_after(statement: str) -> set[str]:
    """The roots of :data:`HEAVY` (and ``coderiv.report``) loaded by ``statement`` in a fresh interpreter."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    modules = set(json.loads(done.stdout))
    return {root for root in (*HEAVY, "coderiv.report") if any(m == root or m.startswith(root + ".") for m in modules)}


def test_the_report_command_module_loads_no_report_and_nothing_heavy() -> None:
    assert loaded_after("import coderiv.cli.report") == set()


def test_the_report_work_loads_no_jinja2() -> None:
    assert loaded_after("import coderiv.cli.report, coderiv.report, coderiv.report.build") == {"coderiv.report"}


def test_the_html_page_loads_jinja2_when_rendered() -> None:
    statement = "from coderiv.report.render_html import _environment\n_environment()"
    assert loaded_after(statement) == {"coderiv.report", "jinja2"}
