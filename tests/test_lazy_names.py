"""coderiv.lazy_names: a package's public names are its TYPE_CHECKING imports, each imported on
first use; ``__all__`` (which mypy reads for re-exports) names the same ones."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from coderiv.lazy_names import type_checking_imports

PACKAGES = ["coderiv", "coderiv.index", "coderiv.pairs", "coderiv.ranking", "coderiv.text"]


def test_type_checking_imports_reads_only_the_guarded_block() -> None:
    source = (
        "from typing import TYPE_CHECKING\nfrom a import outside\n"
        "if TYPE_CHECKING:\n    from b.c import One, two as Two\n    from d import (\n        three,\n    )\n"
        "if other:\n    from e import four\n"
    )
    assert type_checking_imports(source) == {"One": "b.c", "Two": "b.c", "three": "d"}


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_the_type_checking_imports_and_each_resolves(name: str) -> None:
    package = importlib.import_module(name)
    listed = type_checking_imports(Path(str(package.__file__)).read_text("utf-8"))
    assert set(package.__all__) - {"__version__"} == set(listed)
    for public, module in listed.items():
        if importlib.util.find_spec(f"{name}.{public}") is None:  # (ranking.percent, once imported, is the submodule)
            assert getattr(package, public) is getattr(importlib.import_module(module), public)
    assert set(listed) <= set(dir(package))
    with pytest.raises(AttributeError, match="has no attribute 'nothing_such'"):
        package.nothing_such  # noqa: B018


def test_a_name_imports_only_its_module() -> None:
    code = (
        "import sys, coderiv.pairs\ncoderiv.pairs.PairTable\n"
        "print('coderiv.pairs.lineage' in sys.modules, 'coderiv.pairs.table' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
