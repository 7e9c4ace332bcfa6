"""Collections named by an fsspec URL (``s3://bucket/prefix``, ``gs://…``, ``memory://…``,
``file:///abs/path``, chained ones such as ``dir::file:///abs``): a folder (every file below
the prefix) or a tar archive, read by whichever process is given the URL (the parent, or each
Dask worker of a sharded build), with the same ids, order, checks and change detection as a
local folder or archive.

``file://`` URLs (fsspec's local file system) are read exactly as the path they name, with the
folder rules of :mod:`coderiv.text.collection` (symlinks, FIFOs, devices). Elsewhere:

- ids are the paths below the URL, ``/``-separated, sorted;
- hidden files and folders (a leading ``.``) are passed over unless asked for, and a folder
  holding a coderiv index is never entered, as in a local folder;
- an entry the file system reports as a symlink is read through only with ``follow_symlinks``
  (object stores have none), else reported;
- a file over the size limit is not read, and only the first block of one it shows binary;
- a tar archive is read through a seekable remote file (:func:`iter_archive`).

Everything here goes through the optional ``fsspec`` (``coderiv[remote]``); the package of a
protocol (``s3fs`` for ``s3://``, ``gcsfs`` for ``gs://``) is installed by the user.
"""

from __future__ import annotations

import datetime as _dt
import os
import posixpath
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from coderiv.errors import InputError
from coderiv.extras import require
from coderiv.text.collection import (
    DEFAULT_READING,
    RawDocument,
    ReadOptions,
    Source,
    Wanted,
    _binary_start,
    _member_name,
    is_archive,
    iter_archive,
    iter_collection,
    read_member,
    stored_size,
)
from coderiv.text.extract import MAX_DOCUMENT_BYTES
from coderiv.text.formats.plain import SNIFF_BYTES

#: ``scheme://`` (two letters at least, so ``C:\\`` stays a path) or an fsspec chain ``a::b``
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://|^[A-Za-z][A-Za-z0-9+.\-]*::")
_INDEX_MARKERS = ("CURRENT", "lock")


def is_url(source: object) -> bool:
    """True for a string naming an fsspec URL rather than a local path."""
    return isinstance(source, str) and _URL.match(source) is not None


