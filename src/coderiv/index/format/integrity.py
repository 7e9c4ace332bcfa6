"""Block checksums: every byte a query reads is checked before its answer can depend on it.

The writer records a CRC-32 of every :data:`BLOCK` bytes of every file of a generation
(:func:`block_crcs`, stored in :data:`BLOCKS_FILE`, itself covered by the manifest's
SHA-256 and checked whole at open: 4 bytes per 64 KiB). They are those files' only checksums
(no SHA-256 of each file: it cost a report-ready build three times the CRCs' CPU and found no
damage they miss; neither is a defence against tampering, the manifest being unsigned), and a
full verify recomputes them (:func:`first_bad_block`). A reader wraps each memory-mapped array in
a :class:`FileGuard`: a block is checked the first time a read touches it (a bitmap per file,
so once per process), and a damaged block is a one-line :class:`CorruptIndexError` naming the
file and block. Opening stays cheap (nothing but the checksum table is read), a query checks only
the blocks it touches, and no damage a query reads can change an answer silently.

Arrays are reached in two ways. The hot reads (a key's postings, the pointers of the keys
looked up, the binary searches over keys and runs) go through the guarded methods of
:mod:`.postings` and :mod:`.counts`, which check only the blocks they touch; every other read
takes the array through a :class:`Checked` attribute, which checks the whole file the first
time (sound by default: a reader that forgets to ask still cannot read unchecked bytes).
CRC-32 (zlib) runs at about 3 GB/s here; a block is checked once per process.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import threading
import tokenize
import zlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

import numpy as np
from numpy.lib import format as npy_format

from coderiv.errors import CorruptIndexError
from coderiv.system.mapped_pages import LARGE_FILE, RESIDENCY

#: Bytes per checksummed block: small enough that a query touching a few postings of many
#: keys checks little more than it reads (64 KiB ≈ 20 µs of CRC-32), large enough that the
#: table is 1/16,384 of the index.
BLOCK = 1 << 16
#: Files up to this size are checked whole at their first read (under 1 ms of CRC-32): later
#: reads then skip every check, which matters for small indexes whose queries take a few ms.
WHOLE_BELOW = 4 << 20
#: The generation's block checksum table: uint32 CRC-32s, the files' blocks one after another
#: in the manifest's file order (each file's first entry is its ``first_block``).
BLOCKS_FILE = "block_crc32.bin"


def block_crcs(path: Path, block: int = BLOCK) -> np.ndarray:
    """CRC-32 of every ``block`` bytes of the file at ``path`` (the last block may be shorter),
    in one read: what the writer records in :data:`BLOCKS_FILE` and what a full verify
    recomputes."""
    crcs: list[int] = []
    buffer = memoryview(bytearray(block * 16))  # reused: no new 1 MiB of memory to fault in per read
    with open(path, "rb") as handle:  # buffered: readinto fills the buffer but at the end of the file
        while read := handle.readinto(buffer):
            crcs.extend(zlib.crc32(buffer[a : min(a + block, read)]) for a in range(0, read, block))
    return np.array(crcs, np.uint32)


def first_bad_block(path: Path, recorded: np.ndarray, block: int = BLOCK) -> int | None:
    """The first block of ``path`` whose CRC-32 differs from ``recorded`` (its slice of the
    block table), None when every block matches."""
    crcs = block_crcs(path, block)
    common = min(len(crcs), len(recorded))
    differ = np.flatnonzero(crcs[:common] != recorded[:common])
    if len(differ):
        return int(differ[0])
    return common if len(crcs) != len(recorded) else None


def damaged(rel: str, block: int) -> CorruptIndexError:
    """The one-line error a damaged block gives."""
    return CorruptIndexError(f"index damaged: {rel} block {block}; rebuild with coderiv index")


class FileGuard:
    """The block checks of one memory-mapped ``.npy`` (or raw) file: its bytes are the header
    (read once, small) followed by ``array``'s data, and block ``b`` covers file bytes
    ``[b·BLOCK, (b+1)·BLOCK)``."""

    def __init__(self, rel: str, path: Path, array: np.ndarray, crcs: np.ndarray, block: int = BLOCK) -> None:
        self.rel, self.block, self.crcs = rel, block, crcs
        flat = np.asarray(array).reshape(-1)
        self.data = flat.view(np.uint8) if flat.flags.c_contiguous else np.ascontiguousarray(flat).view(np.uint8)
        self.itemsize = max(1, np.asarray(array).dtype.itemsize)
        mapped = _whole_file(array, path)
        self.size = len(mapped) if mapped is not None else path.stat().st_size
        self.offset = self.size - self.data.nbytes  # the .npy header's length
        if mapped is not None:
            self.header = bytes(mapped[: max(self.offset, 0)])
        else:
            with open(path, "rb") as handle:
                self.header = handle.read(self.offset)
        self.done = np.zeros(len(crcs), bool)
        self.checked = 0
        self.complete = not len(crcs)
        self._lock = threading.Lock()
        if len(crcs) != -(-self.size // block) or self.offset < 0:
            raise CorruptIndexError(f"index damaged: {rel} does not match its block checksums; rebuild with coderiv index")
        #: a large file's reads are reported to :data:`.mapped_pages.RESIDENCY`, which releases its
        #: pages from time to time: a process's resident set stays near what it reads now
        self.large = self.size >= LARGE_FILE and isinstance(_whole_file(array, path), mmap.mmap)
        self.residency_key = RESIDENCY.add(self.data) if self.large else 0

    def _check(self, blocks: np.ndarray) -> None:
        """Check the given blocks (any order, repeats allowed) that are not yet checked."""
        todo = blocks[~self.done[blocks]]
        if not len(todo):
            return
        todo = np.unique(todo)
        with self._lock:
            for b in todo.tolist():
                if self.done[b]:
                    continue
                lo, hi = b * self.block, min((b + 1) * self.block, self.size)
                crc = 0
                if lo < self.offset:
                    crc = zlib.crc32(self.header[lo : min(hi, self.offset)])
                start = max(lo, self.offset) - self.offset
                if hi > self.offset:
                    crc = zlib.crc32(self.data[start : hi - self.offset].data, crc)
                if crc != int(self.crcs[b]):
                    raise damaged(self.rel, b)
                self.done[b] = True
                self.checked += 1
                if self.large:
                    RESIDENCY.reading(self.residency_key, hi - lo)  # the check itself reads the block through the map
            self.complete = self.checked == len(self.crcs)

    def whole(self) -> None:
        """Check every block (once)."""
        if not self.complete:
            self._check(np.arange(len(self.crcs)))
            self.complete = True

    def elements(self, positions: np.ndarray) -> None:
        """Check the blocks holding the array elements at ``positions`` (any order, any count)."""
        if self.large:
            RESIDENCY.reading(self.residency_key, min(np.size(positions), len(self.crcs)) * self.block)
        if self.complete:
            return
        if self.size <= WHOLE_BELOW:
            self.whole()
            return
        positions = np.asarray(positions, np.int64).reshape(-1)
        if len(positions):
            self._check((self.offset + positions * self.itemsize) // self.block)

    def spans(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Check the blocks holding elements ``starts[i]:ends[i]`` for every i."""
        if self.large:
            spanned = int(np.maximum(np.asarray(ends, np.int64) - np.asarray(starts, np.int64), 0).sum()) * self.itemsize
            RESIDENCY.reading(self.residency_key, min(spanned + np.size(starts) * self.block, self.size))
        if self.complete:
            return
        if self.size <= WHOLE_BELOW:
            self.whole()
            return
        starts, ends = np.asarray(starts, np.int64).reshape(-1), np.asarray(ends, np.int64).reshape(-1)
        keep = ends > starts
        if not keep.any():
            return
        first = (self.offset + starts[keep] * self.itemsize) // self.block
        last = (self.offset + ends[keep] * self.itemsize - 1) // self.block
        counts = last - first + 1
        if int(counts.sum()) > 4 * len(self.crcs):  # spans covering the file many times over
            self.whole()
            return
        if bool(np.all(counts == 1)):  # each span within one block: the common case
            self._check(first)
            return
        offsets = np.cumsum(counts) - counts
        self._check(np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(first - offsets, counts))


