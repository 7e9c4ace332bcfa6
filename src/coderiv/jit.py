"""coderiv's optional compiled loops (numba, ``pip install 'coderiv[fast]'``), compiled one way.

Each accelerated module (the word loop of the analysis, the index writer's loops, the query
pruning's loops, the pairs loop) keeps an exact numpy path and asks :func:`compile_loops` for
numba versions of its plain-Python loops. They are compiled with numba's on-disk cache where
numba finds a writable place for one (compiled once per machine, then loaded in a fraction of a
second), in memory otherwise; ``None`` when numba is missing or cannot compile them, and the
numpy path runs.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

_COMPILING = threading.Lock()  # sys.modules is patched while numba loads (below)


def available() -> bool:
    """Whether numba is installed (``coderiv[fast]``)."""
    return importlib.util.find_spec("numba") is not None


def compile_loops(
    loops: Mapping[str, Callable[..., Any]], warm_up: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any] | None:
    """numba versions of ``loops`` (``nogil``, so threads can run them at once), by name, after
    ``warm_up`` has called them with the array types they will get (which compiles them, or
    loads them from the cache); None when numba is missing or fails."""
    if not available():
        return None
    with _COMPILING:
        # numba's CPU target imports scipy.linalg to look for BLAS (a second or so of start-up);
        # the loops use no BLAS, so scipy is hidden from it unless something already imported it
        hide = "scipy" not in sys.modules
        if hide:
            sys.modules["scipy"] = None  # type: ignore[assignment]
        try:
            return _compile(loops, warm_up)
        finally:
            if hide:
                del sys.modules["scipy"]


def _compile(loops: Mapping[str, Callable[..., Any]], warm_up: Callable[[dict[str, Any]], None] | None) -> dict[str, Any] | None:
    try:
        import numba
    except Exception:  # noqa: BLE001 - an accelerator that cannot load is simply not used
        return None
    for cache in (True, False):  # in memory when numba has no writable place for a cache
        try:
            kernels = {name: numba.njit(cache=cache, nogil=True)(loop) for name, loop in loops.items()}
            if warm_up is not None:
                warm_up(kernels)
        except Exception:  # noqa: BLE001
            continue
        return kernels
    return None


def compile_helpers(namespace: dict[str, Any], names: Sequence[str]) -> bool:
    """Compile the functions ``names`` of a module's ``namespace`` (its ``globals()``) and put
    the compiled versions in their place, before :func:`compile_loops` compiles the loops that
    call them: a compiled loop calls a helper by its module name, and only a compiled one. False
    when numba is missing or fails (the plain functions stay)."""
    plain = {name: getattr(namespace[name], "py_func", namespace[name]) for name in names}
    compiled = compile_loops(plain)
    if compiled is None:
        return False
    namespace.update(compiled)
    return True
