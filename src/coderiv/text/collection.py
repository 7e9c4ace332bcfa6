"""Reading a collection: a folder (recursively) or a tar/tar.gz archive, as (id, bytes) pairs.

The document id is the path relative to the folder (or the member name in the archive), with
``/`` separators. Hidden files and folders (a leading ``.``) are passed over, so an index kept
inside the folder (``.coderiv/``) or a ``.git`` folder is never indexed as documents.
"""

from __future__ import annotations

import hashlib
import os
import re
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
    #: the file name was not valid UTF-8: ``doc_id`` spells its bad bytes as ``\xNN``
    escaped: bool = False

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


_ESCAPED_BYTE = re.compile(r"\\x([89a-f][0-9a-f])")


def escape_name(name: str) -> str:
    """A document id for a file name read with undecodable bytes (Python's ``surrogateescape``,
    U+DC80..U+DCFF): each such byte becomes ``\\xNN``, so the id is valid text that round-trips
    through :func:`unescape_name`."""
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in name)


def unescape_name(doc_id: str) -> str:
    """The file name (with ``surrogateescape`` characters) an escaped id stands for."""
    return _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), doc_id)


def _document_id(name: str) -> tuple[str, bool]:
    escaped = escape_name(name)
    return escaped, escaped != name


def holds_an_index(folder: Path) -> bool:
    """True for a coderiv index folder (a ``CURRENT`` or ``lock`` file beside ``gen-*`` or
    ``tmp-*`` folders): an index kept inside its own collection is never indexed."""
    if not ((folder / "CURRENT").is_file() or (folder / "lock").is_file()):
        return False
    try:
        return any(child.is_dir() and child.name.startswith(("gen-", "tmp-")) for child in folder.iterdir())
    except OSError:
        return False


def _member_name(name: str) -> str:
    """A tar member's name without its leading ``./`` prefixes (exactly those: ``./.git/x``
    stays hidden as ``.git/x``)."""
    while name.startswith("./"):
        name = name[2:]
    return name


def is_archive(path: Path) -> bool:
    """True for a tar archive (compressed or not)."""
    return path.is_file() and tarfile.is_tarfile(path)


def _hidden(rel_parts: tuple[str, ...]) -> bool:
    return any(part.startswith(".") for part in rel_parts)


def _folder_entries(root: Path) -> list[tuple[str, Path]]:
    """(id, path) of every regular, non-hidden file below ``root``, sorted by id."""
    entries: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not holds_an_index(base / d))
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
    return (_document_id(name)[0] for name, _ in _folder_entries(root))


def iter_folder(root: Path) -> Iterator[RawDocument]:
    """Every regular, non-hidden file below ``root`` in sorted id order."""
    for name, path in _folder_entries(root):
        doc_id, escaped = _document_id(name)
        try:
            stat = path.stat()
            if stat.st_size > MAX_DOCUMENT_BYTES:
                yield RawDocument(doc_id, b"", oversize=stat.st_size, stored=stat.st_size, escaped=escaped)
                continue
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {escape_name(str(path))}: {exc.strerror}") from exc
        yield RawDocument(doc_id, data, modified=stat.st_mtime, stored=stat.st_size, escaped=escaped)


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
                name = _member_name(member.name)
                if not member.isfile() or _hidden(tuple(name.split("/"))):
                    continue
                doc_id, escaped = _document_id(name)
                if member.size > MAX_DOCUMENT_BYTES:
                    yield RawDocument(doc_id, b"", oversize=member.size, stored=consumed(), escaped=escaped)
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                data = handle.read()
                yield RawDocument(doc_id, data, modified=float(member.mtime), stored=consumed(), escaped=escaped)
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
        if not target.exists() and (path / unescape_name(doc_id)).exists():
            target = path / unescape_name(doc_id)
        try:
            return target.read_bytes()
        except OSError as exc:
            raise InputError(f"cannot read {escape_name(str(target))}: {exc.strerror}") from exc
    for doc in iter_archive(path):
        if doc.doc_id == doc_id:
            return doc.data
    raise InputError(f"{doc_id} is not in {path}")
