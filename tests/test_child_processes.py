"""Pool workers keep the memory they free for their next batches (index/child_processes.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = """
import sys
import numpy as np
from coderiv.system.child_processes import keep_freed_memory
kept = keep_freed_memory() if sys.argv[1] == "keep" else None
array = np.ones(6 << 20)  # 48 MB: past glibc's largest dynamic mmap threshold (32 MB)
address = array.ctypes.data
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[heap]"):
        start, end = (int(part, 16) for part in line.split()[0].split("-"))
        print(kept, start <= address < end)
        break
else:
    print(kept, False)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/maps").exists(), reason="glibc's malloc on Linux")
def test_a_worker_s_arrays_of_tens_of_megabytes_come_from_its_heap():
    """Without the setting, a 48 MB array is a fresh mapping of its own (its pages faulted in and
    zeroed by the kernel for every batch, then unmapped); with it, the array lies in the heap,
    whose freed memory the next batch reuses."""

    def run(mode: str) -> str:
        return subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True).stdout.split()

    assert run("plain") == ["None", "False"]
    assert run("keep") == ["True", "True"]
