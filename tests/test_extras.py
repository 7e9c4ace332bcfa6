"""A missing optional dependency is one line naming the extra to install."""

from __future__ import annotations

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
