"""A missing optional dependency is one line naming the extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from coderiv.cli.main import main
from coderiv.errors import MissingExtraError
from coderiv.extras import require


def test_require_returns_the_module_or_names_the_extra() -> None:
    assert require("json", "none", "anything").__name__ == "json"
    with pytest.raises(MissingExtraError) as caught:
        require("coderiv_no_such_module", "dask", "--dask")
    assert str(caught.value) == "--dask needs the optional dependencies coderiv[dask]: pip install 'coderiv[dask]'"


def test_the_cli_prints_the_missing_extra_in_one_line(tmp_path, runner, monkeypatch) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("river bank water flow " * 20)
    (tmp_path / "c" / "b.txt").write_text("river bank water mill " * 20)
    assert runner.invoke(main, ["index", str(tmp_path / "c"), "--index", str(tmp_path / "i"), "-q"]).exit_code == 0
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    result = runner.invoke(main, ["pairs", "--index", str(tmp_path / "i"), "--dask", "local", "-q"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "Error: --dask needs the optional dependencies coderiv[dask]: pip install 'coderiv[dask]'"
    )


@pytest.mark.parametrize("command", [["users", "list"], ["users", "add", "bob", "--role", "examiner"], ["users", "revoke", "bob"]])
def test_users_without_the_archive_extra_is_one_line(tmp_path, command) -> None:
    # a fresh interpreter where sqlalchemy cannot be imported, as after pip install coderiv[formats]
    script = (
        "import sys\n"
        "class NoSQLAlchemy:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] == 'sqlalchemy':\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, NoSQLAlchemy())\n"
        "from coderiv.__main__ import run\n"
        f"sys.argv = ['coderiv', *{command!r}, '--index', {str(tmp_path / 'i')!r}]\n"
        "run()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "Error: coderiv users needs the optional dependencies coderiv[archive]: pip install 'coderiv[archive]'\n"
