"""Giving the memory a finished build freed back to the system before a pairs run.

``coderiv pairs`` on an index without the chunk store it needs first adds the store, in the
same process (:func:`~coderiv.pairs.run.open_for_pairs`). The build's threads allocate and
free hundreds of megabytes of arrays; glibc keeps what they freed in its per-thread arenas (an
array below its adaptive mmap threshold, up to 32 MB, comes from an arena and goes back to it),
so the process still held ~680 MB resident after the build of 2,500 ~8,000-word documents
though ~190 MB was live, and the pairs run's own arrays came on top of that.
``malloc_trim(0)`` returns every arena's free pages (glibc ≥ 2.8 trims all arenas, not only
the top of the main heap); elsewhere (musl, macOS, Windows) there is nothing to call and
nothing is done.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from coderiv.system.libc import c_function


def _trim() -> Callable[..., Any] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    return c_function("malloc_trim", [ctypes.c_size_t])


def release_free_heap() -> bool:
    """Return the C heap's free pages to the system; whether anything could be asked (glibc)."""
    trim = _trim()
    if trim is None:
        return False
    trim(0)
    return True
