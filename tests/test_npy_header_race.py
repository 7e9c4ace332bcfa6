"""Reading a ``.npy`` header while another thread builds a Python AST: only damage is "index
damaged".

numpy parses a ``.npy`` header with ``ast.literal_eval``. CPython before 3.11.8 and 3.12.2
(gh-106905) kept the AST constructor's recursion depth in state shared by every thread: when
the collector runs Python code (a finaliser) in the middle of one thread's construction and
another thread builds an AST meanwhile (another header, or numba parsing a function's source
while it compiles a loop, as the chunk store's writer thread does), the first fails with
``SystemError: AST constructor recursion depth mismatch``. That once turned into a false
``index damaged: store-0/vals_over_at.npy cannot be read (SystemError)`` in a report-ready
build; :func:`coderiv.index.format.integrity.load_npy` now parses a header again after a SystemError
and calls "damaged" only what a file's bytes can cause."""

from __future__ import annotations

import ast
import gc
import sys
import threading

import numpy as np
import pytest
from numpy.lib import format as npy_format

from coderiv.errors import CorruptIndexError
from coderiv.index.format import integrity
from coderiv.index.format.integrity import load_npy


class _Finalised:
    """Garbage whose collection runs Python code: a point where the GIL can change hands."""

    def __del__(self) -> None:
        pass


def _garbage(count: int) -> None:
    for _ in range(count):
        cycle = _Finalised()
        cycle.me = cycle  # type: ignore[attr-defined]


def _parse_with_garbage(source: str, rounds: int, failures: list[str]) -> None:
    for _ in range(rounds):
        _garbage(50)
        try:
            ast.parse(source)
        except SystemError as exc:  # the race itself, seen on this thread
            failures.append(str(exc))


@pytest.mark.slow
def test_headers_read_while_another_thread_builds_asts_are_never_called_damaged(tmp_path):
    """Two threads, bounded (about 5 s): one loads ``.npy`` files, the other parses Python
    source, both amid garbage with finalisers, the switch interval at 1 µs. On an affected
    CPython the race shows as SystemErrors on the parsing thread (some hundred), and before the
    fix as about one false "index damaged" per 3,500 loads (measured: 4 in 14,091); the loading
    thread now gets every array, exact."""
    previous = sys.getswitchinterval()
    paths = []
    sizes = (100, 200, 250)
    for i, dtype in enumerate(("<u4", "<i8", "|u1")):
        paths.append(tmp_path / f"a{i}.npy")
        np.save(paths[-1], np.arange(sizes[i], dtype=dtype))
    source = "\n".join(f"def f{i}(a, b):\n    return [a + b * {i} for _ in range(3)]" for i in range(200))
    raced: list[str] = []
    errors: list[BaseException] = []
    loads = 0
    parser = threading.Thread(target=_parse_with_garbage, args=(source, 200, raced))
    sys.setswitchinterval(1e-6)
    try:
        parser.start()
        while parser.is_alive() and not errors:
            for i, path in enumerate(paths):
                _garbage(20)
                try:
                    array = load_npy(path)
                except BaseException as exc:  # noqa: BLE001 - what the test is about
                    errors.append(exc)
                    break
                assert array.tolist() == list(range(sizes[i]))
                loads += 1
        parser.join()
    finally:
        sys.setswitchinterval(previous)
    assert errors == []
    if not raced:
        pytest.skip(f"no AST race in {loads} loads on Python {sys.version.split()[0]} (fixed in 3.11.8 and 3.12.2)")


class _ParsesInsideAParse:
    """Cyclic garbage whose finaliser, run by the collector at the third collection in the
    middle of an ``ast.parse`` (numpy's ``literal_eval`` of a header: by then the header's AST
    is being built), builds another AST, once: what another thread does when the finaliser
    lets it take the GIL, here on the same thread, so that no timing decides. Until then each
    one leaves another like it, for the next collection."""

    def __init__(self, state: dict[str, int]) -> None:
        self.state, self.me = state, self

    def __del__(self) -> None:
        if self.state["nested"]:
            return
        frame = sys._getframe(1)
        while frame is not None and not (frame.f_code.co_name == "parse" and frame.f_globals.get("__name__") == "ast"):
            frame = frame.f_back
        if frame is not None:
            self.state["inside"] += 1
            if self.state["inside"] == 3:
                self.state["nested"] += 1
                ast.parse("[0] * 3")
                return
        _ParsesInsideAParse(self.state)