def _modified(info: dict[str, Any]) -> float | None:
    """An entry's modification time (POSIX seconds) from what its file system reports."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if isinstance(value, _dt.datetime):
            return value.timestamp()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


@dataclass(frozen=True)
class _Entry:
    name: str  # id: the path below the URL
    path: str  # the file system's path
    size: int
    modified: float | None
    problem: str = ""


class RemoteSource:
    """The folder or archive at an fsspec URL (the file system is opened on first use)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _fsspec(self) -> Any:
        return require("fsspec", "remote", f"reading {self.url.split(':', 1)[0]}:// URLs")

    @cached_property
    def _fs(self) -> tuple[Any, str]:
        fsspec = self._fsspec()
        try:
            fs, path = fsspec.core.url_to_fs(self.url)
        except ImportError as exc:  # the protocol's own package (s3fs, gcsfs...) is missing
            raise InputError(f"cannot read {self.url}: {exc}") from None
        except (ValueError, TypeError, OSError) as exc:
            raise InputError(f"cannot read {self.url}: {exc}") from None
        return fs, str(path).rstrip("/") or str(path)

    @property
    def fs(self) -> Any:
        return self._fs[0]

    @property
    def root(self) -> str:
        return self._fs[1]

    @cached_property
    def local_path(self) -> Path | None:
        """The path a ``file://`` URL names (read by the local readers), else None."""
        local = require("fsspec.implementations.local", "remote", "fsspec URLs")
        if isinstance(self.fs, local.LocalFileSystem):
            return Path(self.root)
        return None

    def _call(self, what: str, function: Any, *args: Any, **kwargs: Any) -> Any:
        """A file system call whose failure is a one-line error naming the URL."""
        try:
            return function(*args, **kwargs)
        except FileNotFoundError:
            raise InputError(f"no such folder or archive: {self.url}") from None
        except (OSError, ValueError, RuntimeError) as exc:
            raise InputError(f"cannot {what} {self.url}: {exc}") from None

    @cached_property
    def kind(self) -> str:
        """``folder``, ``archive``, or an error for anything else (missing, not a tar)."""
        if not self.root.strip("/") or self._call("read", self.fs.isdir, self.root):
            return "folder"
        if not self._call("read", self.fs.isfile, self.root):
            raise InputError(f"no such folder or archive: {self.url}")
        with self._call("open", self.fs.open, self.root, "rb") as handle:
            if self._call("read", tarfile.is_tarfile, handle):
                return "archive"
        raise InputError(f"{self.url} is neither a folder nor a tar archive")

    def exists(self) -> bool:
        try:
            return bool(self.fs.exists(self.root))
        except (OSError, ValueError, RuntimeError):
            return False

    def _relative(self, path: str) -> str:
        if not self.root.strip("/"):  # the file system's root (a tar:// or zip:// chain: ./ as in tar)
            return _member_name(path.lstrip("/"))
        prefix = self.root.rstrip("/") + "/"
        return path[len(prefix):] if path.startswith(prefix) else posixpath.relpath(path, self.root)

    def entries(self, options: ReadOptions = DEFAULT_READING) -> list[_Entry]:
        """Every file below the URL to read or report, sorted by id, as a local folder lists
        them (hidden ones passed over unless asked for, folders holding an index skipped)."""
        found: dict[str, dict[str, Any]] = self._call("list", self.fs.find, self.root, withdirs=False, detail=True)
        files = {self._relative(path): (path, info) for path, info in found.items()}
        files = {name: v for name, v in files.items() if name and name != "."}
        indexes = _index_folders(files)
        entries: list[_Entry] = []
        for name in sorted(files):
            parts = name.split("/")
            if not options.hidden and any(part.startswith(".") for part in parts):
                continue
            if any("/".join(parts[:i]) in indexes for i in range(1, len(parts))):
                continue
            path, info = files[name]
            size, modified = int(info.get("size") or 0), _modified(info)
            problem = ""
            if info.get("islink") and not options.follow_symlinks:
                problem = "symlink: not followed in a collection read by URL (--follow-symlinks follows it)"
            entries.append(_Entry(name, path, size, modified, problem))
        return entries

    def iter_folder(self, options: ReadOptions = DEFAULT_READING, wanted: Wanted | None = None) -> Iterator[RawDocument]:
        """Every file below the URL in sorted id order (see :func:`iter_folder
        <coderiv.text.collection.iter_folder>` for what is read and what is reported)."""
        for entry in self.entries(options):
            if wanted is not None and not wanted(entry.name):
                continue
            if entry.problem:
                yield RawDocument(entry.name, b"", problem=entry.problem)
            elif entry.size > MAX_DOCUMENT_BYTES:
                yield RawDocument(entry.name, b"", oversize=entry.size, stored=entry.size)
            else:
                try:
                    with self.fs.open(entry.path, "rb") as handle:
                        head = handle.read(SNIFF_BYTES)
                        binary = _binary_start(entry.name, head)
                        data = head if binary else head + handle.read()
                except (OSError, ValueError, RuntimeError) as exc:
                    yield RawDocument(entry.name, b"", problem=f"cannot read: {exc}")
                    continue
                if binary:
                    yield RawDocument(entry.name, b"", stored=entry.size, problem="binary")
                else:
                    yield RawDocument(entry.name, data, modified=entry.modified, stored=entry.size)

    def iter_archive(self, options: ReadOptions = DEFAULT_READING, wanted: Wanted | None = None) -> Iterator[RawDocument]:
        """The members of the tar archive at the URL, as :func:`iter_archive` reads a local one."""
        with self._call("open", self.fs.open, self.root, "rb") as handle:
            yield from iter_archive(handle, options, name=self.url, wanted=wanted)

    def documents(self, options: ReadOptions = DEFAULT_READING, wanted: Wanted | None = None) -> Iterator[RawDocument]:
        """The documents at the URL (only the ``wanted`` ids read, when given)."""
        if self.local_path is not None:
            return iter_collection(self.local_path, options, wanted)
        return self.iter_folder(options, wanted) if self.kind == "folder" else self.iter_archive(options, wanted)

    def size(self, options: ReadOptions = DEFAULT_READING) -> int:
        """Bytes of the documents where they are stored (for progress)."""
        if self.kind == "folder":
            return sum(entry.size for entry in self.entries(options) if not entry.problem)
        return int(self._call("read", self.fs.size, self.root))

    def member(self, doc_id: str) -> bytes:
        """The bytes of one document (an id leaving the folder is an error, never read)."""
        if self.kind == "archive":
            for doc in self.iter_archive(ReadOptions(hidden=True)):
                if doc.doc_id == doc_id and not doc.problem:
                    return doc.data
            raise InputError(f"{doc_id} is not in {self.url}")
        parts = doc_id.split("/")
        if not doc_id or doc_id.startswith("/") or ".." in parts:
            raise InputError(f"{doc_id} is not a document of {self.url}")
        path = f"{self.root.rstrip('/')}/{doc_id}"
        if not self._call("read", self.fs.isfile, path):  # stored under another spelling (./name in a tar)
            path = self._paths.get(doc_id, path)
        try:
            data: bytes = self.fs.cat_file(path)
        except FileNotFoundError:
            raise InputError(f"{doc_id} is no longer in {self.url}; update the index") from None
        except (OSError, ValueError, RuntimeError) as exc:
            raise InputError(f"cannot read {doc_id} of {self.url}: {exc}") from None
        return data

    @cached_property
    def _paths(self) -> dict[str, str]:
        """Each id's path on the file system (hidden ones included)."""
        return {entry.name: entry.path for entry in self.entries(ReadOptions(hidden=True, follow_symlinks=True))}


