"""Scratch files' read parts given back (index.scratch_pages): the pages before a point are
freed, the file keeps its size and the bytes after it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from coderiv.system.scratch_pages import PAGE, release_prefix


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fallocate's punched holes are Linux's")
def test_release_frees_whole_pages_before_the_point_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "keys.bin"
    values = np.arange(1 << 18, dtype=np.uint32)  # 1 MiB, 256 pages
    values.tofile(path)
    blocks = os.stat(path).st_blocks
    assert release_prefix(path, 0, 500_000) == 0  # less than RELEASE_BYTES: not yet
    done = release_prefix(path, 0, 500_000, at_least=PAGE)  # 122 whole pages and part of the 123rd
    if done == 0:
        pytest.skip("this file system keeps no holes")
    assert done == 122 * PAGE
    assert os.stat(path).st_size == values.nbytes
    assert os.stat(path).st_blocks == blocks - 122 * PAGE // 512
    read = np.fromfile(path, np.uint32)
    assert not read[: done // 4].any()
    assert np.array_equal(read[done // 4 :], values[done // 4 :])
    assert release_prefix(path, done, done + PAGE - 1, at_least=PAGE) == done  # less than a page more: nothing
    assert release_prefix(path, done, 600_000, at_least=PAGE) == 146 * PAGE
    assert release_prefix(tmp_path / "absent.bin", 0, 1 << 20, at_least=PAGE) == 0
