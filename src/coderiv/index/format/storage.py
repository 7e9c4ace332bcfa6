"""Atomic, checksummed index generations on disk.

An index folder holds numbered generations (``gen-000007/``) and a ``CURRENT`` file naming the
live one. A writer builds a new generation in a temporary folder, fsyncs every file, renames the
folder into place and only then replaces ``CURRENT`` (write aside, fsync, rename): a crash at any
point leaves the previous generation intact and queryable. Writers take an exclusive lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from coderiv.errors import CorruptIndexError, IndexBusyError, IndexNotFoundError
from coderiv.index.format import integrity
from coderiv.index.format.integrity import BLOCKS_FILE, block_crcs, first_bad_block
from coderiv.system.inherited_locks import drop_lock_fd, hold_lock_fd

CURRENT = "CURRENT"
#: A copy of the live generation's manifest (without its checksum table), beside the
#: generations: what the index was built with (analysis, stores, reading options) survives a
#: damaged or deleted manifest, so a rebuild keeps them (:func:`newest_readable_manifest`).
MANIFEST_COPY = "manifest-copy.json"
MANIFEST = "manifest.json"
LOCK = "lock"
#: The only names CURRENT may hold: a generation folder of this index, never a path elsewhere.
GENERATION_NAME = re.compile(r"gen-[0-9]{6}")

def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fsync_path(path: Path) -> None:
    """fsync a file or a folder (a folder's entries are durable once it is synced)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def current_generation(root: Path) -> Path:
    """The live generation folder of the index at ``root``."""
    pointer = root / CURRENT
    if pointer.exists() and not pointer.is_file():
        raise CorruptIndexError(f"index at {root}: its {CURRENT} is not a file; rebuild it with 'coderiv index'")
    if not pointer.is_file():
        if root.is_dir() and any(root.iterdir()):
            raise CorruptIndexError(f"{root} is not a coderiv index (no {CURRENT} file)")
        raise IndexNotFoundError(
            f"no index at {root}: build one with 'coderiv index FOLDER' (or pass --index DIR)"
        )
    try:
        name = pointer.read_bytes().decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        raise CorruptIndexError(f"index at {root}: its {CURRENT} file is damaged; rebuild it with 'coderiv index'") from None
    generation = root / name
    if not GENERATION_NAME.fullmatch(name) or not (generation / MANIFEST).is_file():
        raise CorruptIndexError(f"index at {root} names a missing generation {name!r}; rebuild it with 'coderiv index'")
    return generation


def newest_readable_manifest(root: Path) -> dict[str, Any] | None:
    """The manifest of the newest generation folder that still parses, whatever CURRENT says,
    else the copy kept beside the generations: what a damaged index was built with (its
    analysis settings and stores), to rebuild it alike. None when neither can be read."""
    numbered = sorted((p for p in root.glob("gen-*") if GENERATION_NAME.fullmatch(p.name)), reverse=True)
    for generation in numbered:
        with contextlib.suppress(CorruptIndexError, OSError):
            return read_manifest(generation)
    with contextlib.suppress(OSError, ValueError):
        copy = json.loads((root / MANIFEST_COPY).read_text("utf-8"))
        if isinstance(copy, dict):
            return cast(dict[str, Any], copy)
    return None


def was_an_index(root: Path) -> bool:
    """Whether ``root`` holds what an index leaves (a pointer, a generation or the manifest
    copy): damage there is rebuilt with the recorded settings, never with defaults."""
    return any((root / name).exists() or (root / name).is_symlink() for name in (CURRENT, MANIFEST_COPY)) or any(
        GENERATION_NAME.fullmatch(p.name) for p in root.glob("gen-*")
    )


def read_manifest(generation: Path) -> dict[str, Any]:
    """The parsed manifest of a generation; damaged JSON is a corrupt index."""
    try:
        return cast(dict[str, Any], json.loads((generation / MANIFEST).read_text("utf-8")))
    except (OSError, ValueError) as exc:
        raise CorruptIndexError(f"index manifest {generation / MANIFEST} is damaged ({exc})") from exc


@contextlib.contextmanager
def write_lock(root: Path) -> Iterator[None]:
    """Exclusive writer lock on an index folder (a second writer gets a clear error,
    :class:`~coderiv.errors.IndexBusyError`)."""
    root.mkdir(parents=True, exist_ok=True)
    lock = root / LOCK
    if lock.exists() and not lock.is_file():
        raise CorruptIndexError(f"index at {root}: its {LOCK} is not a file; remove it and run 'coderiv index' again")
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexBusyError(f"another coderiv process is writing the index at {root}") from None
        hold_lock_fd(handle.fileno())
        try:
            remove_leftovers(root)
            yield
        finally:
            drop_lock_fd(handle.fileno())
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove(path: Path) -> None:
    """Remove ``path`` whatever it is (file, symlink, FIFO or folder); absent is fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def remove_leftovers(root: Path) -> None:
    """Remove what an interrupted writer left (``tmp-*`` folders, a half-written pointer) and a
    pointer that is not a file (a folder or FIFO named ``CURRENT``: damage no reader can use,
    which would stop the next generation from being published): only the lock holder calls
    this, so no live writer owns them."""
    for stale in root.glob("tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    _remove(root / (CURRENT + ".tmp"))
    pointer = root / CURRENT
    if (pointer.exists() or pointer.is_symlink()) and (pointer.is_symlink() or not pointer.is_file()):
        _remove(pointer)


@contextlib.contextmanager
def new_generation(root: Path) -> Iterator[Path]:
    """A temporary folder to write a generation into; committed atomically on success.

    The caller writes its files (all but the manifest) and ``manifest.json`` last; checksums of
    every file are added to the manifest here.
    """
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="tmp-", dir=root))
    try:
        yield staging
        commit(root, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


#: Files checksummed and synced at once by a commit: CRC-32 and fsync release the GIL, so a
#: report-ready index's large chunk files are read on both cores.
COMMIT_THREADS = 2


def _checksummed_and_synced(path: Path) -> np.ndarray:
    """:func:`~coderiv.index.format.integrity.block_crcs` of ``path``, then the file synced to disk."""
    crcs = block_crcs(path, integrity.BLOCK)
    fsync_path(path)
    return crcs


def commit(root: Path, staging: Path) -> Path:
    """Checksum, fsync and publish ``staging`` as the next generation; drop older ones.

    Every file gets a CRC-32 per block (the block table, :mod:`.integrity`) and no SHA-256 of
    its own: the block CRCs already find any damage, and a SHA-256 of every file cost a
    report-ready build 0.1 s of CPU per 200 MB (docs/index-format.md). The block table and
    the manifest keep their SHA-256."""
    manifest_path = staging / MANIFEST
    manifest = json.loads(manifest_path.read_text("utf-8"))
    files: dict[str, dict[str, Any]] = {}
    blocks: list[np.ndarray] = []
    first_block = 0
    from concurrent.futures import ThreadPoolExecutor  # a writer's only (opening an index never commits)

    paths = [path for path in sorted(staging.rglob("*")) if path.is_file() and path.name not in (MANIFEST, BLOCKS_FILE)]
    with ThreadPoolExecutor(COMMIT_THREADS, thread_name_prefix="coderiv-commit") as pool:
        for path, crcs in zip(paths, pool.map(_checksummed_and_synced, paths)):
            files[path.relative_to(staging).as_posix()] = {"bytes": path.stat().st_size, "first_block": first_block}
            blocks.append(crcs)
            first_block += len(crcs)
    table = staging / BLOCKS_FILE  # every block's CRC-32, checked as a query first reads it (.integrity)
    table.write_bytes((np.concatenate(blocks) if blocks else np.empty(0, np.uint32)).astype("<u4").tobytes())
    fsync_path(table)
    files[BLOCKS_FILE] = {"bytes": table.stat().st_size, "sha256": file_sha256(table)}
    manifest["files"] = files
    manifest["block_bytes"] = integrity.BLOCK
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True), "utf-8")
    fsync_path(manifest_path)
    for folder in sorted({p.parent for p in staging.rglob("*")} | {staging}):
        fsync_path(folder)

    previous = [p for p in root.glob("gen-*") if p.is_dir()]
    number = max((int(p.name[4:]) for p in previous if p.name[4:].isdigit()), default=0) + 1
    generation = root / f"gen-{number:06d}"
    os.rename(staging, generation)
    fsync_path(root)
    pointer_tmp = root / (CURRENT + ".tmp")
    try:
        pointer_tmp.write_text(generation.name + "\n", "utf-8")
        fsync_path(pointer_tmp)
        os.replace(pointer_tmp, root / CURRENT)
    except BaseException:  # not published: leave no generation folder nobody points to
        shutil.rmtree(generation, ignore_errors=True)
        _remove(pointer_tmp)
        raise
    fsync_path(root)
    _write_manifest_copy(root, manifest)
    for old in previous:  # open readers keep their memory maps: unlinked files live on
        shutil.rmtree(old, ignore_errors=True)
    for stale in root.glob("tmp-*"):
        if stale != staging:
            shutil.rmtree(stale, ignore_errors=True)
    return generation


def _write_manifest_copy(root: Path, manifest: dict[str, Any]) -> None:
    """Write :data:`MANIFEST_COPY` atomically (a failure leaves the previous copy)."""
    record = {key: value for key, value in manifest.items() if key != "files"}
    staging = root / (MANIFEST_COPY + ".tmp")
    staging.write_text(json.dumps(record, indent=1, sort_keys=True), "utf-8")
    fsync_path(staging)
    os.replace(staging, root / MANIFEST_COPY)
    fsync_path(root)


def verify_files(generation: Path, manifest: dict[str, Any], full: bool, checksummed: Sequence[str] = ()) -> list[str]:
    """Problems with a generation's files: missing, wrong size, or wrong checksum (every file
    when ``full``, else only those named in ``checksummed``). A file with a SHA-256 in the
    manifest (the block table; every file of a generation written before the block CRCs became
    the only per-file checksum) is checked by it; any other by recomputing its blocks' CRC-32s
    against the block table (once the table has passed its own SHA-256), naming the first
    block that differs."""
    files: dict[str, Any] = manifest.get("files", {})
    block = int(manifest.get("block_bytes", integrity.BLOCK))
    table: list[np.ndarray | str] = []  # the block table's CRCs or its problem, read once

    def block_table() -> np.ndarray | str:
        if not table:
            meta = files.get(BLOCKS_FILE)
            problem = _size_or_sha256_problem(generation, BLOCKS_FILE, meta, True) if meta else f"missing file {BLOCKS_FILE}"
            table.append(problem or np.frombuffer((generation / BLOCKS_FILE).read_bytes(), "<u4"))
        return table[0]

    problems: list[str] = []
    for rel, meta in files.items():
        check = full or rel in checksummed
        problem = _size_or_sha256_problem(generation, rel, meta, check)
        if problem is None and check and "sha256" not in meta:
            problem = _block_problem(generation, rel, meta, block_table(), block)
        if problem is not None and problem not in problems:
            problems.append(problem)
    return problems


def _size_or_sha256_problem(generation: Path, rel: str, meta: dict[str, Any], check: bool) -> str | None:
    """A file missing, of another size than recorded, or (when ``check``) failing the SHA-256
    the manifest records for it."""
    path = generation / rel
    if not path.is_file():
        return f"missing file {rel}"
    if path.stat().st_size != meta["bytes"]:
        return f"{rel}: {path.stat().st_size} bytes, manifest says {meta['bytes']}"
    if check and "sha256" in meta and file_sha256(path) != meta["sha256"]:
        return f"{rel}: checksum mismatch"
    return None


def _block_problem(generation: Path, rel: str, meta: dict[str, Any], table: np.ndarray | str, block: int) -> str | None:
    """A file failing the CRC-32s the block table records for its blocks (the table's own
    problem when it cannot be trusted)."""
    if isinstance(table, str):
        return table
    if "first_block" not in meta:
        return f"{rel}: no checksum recorded"
    first, count = int(meta["first_block"]), -(-int(meta["bytes"]) // block)
    bad = first_bad_block(generation / rel, table[first : first + count], block)
    return None if bad is None else f"{rel}: checksum mismatch in block {bad}"