def test_an_ast_built_while_a_header_is_parsed_leaves_the_load_intact(tmp_path):
    """The race made deterministic: a header's ``literal_eval`` interrupted by the collector,
    whose finaliser builds another AST, fails with CPython's SystemError on an affected
    version (before the fix: "index damaged: a.npy cannot be read (SystemError)"); the load
    parses the header again and gets the array."""
    path = tmp_path / "a.npy"
    np.save(path, np.arange(5, dtype=np.int32))
    state = {"nested": 0, "inside": 0}
    thresholds = gc.get_threshold()
    gc.collect()
    try:
        gc.set_threshold(1)  # a collection at nearly every allocation: several inside the header's AST
        _ParsesInsideAParse(state)
        array = load_npy(path)
    finally:
        gc.set_threshold(*thresholds)
        nested, state["nested"] = state["nested"], 1
        gc.collect()
    assert array.tolist() == [0, 1, 2, 3, 4]
    assert nested == 1  # the other AST was built inside the header's parse


def test_a_header_parse_failing_once_with_a_system_error_is_parsed_again(tmp_path, monkeypatch):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(7, dtype=np.uint16))
    real = npy_format.read_array_header_1_0
    calls = []

    def flaky(stream, *args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=18, after=12)")
        return real(stream, *args, **kwargs)

    monkeypatch.setattr(npy_format, "read_array_header_1_0", flaky)
    assert load_npy(path).tolist() == list(range(7))
    assert load_npy(path, mmap=False).tolist() == list(range(7))
    assert len(calls) == 3


@pytest.mark.parametrize("error", [SystemError, MemoryError, RecursionError])
def test_a_failure_not_about_the_bytes_is_not_called_damage(tmp_path, monkeypatch, error):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(7, dtype=np.uint16))

    def failing(stream, *args, **kwargs):
        raise error("not the file's fault")

    monkeypatch.setattr(npy_format, "read_array_header_1_0", failing)
    for mmap in (True, False):
        with pytest.raises(error, match="not the file's fault"):
            load_npy(path, mmap)


@pytest.mark.parametrize(("damage", "kind"), [
    (lambda data: data[:5], "ValueError"),  # cut inside the magic string
    (lambda data: data[:60], "ValueError"),  # cut inside the header
    (lambda data: data.replace(b"'descr'", b"'descr\""), "ValueError"),  # numpy's answer to a header that does not parse
    (lambda data: data.replace(b"}", b" "), "TokenError"),  # ... unless its filter of Python 2 headers fails first
    (lambda data: data.replace(b"(7,)", b"(9,)"), "ValueError"),  # more elements than the file holds
    (lambda data: data.replace(b"(7,)", b"(7 )"), "ValueError"),  # not a tuple
    (lambda data: data.replace(b"'<u2'", b"'<x2'"), "ValueError"),  # no such dtype
    (lambda data: data.replace(b"False", b"Falsf"), "ValueError"),
])
def test_a_damaged_header_is_one_line(tmp_path, damage, kind):
    path = tmp_path / "store-0" / "a.npy"
    path.parent.mkdir()
    np.save(path, np.arange(7, dtype=np.uint16))
    path.write_bytes(damage(path.read_bytes()))
    for mmap in (True, False):
        with pytest.raises(CorruptIndexError) as caught:
            load_npy(path, mmap)
        assert str(caught.value) == f"index damaged: store-0/a.npy cannot be read ({kind}); rebuild with coderiv index"


def test_the_header_is_read_with_numpys_own_reader(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.zeros((3, 4), dtype=">i4", order="F"))
    with open(path, "rb") as handle:
        shape, fortran, dtype, offset = integrity._header(handle)
    assert (shape, fortran, dtype.str, offset) == ((3, 4), True, ">i4", 128)
    assert load_npy(path).flags.f_contiguous and load_npy(path, mmap=False).shape == (3, 4)
