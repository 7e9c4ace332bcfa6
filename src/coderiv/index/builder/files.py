"""Output files written front to back in pieces without holding them: ``.npy`` arrays
(:class:`NpyWriter`) and split ascending numbers (:class:`SplitWriter`), and the scratch folder
of a build."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from numpy.lib.format import dtype_to_descr, write_array_header_1_0

from coderiv.index.format.encoded import narrow
from coderiv.system.early_writeback import WRITEBACK_BYTES, start_writeback


class NpyWriter:
    """A one-dimensional ``.npy`` file written front to back in pieces, its length filled in when
    closed: the same bytes as ``np.save`` of the whole array, without holding it. The header
    has a fixed size (numpy pads it for any length), which :meth:`close` checks. A full disk is
    an ``OSError`` from a write, never a fault in a memory map. Every
    :data:`~coderiv.system.early_writeback.WRITEBACK_BYTES` written start their way to disk
    (:mod:`~coderiv.system.early_writeback`), so that the commit's fsync finds little left."""

    def __init__(self, path: Path, dtype: np.dtype) -> None:
        self.path, self.dtype, self.length = path, np.dtype(dtype), 0
        self.file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.header_size = self._header()
        #: where a piece of another type is converted, reused from piece to piece (no fresh pages)
        self._converted = np.empty(0, self.dtype)
        #: bytes whose writeback has been started (the file's first bytes up to there)
        self.written_back = 0

    def _header(self) -> int:
        header = {"descr": dtype_to_descr(self.dtype), "fortran_order": False, "shape": (self.length,)}
        write_array_header_1_0(self.file, header)
        return self.file.tell()

    def append(self, array: np.ndarray) -> None:
        array = np.asarray(array)
        if array.dtype != self.dtype or not array.flags.c_contiguous:
            if len(self._converted) < len(array):
                self._converted = np.empty(len(array), self.dtype)
            converted = self._converted[: len(array)]
            np.copyto(converted, array, casting="unsafe")
            array = converted
        array.tofile(self.file)
        self.length += len(array)
        end = self.header_size + self.length * self.dtype.itemsize
        if end - self.written_back >= WRITEBACK_BYTES:
            # (tofile flushes the file and writes through its descriptor: nothing is buffered)
            start_writeback(self.file.fileno(), self.written_back, end - self.written_back)
            self.written_back = end

    def close(self) -> None:
        if self.file.closed:
            return
        try:
            self.file.seek(0)
            if self._header() != self.header_size:
                raise RuntimeError(f"npy header of {self.path} changed size")
        finally:
            self.file.close()


class SplitWriter:
    """Ascending numbers below 2³² (a split store's keys or offsets) written front to back in
    pieces as :class:`~coderiv.index.format.postings.SplitNumbers`: their low 16 bits, and a run
    wherever the high bits change. The runs (at most 65,536) are kept and saved on
    :meth:`close`, so the files are the bytes ``np.save`` gives the in-memory encoding."""

    def __init__(self, folder: Path, names: tuple[str, str, str]) -> None:
        self.folder, self.names = folder, names
        self.low = NpyWriter(folder / f"{names[0]}.npy", np.dtype(np.uint16))
        self.length, self.high = 0, -1
        self.run_at: list[np.ndarray] = []
        self.run_high: list[np.ndarray] = []

    def append(self, values: np.ndarray) -> None:
        """Append ascending ``values`` (each at least the last one appended)."""
        if not len(values):
            return
        values = np.asarray(values)
        # the values ascend: each high part's first value is found by a binary search, one per
        # high part in the piece (no pass over the piece but the low bits' cast)
        highs = np.arange(int(values[0]) >> 16, (int(values[-1]) >> 16) + 1, dtype=np.int64)
        at = np.searchsorted(values, (highs << 16).astype(values.dtype))
        present = at < np.append(at[1:], len(values))  # a high part no value has starts where the next does
        at, highs = at[present], highs[present]
        if int(highs[0]) == self.high:  # the piece continues the last run
            at, highs = at[1:], highs[1:]
        self.run_at.append(at + self.length)
        self.run_high.append(highs)
        self.low.append(values)  # (the writer's unsafe cast keeps the low 16 bits)
        self.length += len(values)
        self.high = int(values[-1]) >> 16

    def close(self) -> None:
        if self.low.file.closed:
            return
        self.low.close()
        run_at = narrow(np.concatenate([np.empty(0, np.int64), *self.run_at, [self.length]]).astype(np.int64))
        run_high = np.concatenate([np.empty(0, np.int64), *self.run_high]).astype(np.uint16)
        np.save(self.folder / f"{self.names[1]}.npy", run_at, allow_pickle=False)
        np.save(self.folder / f"{self.names[2]}.npy", run_high, allow_pickle=False)


def scratch_folder(root: Path) -> Path:
    """A temporary folder for runs and segments beside the index (same filesystem)."""
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="tmp-scratch-", dir=root))
