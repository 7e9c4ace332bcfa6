"""The few C library calls Python's standard library lacks, found in one place.

coderiv asks Linux and glibc for things ``os`` does not offer: ``prctl`` (a worker dies with its
parent), ``mallopt`` and ``malloc_trim`` (freed memory kept for a worker's next batch, or given
back after a pairs store build), ``fallocate`` (a read scratch file's pages freed) and
``sync_file_range`` (a store file's disk writes started early). Each is an optimisation or a
safety net with a fallback, so :func:`c_function` gives None wherever the call is missing (another
system, another C library) and the caller goes on without it. The library is the one the
interpreter already has loaded (``CDLL(None)``): no search for it (``ctypes.util.find_library``
runs ``ldconfig``, a few milliseconds at start-up).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any


@cache
def _library() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def c_function(name: str, argtypes: Sequence[Any], restype: Any = ctypes.c_int) -> Callable[..., Any] | None:
    """The C library's function ``name`` with these argument and result types (ctypes types), or
    None where there is none (not Linux, or a C library without it)."""
    library = _library()
    if library is None:
        return None
    try:
        found = getattr(library, name)
    except AttributeError:
        return None
    found.argtypes, found.restype = list(argtypes), restype
    return found  # type: ignore[no-any-return]
