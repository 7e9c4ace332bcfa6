"""Early writeback: a store file's writer starts each 16 MB on its way to disk, and the bytes
are the ones ``np.save`` writes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from coderiv.index.builder import files
from coderiv.index.builder.files import NpyWriter
from coderiv.system import early_writeback


def test_writer_starts_writeback_of_each_full_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a step of 1,000 bytes, uint64 pieces of 100, 50 and 200 values after a 128-byte
    header: the file ends at 928, 1,328 and 2,928 bytes, so writeback starts for [0, 1,328)
    after the second piece and [1,328, 2,928) after the third, none after the first."""
    started: list[tuple[int, int]] = []
    monkeypatch.setattr(files, "WRITEBACK_BYTES", 1000)
    monkeypatch.setattr(files, "start_writeback", lambda fd, offset, nbytes: started.append((offset, nbytes)) or True)
    out = NpyWriter(tmp_path / "w.npy", np.dtype(np.uint64))
    assert out.header_size == 128
    pieces = [np.arange(100), np.arange(100, 150), np.arange(150, 350)]
    seen = []
    for piece in pieces:
        out.append(piece)
        seen.append(list(started))
    out.close()
    assert seen == [[], [(0, 1328)], [(0, 1328), (1328, 1600)]]
    np.save(tmp_path / "s.npy", np.arange(350, dtype=np.uint64))
    assert (tmp_path / "w.npy").read_bytes() == (tmp_path / "s.npy").read_bytes()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sync_file_range is Linux's")
def test_kernel_takes_the_request_for_a_file_and_refuses_a_bad_descriptor(tmp_path: Path) -> None:
    """On Linux the call succeeds for a written file (its bytes unchanged) and fails, returning
    False rather than raising, for a descriptor that is not open or a range of no bytes."""
    path = tmp_path / "f.bin"
    data = os.urandom(1 << 16)
    with open(path, "wb") as file:
        file.write(data)
        file.flush()
        assert early_writeback.start_writeback(file.fileno(), 0, len(data)) is True
        assert early_writeback.start_writeback(file.fileno(), 0, 0) is False
    read, unused = os.pipe()
    os.close(read)
    os.close(unused)
    assert early_writeback.start_writeback(read, 0, 4096) is False
    assert path.read_bytes() == data
