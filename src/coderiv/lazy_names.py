"""A package's public names imported on first use (PEP 562), shared by ``coderiv`` and its
packages: importing one module of a package does not import all the others, so a command's
start-up pays only for what it uses.

The names are listed once, as the imports of the package's ``if TYPE_CHECKING:`` block (what
type checkers and readers see; ``__all__`` lists them again for mypy's explicit re-exports,
which tests/test_lazy_names.py checks): that block, read from the package's source on the first
name asked for, says which module each name is imported from."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def type_checking_imports(source: str) -> dict[str, str]:
    """Name -> module of every ``from MODULE import NAME`` in the top-level
    ``if TYPE_CHECKING:`` blocks of ``source``."""
    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    names.update((alias.asname or alias.name, statement.module) for alias in statement.names)
    return names


def lazy_names(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(``__getattr__``, ``__dir__``) for ``package``, whose public names are those its
    ``if TYPE_CHECKING:`` block imports: a name's module is imported when the name is first
    used, and the value kept in the package."""
    found: dict[str, str] = {}

    def names() -> dict[str, str]:
        if not found:  # (two threads asking at once read the same names)
            found.update(type_checking_imports(Path(str(sys.modules[package].__file__)).read_text("utf-8")))
        return found

    def __getattr__(name: str) -> Any:
        module = names().get(name) if not name.startswith("__") else None
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names()))

    return __getattr__, __dir__
