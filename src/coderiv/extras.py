"""Optional dependency groups ("extras"): importing one's module, or a one-line error that names
the extra to install. The CLI prints that message as it is and exits non-zero."""

from __future__ import annotations

import importlib
from types import ModuleType

from coderiv.errors import MissingExtraError


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` (e.g. ``"distributed"``) or raise :class:`MissingExtraError` saying that
    ``feature`` needs ``coderiv[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{feature} needs the optional dependencies coderiv[{extra}]: pip install 'coderiv[{extra}]'"
        ) from None
