"""coderiv.jit: the one way the optional numba loops are compiled."""

import sys

import numpy as np
import pytest

from coderiv import jit

needs_numba = pytest.mark.skipif(not jit.available(), reason="numba (coderiv[fast]) not installed")


def _weighted_sum(values: np.ndarray, weights: np.ndarray) -> float:
    total = 0.0
    for i in range(values.shape[0]):
        total += values[i] * weights[i]
    return total


@needs_numba
def test_compiled_loops_give_the_plain_loops_results_and_are_warmed_up() -> None:
    seen: list[float] = []
    kernels = jit.compile_loops(
        {"sum": _weighted_sum}, lambda k: seen.append(k["sum"](np.ones(2), np.full(2, 0.5)))
    )
    assert kernels is not None and seen == [1.0]
    values, weights = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.25, 2.0])
    assert kernels["sum"](values, weights) == _weighted_sum(values, weights) == 7.0
    assert kernels["sum"].signatures  # compiled, not the Python function


@needs_numba
def test_without_a_writable_cache_the_loops_compile_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    import numba

    real, asked = numba.njit, []

    def njit(*args: object, **options: object) -> object:
        asked.append(options.get("cache"))
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return real(*args, **options)

    monkeypatch.setattr(numba, "njit", njit)
    kernels = jit.compile_loops({"sum": _weighted_sum})
    assert kernels is not None and asked == [True, False]
    assert kernels["sum"](np.array([4.0]), np.array([0.25])) == 1.0


@needs_numba
def test_a_loop_that_cannot_compile_gives_none_and_scipy_is_left_as_it_was() -> None:
    def bad(x: np.ndarray) -> object:
        return {frozenset([x.shape[0]]): object()}  # nothing numba can type

    had_scipy = "scipy" in sys.modules
    assert jit.compile_loops({"bad": bad}, lambda k: k["bad"](np.ones(1))) is None
    assert ("scipy" in sys.modules) == had_scipy and sys.modules.get("scipy", 0) is not None


def test_without_numba_nothing_is_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit, "available", lambda: False)
    assert jit.compile_loops({"sum": _weighted_sum}) is None


def _halved(x: float) -> float:
    return x / 2.0


def _sum_of_halves(values: np.ndarray) -> float:
    total = 0.0
    for i in range(values.shape[0]):
        total += _halved(values[i])  # by its module name: compiled by compile_helpers first
    return total


@needs_numba
def test_helpers_are_compiled_in_place_for_the_loops_that_call_them(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace, plain = globals(), _halved
    monkeypatch.setitem(namespace, "_halved", plain)  # put back the plain function afterwards
    assert jit.compile_helpers(namespace, ("_halved",))
    assert namespace["_halved"].py_func is plain
    assert jit.compile_helpers(namespace, ("_halved",))  # again: from the plain function, not the compiled one
    kernels = jit.compile_loops({"sum": _sum_of_halves}, lambda k: k["sum"](np.ones(1)))
    assert kernels is not None and kernels["sum"](np.array([1.0, 3.0, 4.5])) == 4.25
