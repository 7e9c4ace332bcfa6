"""Giving back the memory of a scratch file's part that a merge has read.

A build writes its runs' segments to scratch files and reads each back once, in order, while it
writes the store they merge into. Until the scratch folder is removed at the end, their page
cache stays allocated, so the store's own writes take as many pages again; on a virtual machine
whose host reclaims the memory a guest frees, a page the guest has not used lately costs a
host fault on first touch (measured: docs/performance-history.md). Punching out a scratch
file's part once it has been read (``fallocate(FALLOC_FL_PUNCH_HOLE)``, Linux) frees its
pages at once, and the store's writes reuse them. The file keeps its size; the hole reads as
zeros, and nothing reads it again.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from coderiv.system.libc import c_function

#: fallocate(2) modes: keep the size, free the range.
FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
#: Ranges are freed in whole pages of this many bytes.
PAGE = 4096
#: A file's read part is freed once this much has gathered: each call costs a file system
#: transaction, so freeing every key range's few hundred KB of each run costs more than it
#: gives (measured: docs/performance-history.md).
RELEASE_BYTES = 8 << 20


_FALLOCATE = c_function("fallocate64", (ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64))


def release_prefix(path: Path, done: int, upto: int, at_least: int = RELEASE_BYTES) -> int:
    """Free the pages of bytes ``[done, upto)`` of ``path`` (rounded inwards to whole pages),
    already read and never read again, once they are ``at_least`` bytes; gives the new ``done``
    (unchanged where nothing was freed: too little yet, another system, a file system without
    holes)."""
    lo = -(-done // PAGE) * PAGE
    hi = upto // PAGE * PAGE
    if _FALLOCATE is None or hi <= lo or hi - lo < at_least:
        return done
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return done
    try:
        if _FALLOCATE(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, lo, hi - lo) != 0:
            return done
    finally:
        os.close(fd)
    return hi