def _index_folders(files: dict[str, Any]) -> set[str]:
    """Folders (ids' prefixes) holding a coderiv index: a ``CURRENT`` or ``lock`` file beside a
    ``gen-*`` or ``tmp-*`` folder (as :func:`~coderiv.text.collection.holds_an_index`)."""
    marked: set[str] = set()
    generations: set[str] = set()
    for name in files:
        parts = name.split("/")
        if parts[-1] in _INDEX_MARKERS and len(parts) > 1:
            marked.add("/".join(parts[:-1]))
        for i in range(1, len(parts) - 1):
            if parts[i].startswith(("gen-", "tmp-")):
                generations.add("/".join(parts[:i]))
    return marked & generations


# -- a collection given as a local path or a URL --------------------------------------------------
@lru_cache(maxsize=16)
def _remote(url: str) -> RemoteSource:
    """One :class:`RemoteSource` per URL in a process (its file system and listing are reused
    by the reads of a report or a server)."""
    return RemoteSource(url)


def iter_source(source: Source, options: ReadOptions = DEFAULT_READING, wanted: Wanted | None = None) -> Iterator[RawDocument]:
    """:func:`~coderiv.text.collection.iter_collection`, also for an fsspec URL; with
    ``wanted``, only the documents whose id it accepts are read."""
    if is_url(source):
        assert isinstance(source, str)
        return RemoteSource(source).documents(options, wanted)
    return iter_collection(source, options, wanted)


def source_size(source: Source, options: ReadOptions = DEFAULT_READING) -> int | None:
    """:func:`~coderiv.text.collection.stored_size`, also for an fsspec URL."""
    if is_url(source):
        assert isinstance(source, str)
        remote = RemoteSource(source)
        return stored_size(remote.local_path, options) if remote.local_path is not None else remote.size(options)
    return stored_size(source, options)


def source_name(source: Source) -> str | None:
    """How an index records its source: a URL as given, a path made absolute, None for
    documents given by a program."""
    if is_url(source):
        return str(source)
    if isinstance(source, (str, os.PathLike)):
        return str(Path(source).resolve())
    return None


def source_exists(source: str | os.PathLike[str]) -> bool:
    """Whether the folder or archive (path or URL) is still there."""
    return _remote(str(source)).exists() if is_url(source) else Path(source).exists()


def source_is_archive(source: str | os.PathLike[str]) -> bool:
    """Whether the source (path or URL) is a tar archive."""
    if is_url(source):
        remote = _remote(str(source))
        return is_archive(remote.local_path) if remote.local_path is not None else remote.kind == "archive"
    return is_archive(Path(source))


def iter_source_archive(source: str | os.PathLike[str], options: ReadOptions = DEFAULT_READING) -> Iterator[RawDocument]:
    """The members of a tar archive given by path or URL."""
    if is_url(source):
        remote = _remote(str(source))
        return iter_archive(remote.local_path, options) if remote.local_path is not None else remote.iter_archive(options)
    return iter_archive(Path(source), options)


def read_source_member(source: str | os.PathLike[str], doc_id: str) -> bytes:
    """:func:`~coderiv.text.collection.read_member`, also for an fsspec URL."""
    if is_url(source):
        remote = _remote(str(source))
        return read_member(remote.local_path, doc_id) if remote.local_path is not None else remote.member(doc_id)
    return read_member(source, doc_id)
