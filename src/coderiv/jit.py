"""coderiv's optional compiled loops (numba, ``pip install 'coderiv[fast]'``), compiled one way.

Each accelerated module (the word loop of the analysis, the index writer's loops, the query
pruning's loops, the pairs loop) keeps an exact numpy path and holds its plain-Python loops in a
:class:`LazyKernels`: compiled on first use, once per process whichever thread asks first, with
numba's on-disk cache where numba finds a writable place for one (compiled once per machine,
then loaded in a fraction of a second), in memory otherwise; not at all when numba is missing or
cannot compile them, and the numpy path runs.

numba's CPU target probes for a BLAS when it first compiles (``numba.np.arraymath`` imports
``scipy.linalg.cython_blas``: about 0.15 s of CPU, more than a cached loop takes to load). The
loops use no BLAS, so the thread that compiles them is refused every scipy module not imported
yet (:class:`_ScipyHidden`, a finder on ``sys.meta_path`` that answers only to that thread); any
other thread imports scipy as usual meanwhile.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any


def available() -> bool:
    """Whether numba is installed (``coderiv[fast]``)."""
    return importlib.util.find_spec("numba") is not None


class _ScipyHidden(importlib.abc.MetaPathFinder):
    """Refuses scipy's modules to the threads compiling loops (``hiding``), declines every
    other import. Installed once and never removed: taking a finder off ``sys.meta_path``
    while another thread walks it could make that thread skip the next finder."""

    def __init__(self) -> None:
        self.hiding = threading.local()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if (fullname == "scipy" or fullname.startswith("scipy.")) and getattr(self.hiding, "on", False):
            raise ModuleNotFoundError(f"{fullname} is not imported while coderiv compiles its loops", name=fullname)
        return None


_SCIPY_HIDDEN = _ScipyHidden()
_INSTALLING = threading.Lock()


def _hide_scipy(on: bool) -> None:
    """Refuse (or no longer) scipy's modules not yet imported to this thread."""
    if on and _SCIPY_HIDDEN not in sys.meta_path:
        with _INSTALLING:
            if _SCIPY_HIDDEN not in sys.meta_path:
                sys.meta_path.insert(0, _SCIPY_HIDDEN)
    _SCIPY_HIDDEN.hiding.on = on


def compile_loops(
    loops: Mapping[str, Callable[..., Any]], warm_up: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any] | None:
    """numba versions of ``loops`` (``nogil``, so threads can run them at once), by name, after
    ``warm_up`` has called them with the array types they will get (which compiles them, or
    loads them from the cache); None when numba is missing or fails."""
    if not available():
        return None
    hidden = getattr(_SCIPY_HIDDEN.hiding, "on", False)  # a helper compiled within a compile
    _hide_scipy(True)
    try:
        return _compile(loops, warm_up)
    finally:
        _hide_scipy(hidden)


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
    when numba is missing or fails (the plain functions stay).

    A helper imported from another module (:mod:`coderiv.index.format.packed_runs`) is compiled
    as if defined in ``namespace``, so that a helper calling another helper of ``names`` calls
    its compiled version too (numba resolves a call by the caller's globals)."""
    plain = {name: _in_namespace(getattr(namespace[name], "py_func", namespace[name]), namespace) for name in names}
    compiled = compile_loops(plain)
    if compiled is None:
        return False
    namespace.update(compiled)
    return True


def _in_namespace(function: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    """``function`` with ``namespace`` for its globals (itself if they already are)."""
    if function.__globals__ is namespace:
        return function
    return types.FunctionType(function.__code__, namespace, function.__name__, function.__defaults__)


class LazyKernels:
    """A module's compiled loops, compiled on the first :meth:`load` (by :func:`compile_loops`,
    after the ``helpers`` they call: a module's ``globals()`` and the helpers' names, for
    :func:`compile_helpers`), once per process: threads asking together wait for the one that
    compiles; a failure is final (the module's numpy path runs from then on)."""

    def __init__(
        self,
        loops: Mapping[str, Callable[..., Any]],
        warm_up: Callable[[dict[str, Any]], None] | None = None,
        helpers: tuple[dict[str, Any], Sequence[str]] | None = None,
    ) -> None:
        self.loops, self.warm_up, self.helpers = dict(loops), warm_up, helpers
        self._kernels: dict[str, Any] | None = None
        self._failed = False
        self._lock = threading.Lock()

    def load(self) -> bool:
        """Compile (or load from numba's cache) the loops unless done; whether they are ready."""
        if self._kernels is not None:
            return True
        with self._lock:
            if self._kernels is None and not self._failed:
                kernels = None
                if self.helpers is None or compile_helpers(*self.helpers):
                    kernels = compile_loops(self.loops, self.warm_up)
                self._kernels, self._failed = kernels, kernels is None
            return self._kernels is not None

    def loaded(self) -> bool:
        """Whether the loops are ready in this process."""
        return self._kernels is not None

    def failed(self) -> bool:
        """Whether loading was tried and failed (numba missing or unable to compile them)."""
        return self._failed

    def fresh(self) -> LazyKernels:
        """The same loops, not loaded yet (a new process's state, for tests)."""
        return LazyKernels(self.loops, self.warm_up, self.helpers)

    def __getitem__(self, name: str) -> Any:
        """The compiled loop ``name`` (after a successful :meth:`load`)."""
        assert self._kernels is not None, "load() the kernels first"
        return self._kernels[name]
