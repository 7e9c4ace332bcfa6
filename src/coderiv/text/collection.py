"""Reading a collection: a folder (recursively) or a tar/tar.gz archive, as (id, bytes) pairs.

The document id is the path relative to the folder (or the member name in the archive), with
``/`` separators. Hidden files and folders (a leading ``.``) are passed over, so an index kept
inside the folder (``.coderiv/``) or a ``.git`` folder is never indexed as documents.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from coderiv.errors import InputError
from coderiv.text.extract import MAX_DOCUMENT_BYTES


@dataclass(frozen=True)
class RawDocument:
    """A document's id, its bytes and their SHA-256 (the change detector of incremental runs)."""

    doc_id: str
    data: bytes
    #: size on disk of a file too large to read (``data`` is then empty and the file is skipped)
    oversize: int = 0
    #: modification time (POSIX seconds) of the file or archive member, when known (lineage)
    modified: float | None = None
    #: bytes of the stored source this document accounts for (its file's size; in an archive,
    #: the compressed bytes read since the previous document): progress against
    #: :func:`stored_size`. None when unknown (documents given by a program).
    stored: int | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def is_archive(path: Path) -> bool:
    """True for a tar archive (compressed or not)."""
    return path.is_file() and tarfile.is_tarfile(path)


def _hidden(rel_parts: tuple[str, ...]) -> bool:
    return any(part.startswith(".") for part in rel_parts)


def _folder_entries(root: Path) -> list[tuple[str, Path]]:
    """(id, path) of every regular, non-hidden file below ``root``, sorted by id."""
    entries: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        base = Path(dirpath)
        for name in filenames:
            if name.startswith("."):
                continue
            path = base / name
            if path.is_file():
                entries.append((path.relative_to(root).as_posix(), path))
    entries.sort()
    return entries


def folder_ids(root: Path) -> Iterator[str]:
    """The ids :func:`iter_folder` gives, without reading the files."""
    return (doc_id for doc_id, _ in _folder_entries(root))


def iter_folder(root: Path) -> Iterator[RawDocument]:
    """Every regular, non-hidden file below ``root`` in sorted id order."""
    for doc_id, path in _folder_entries(root):
        try:
            stat = path.stat()
            if stat.st_size > MAX_DOCUMENT_BYTES:
                yield RawDocument(doc_id, b"", oversize=stat.st_size, stored=stat.st_size)
                continue
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror}") from exc
        yield RawDocument(doc_id, data, modified=stat.st_mtime, stored=stat.st_size)


def iter_archive(path: Path) -> Iterator[RawDocument]:
    """Every regular, non-hidden member of a tar archive, in archive order."""
    try:
        with open(path, "rb") as raw, tarfile.open(fileobj=raw) as archive:
            read = 0

            def consumed() -> int:
                nonlocal read
                before, read = read, raw.tell()
                return read - before

            for member in archive:
                name = member.name.lstrip("./") if member.name.startswith("./") else member.name
                if not member.isfile() or _hidden(tuple(name.split("/"))):
                    continue
                if member.size > MAX_DOCUMENT_BYTES:
                    yield RawDocument(name, b"", oversize=member.size, stored=consumed())
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                data = handle.read()
                yield RawDocument(name, data, modified=float(member.mtime), stored=consumed())
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise InputError(f"cannot read archive {path}: {exc}") from exc


def stored_size(source: Source) -> int | None:
    """Bytes the documents of ``source`` take where they are stored (the files of a folder, the
    archive file), the total of :attr:`RawDocument.stored`; None for documents given by a
    program."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    path = Path(source)
    if path.is_dir():
        total = 0
        for _, file in _folder_entries(path):
            try:
                total += file.stat().st_size
            except OSError:
                pass  # reading it will report the problem
        return total
    return path.stat().st_size if path.is_file() else None


Source = Union[str, "os.PathLike[str]", Iterable[RawDocument]]


def iter_collection(source: Source) -> Iterator[RawDocument]:
    """Documents of a folder or a tar archive (or any iterable of :class:`RawDocument`, for
    embedding coderiv over documents kept elsewhere); a clear error for anything else."""
    if not isinstance(source, (str, os.PathLike)):
        return iter(source)
    path = Path(source)
    if path.is_dir():
        return iter_folder(path)
    if not path.exists():
        raise InputError(f"no such folder or archive: {path}")
    if is_archive(path):
        return iter_archive(path)
    raise InputError(f"{path} is neither a folder nor a tar archive")


def read_member(source: str | os.PathLike[str], doc_id: str) -> bytes:
    """The bytes of one document of a folder or archive (for verification and reports)."""
    path = Path(source)
    if path.is_dir():
        target = path / doc_id
        try:
            return target.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {target}: {exc.strerror}") from exc
    for doc in iter_archive(path):
        if doc.doc_id == doc_id:
            return doc.data
    raise InputError(f"{doc_id} is not in {path}")