def _whole_file(array: np.ndarray, path: Path) -> Mapped | None:
    """The map of the whole of ``path`` that ``array`` views (premapped, or the one
    :func:`load_npy` made), if any: its size and header are then read without the path, which
    may be gone (an unlinked generation)."""
    premapped_file = (_PREMAPPED.get() or {}).get(path)
    if premapped_file is not None:
        return premapped_file
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap):
        return base.obj
    return None


T = TypeVar("T")


class Checked(Generic[T]):
    """An array attribute whose first read checks its whole file (when the object carries a
    guard for it in ``_guards``): what is read without a guarded method is still checked. The
    object keeps the array under ``_raw_<name>``, which the guarded methods read directly after
    checking the blocks they touch."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot = name, "_raw_" + name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Checked[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        guards = obj.__dict__.get("_guards")
        if guards:
            guard = guards.get(self.name)
            if guard is not None and not guard.complete:
                guard.whole()
        try:
            return obj.__dict__[self.slot]
        except KeyError:  # never set: what a plain attribute would say
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {self.name!r}") from None

    def __set__(self, obj: Any, value: T) -> None:
        guards = obj.__dict__.get("_guards")
        if guards:  # an array put in place of the one read from disk: its file's checks no longer apply
            guards.pop(self.name, None)
        obj.__dict__[self.slot] = value


class NoGuard:
    """The guard of an array built in memory (never read from disk): nothing to check."""

    complete = True

    def whole(self) -> None:
        return None

    def elements(self, positions: np.ndarray) -> None:
        return None

    def spans(self, starts: np.ndarray, ends: np.ndarray) -> None:
        return None


NO_GUARD = NoGuard()


class BlockTable:
    """A generation's block checksums (read and checked at open) and the guards made from them."""

    def __init__(self, generation: Path, manifest: dict[str, Any]) -> None:
        self.generation = generation
        self.files: dict[str, Any] = manifest.get("files", {})
        self.block = int(manifest.get("block_bytes", BLOCK))
        path = generation / BLOCKS_FILE
        try:
            self.crcs = np.frombuffer(path.read_bytes(), "<u4")
        except (OSError, ValueError) as exc:
            raise CorruptIndexError(f"index damaged: {BLOCKS_FILE} cannot be read ({exc}); rebuild with coderiv index") from exc
        self.guards: dict[str, FileGuard] = {}

    def guard(self, rel: str, array: np.ndarray) -> FileGuard:
        """The guard of file ``rel`` (relative to the generation), whose data is ``array``."""
        meta = self.files.get(rel)
        if meta is None or "first_block" not in meta:
            raise CorruptIndexError(f"index damaged: {rel} has no block checksums; rebuild with coderiv index")
        first = int(meta["first_block"])
        count = -(-int(meta["bytes"]) // self.block)
        guard = FileGuard(rel, self.generation / rel, array, self.crcs[first : first + count], self.block)
        if len(guard.crcs):
            # the block holding the .npy header, checked now: numpy parsed it at open, and a header
            # that still parses (a dtype '<u2' turned '<i2') would change every value read
            guard._check(np.zeros(1, np.int64))
        self.guards[rel] = guard
        return guard


def checked_insertion(
    guard: FileGuard | NoGuard, values: np.ndarray, lo: np.ndarray | int, hi: np.ndarray | int, targets: np.ndarray,
    found: np.ndarray, side: str = "left",
) -> None:
    """Make a binary search's answers trustworthy while checking only two elements each.

    ``found[i]`` is where a search put ``targets[i]`` in the sorted slice ``values[lo[i]:hi[i]]``
    (``lo`` and ``hi`` may be numbers: the same slice for every target, the whole array for 0
    and ``len(values)``).
    A search over damaged elements may go astray, but whatever it read, its answer is right
    exactly when the neighbours on each side satisfy the order (``left``: ``values[f-1] <
    target ≤ values[f]``; ``right``: ``≤`` then ``<``) in the true, sorted array. So the
    blocks of those two neighbours are checked, and the order tested on the checked values; a
    failure means the damage lies elsewhere on the search's path, which the whole file's check
    then names."""
    if guard.complete or not len(found):
        return
    found, lo, hi = np.asarray(found, np.int64), np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    before, after = found > lo, found < hi
    guard.elements(np.concatenate((found[before] - 1, found[after])))
    targets = np.asarray(targets)
    left_ok = values[found[before] - 1] < targets[before] if side == "left" else values[found[before] - 1] <= targets[before]
    right_ok = values[found[after]] >= targets[after] if side == "left" else values[found[after]] > targets[after]
    if not (bool(np.all(left_ok)) and bool(np.all(right_ok))):
        guard.whole()
        raise CorruptIndexError("index damaged: a sorted table is out of order; rebuild with coderiv index")


#: A file's bytes as :func:`map_file` gives them: a read-only map (``b""`` for an empty file).
Mapped = mmap.mmap | bytes
#: Files of a generation mapped before they are read (:func:`premapped`): path → mapping.
_PREMAPPED: ContextVar[dict[Path, Mapped] | None] = ContextVar("premapped", default=None)


def _header(stream: io.BufferedIOBase | io.BytesIO) -> tuple[tuple[int, ...], bool, np.dtype[Any], int]:
    """(shape, Fortran order, dtype, data offset) of the ``.npy`` header ``stream`` starts with,
    read by numpy's own reader (never pickled objects), a second time after a SystemError.

    numpy parses the header with ``ast.literal_eval``, and CPython before 3.11.8 and 3.12.2
    (gh-106905) kept the AST constructor's recursion depth in state every thread shares: when
    the collector runs Python code (a finaliser) in the middle of one construction and another
    builds an AST meanwhile (another thread's header, numba parsing a loop's source as it
    compiles), the first fails with ``SystemError: AST constructor recursion depth mismatch``.
    Nothing about the bytes, and rare: parsed again, it succeeds (tests/test_npy_header_race.py)."""
    start = stream.tell()
    try:
        return _numpy_header(stream)
    except SystemError:
        stream.seek(start)
        return _numpy_header(stream)


def _numpy_header(stream: io.BufferedIOBase | io.BytesIO) -> tuple[tuple[int, ...], bool, np.dtype[Any], int]:
    """:func:`_header`, parsed once."""
    version = npy_format.read_magic(stream)
    read_header = npy_format.read_array_header_1_0 if version == (1, 0) else npy_format.read_array_header_2_0
    shape, fortran, dtype = read_header(stream)
    if dtype.hasobject:
        raise ValueError("an object array")
    return shape, fortran, dtype, stream.tell()


def map_file(path: Path) -> Mapped:
    """The bytes of ``path`` as a read-only memory map (no page is read: the kernel reads each
    one when first touched), ``b""`` for an empty file. The map keeps the file readable after
    it is unlinked: what lets an opened index read a generation a writer has since replaced."""
    with open(path, "rb") as handle:
        if not os.fstat(handle.fileno()).st_size:
            return b""
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


@contextlib.contextmanager
def premapped(files: dict[Path, Mapped]) -> Iterator[None]:
    """Within this block, :func:`load_npy` and :meth:`BlockTable.guard` read the files named
    here from their maps, made earlier (:func:`map_file`), not from their paths."""
    token = _PREMAPPED.set({**(_PREMAPPED.get() or {}), **files})
    try:
        yield
    finally:
        _PREMAPPED.reset(token)


def npy_array(data: Mapped | bytearray, header: tuple[tuple[int, ...], bool, np.dtype[Any], int] | None = None) -> np.ndarray:
    """The array of a ``.npy`` file's bytes ``data``, a view of them (nothing copied, no page
    touched but the header's, and not that one when ``header`` was parsed from the file)."""
    shape, fortran, dtype, offset = header or _header(io.BytesIO(data[: min(len(data), 1 << 16)]))
    count = int(np.prod(shape, dtype=np.int64))
    flat = np.frombuffer(data, dtype, count, offset) if count else np.empty(0, dtype)
    return flat.reshape(shape, order="F" if fortran else "C")


def _load_mapped(path: Path) -> np.ndarray:
    """:func:`npy_array` of ``path``: its premapped bytes (:func:`premapped`), else a new map,
    the header read from the file (a read through the map would make its pages resident)."""
    mapped = (_PREMAPPED.get() or {}).get(path)
    if mapped is not None:
        return npy_array(mapped)
    with open(path, "rb") as handle:
        header = _header(handle)
        size = os.fstat(handle.fileno()).st_size
        data: Mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    return npy_array(data, header)


def _load_read(path: Path) -> np.ndarray:
    """:func:`npy_array` of ``path`` read into memory (a writable array)."""
    with open(path, "rb") as handle:
        header = _header(handle)
        data = bytearray(os.fstat(handle.fileno()).st_size)
        handle.seek(0)
        handle.readinto(data)
    return npy_array(data, header)


#: What a damaged ``.npy`` header or a file cut short makes :func:`load_npy`'s reading raise:
#: ValueError (numpy's answer to most damage, a header that does not parse included, and
#: ``frombuffer``'s to a shape larger than the file), SyntaxError and tokenize's TokenError (a
#: Python 2 header's filter), OverflowError (a shape beyond int64). Anything else (SystemError,
#: MemoryError, RecursionError, an OSError...) says nothing about the file's bytes: it propagates
#: as what it is, never as a false "index damaged — rebuild".
HEADER_DAMAGE: tuple[type[Exception], ...] = (ValueError, SyntaxError, tokenize.TokenError, OverflowError)


def load_npy(path: Path, mmap: bool = True) -> np.ndarray:
    """An index array: memory-mapped (:func:`npy_array` of :func:`map_file`, or of the map made
    when the generation was opened, see :func:`premapped`) or read into memory, never pickled;
    damage to its header (:data:`HEADER_DAMAGE`) is one line."""
    try:
        return _load_mapped(path) if mmap else _load_read(path)
    except HEADER_DAMAGE as exc:
        where = f"{path.parent.name}/{path.name}"
        raise CorruptIndexError(f"index damaged: {where} cannot be read ({type(exc).__name__}); rebuild with coderiv index") from None
