"""coderiv.jit: the one way the optional numba loops are compiled, and loaded once."""

import subprocess
import sys
import textwrap
import threading

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
def test_a_loop_that_cannot_compile_gives_none() -> None:
    def bad(x: np.ndarray) -> object:
        return {frozenset([x.shape[0]]): object()}  # nothing numba can type

    assert jit.compile_loops({"bad": bad}, lambda k: k["bad"](np.ones(1))) is None


def _fresh_python(script: str) -> list[str]:
    """The lines ``script`` prints, run by a new interpreter (scipy not imported yet)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, check=True)
    return done.stdout.split()


@needs_numba
def test_scipy_is_hidden_from_the_compiling_thread_only() -> None:
    """numba's BLAS probe does not import scipy in the thread that compiles; another thread
    importing scipy.linalg meanwhile gets it (the old sys.modules patch made it fail), and
    afterwards scipy imports as usual everywhere."""
    printed = _fresh_python("""
        import sys, threading
        import numpy as np
        from coderiv import jit

        def first(x):
            return x[0] + 1.0

        def second(x):
            return x[0] * 2.0

        imported = []

        def import_scipy():
            try:
                import scipy.linalg
                imported.append(scipy.linalg.__name__)
            except ImportError:
                imported.append("refused")

        def meanwhile(kernels):
            other = threading.Thread(target=import_scipy)
            other.start()
            other.join()
            kernels["second"](np.ones(1))

        assert jit.compile_loops({"first": first}, lambda k: k["first"](np.ones(1))) is not None
        print("scipy" in sys.modules)  # the compiling thread's BLAS probe was refused scipy
        assert jit.compile_loops({"second": second}, meanwhile) is not None
        print(*imported)
        import scipy.sparse
        print(scipy.sparse.__name__)
    """)
    assert printed == ["False", "scipy.linalg", "scipy.sparse"]


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


def _fake_compiler(monkeypatch: pytest.MonkeyPatch, result: dict[str, object] | None) -> list[list[str]]:
    """jit.compile_loops replaced by one that records its calls (and lets other threads run
    meanwhile), returning ``result``."""
    calls: list[list[str]] = []

    def compile_loops(loops: dict[str, object], warm_up: object = None) -> dict[str, object] | None:
        calls.append(sorted(loops))
        threading.Event().wait(0.01)  # the other threads reach load() meanwhile
        return result

    monkeypatch.setattr(jit, "compile_loops", compile_loops)
    return calls


def test_kernels_compile_once_whichever_threads_ask(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_compiler(monkeypatch, {"sum": _weighted_sum})
    kernels = jit.LazyKernels({"sum": _weighted_sum})
    assert not kernels.loaded()
    start, answers = threading.Barrier(8), []

    def ask() -> None:
        start.wait()
        answers.append(kernels.load())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [True] * 8 and calls == [["sum"]]
    assert kernels.loaded() and not kernels.failed() and kernels["sum"] is _weighted_sum
    assert kernels.fresh().loaded() is False and kernels.fresh().loops == {"sum": _weighted_sum}


def test_kernels_that_fail_are_not_compiled_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_compiler(monkeypatch, None)
    kernels = jit.LazyKernels({"sum": _weighted_sum})
    assert not kernels.load() and not kernels.load()
    assert calls == [["sum"]] and kernels.failed() and not kernels.loaded()


@needs_numba
def test_kernels_compile_their_helpers_first(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace, plain = globals(), _halved
    monkeypatch.setitem(namespace, "_halved", plain)  # put back the plain function afterwards
    kernels = jit.LazyKernels({"sum": _sum_of_halves}, lambda k: k["sum"](np.ones(1)), helpers=(namespace, ("_halved",)))
    assert kernels.load() and kernels["sum"](np.array([1.0, 3.0, 4.5])) == 4.25
    assert namespace["_halved"].py_func is plain
