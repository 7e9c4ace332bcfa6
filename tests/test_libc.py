"""The C library calls: found with their types on Linux, None for a name the library lacks."""

from __future__ import annotations

import ctypes
import sys

import pytest

from coderiv.system.libc import c_function


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the calls are Linux's")
def test_a_function_the_library_has_is_callable_with_its_types() -> None:
    """``abs`` of the C library, typed int -> int, gives 7 for -7; its types are the ones asked."""
    found = c_function("abs", (ctypes.c_int,))
    assert found is not None
    assert found(-7) == 7
    assert found.argtypes == [ctypes.c_int] and found.restype is ctypes.c_int


def test_a_name_the_library_lacks_gives_none() -> None:
    assert c_function("coderiv_no_such_function", (ctypes.c_int,)) is None
