"""Starting the disk writes of a store file while the rest of it is still being written.

A commit fsyncs every file of the new generation (:func:`coderiv.index.format.storage.commit`). With
Linux's default thresholds (background writeback from 10% of memory, or after 30 s) nothing of
a build's few hundred MB has gone to disk by then, so the whole of it is written while the
build waits. :func:`start_writeback` asks the kernel to begin writing a range of a file now,
without waiting (``sync_file_range`` with ``SYNC_FILE_RANGE_WRITE``, Linux), so the disk works
while the merge goes on and the commit's fsync finds little left (measured: docs/performance-history.md). Durability is unchanged: the
commit still fsyncs every file before it publishes the generation; this only starts sooner.
"""

from __future__ import annotations

import ctypes

from coderiv.system.libc import c_function

#: sync_file_range(2) flag: start writing out the range's dirty pages, do not wait for them.
SYNC_FILE_RANGE_WRITE = 2
#: A store file's writer starts the writeback each time this many bytes have gathered: large
#: enough that the calls cost nothing measurable, small enough to keep the disk busy.
WRITEBACK_BYTES = 16 << 20


_SYNC_FILE_RANGE = c_function("sync_file_range", (ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint))


def start_writeback(fd: int, offset: int, nbytes: int) -> bool:
    """Start writing bytes ``[offset, offset + nbytes)`` of the open file ``fd`` to disk, without
    waiting; whether the kernel took the request (False on other systems, or for a file that
    does not support it: nothing changes then, the commit's fsync writes everything)."""
    if _SYNC_FILE_RANGE is None or nbytes <= 0:
        return False
    return bool(_SYNC_FILE_RANGE(fd, offset, nbytes, SYNC_FILE_RANGE_WRITE) == 0)
