"""Reading a collection: a folder (recursively) or a tar/tar.gz archive, as (id, bytes) pairs.

The document id is the path relative to the folder (or the member name in the archive), with
``/`` separators. Hidden files and folders (a leading ``.``) are passed over unless asked for
(:class:`ReadOptions`), so a ``.git`` folder is not indexed as documents; a folder holding a
coderiv index never is. What is not a readable file (a FIFO, a device, a dangling symlink, a
symlink leaving the collection, a tar link leaving the archive) is given with a ``problem``
for the caller to report, never opened and never silently dropped.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import posixpath
import re
import stat
import tarfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Any, BinaryIO, Union

from coderiv.errors import InputError
from coderiv.system.gc_freeze import collector_frozen
from coderiv.text.extract import MAX_DOCUMENT_BYTES
from coderiv.text.formats.plain import SNIFF_BYTES, looks_binary
from coderiv.text.formats.registry import declared, sniff
from coderiv.text.tar_headers import TarHeader, usual_headers


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
    #: why the entry is not read (a FIFO, a symlink leaving the collection, ``binary``...):
    #: ``data`` is empty and the document is reported as skipped with this reason
    problem: str = ""
    #: something to tell about a document that is read (a tar name stored twice)
    note: str = ""
    #: set by the collection readers when the document's first :data:`SNIFF_BYTES` showed what
    #: :func:`coderiv.text.formats.extract` would decide: its name declares a text format, its
    #: magic bytes show no other and it is not binary, so ``declared(doc_id).read(data)`` is its
    #: extraction (the analysis workers skip the second look). Leave it False elsewhere.
    plain: bool = False

    @cached_property
    def sha256(self) -> str:
        """SHA-256 of the bytes, as hex (computed once: an update compares it, the index keeps it)."""
        return hashlib.sha256(self.data).hexdigest()


_ESCAPED_BYTE = re.compile(r"\\x([89a-f][0-9a-f])")


def escape_name(name: str) -> str:
    """A document id for a file name read with undecodable bytes (Python's ``surrogateescape``,
    U+DC80..U+DCFF): each such byte becomes ``\\xNN``, so the id is valid text that round-trips
    through :func:`unescape_name`."""
    if name.isascii():  # the usual name: nothing to escape
        return name
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


@dataclass(frozen=True)
class ReadOptions:
    """How a folder or archive is read. ``hidden``: also read hidden files and folders (a
    leading ``.``), passed over by default as ripgrep does. ``follow_symlinks``: follow a
    folder's symlinks wherever they lead; by default only those whose target stays inside the
    collection are followed, the others reported. Recorded in the index so that updates keep
    them. Links in a tar archive are followed only inside it, whatever the options."""

    hidden: bool = False
    follow_symlinks: bool = False

    def to_dict(self) -> dict[str, bool]:
        return {"hidden": self.hidden, "follow_symlinks": self.follow_symlinks}

    @classmethod
    def from_dict(cls, recorded: Mapping[str, Any] | None) -> ReadOptions:
        recorded = recorded if isinstance(recorded, Mapping) else {}
        return cls(bool(recorded.get("hidden", False)), bool(recorded.get("follow_symlinks", False)))

    @classmethod
    def from_flags(cls, hidden: bool | None, follow_symlinks: bool | None, base: ReadOptions) -> ReadOptions:
        """Options from optional flags, unset ones taken from ``base`` (the index's record)."""
        return cls(
            base.hidden if hidden is None else hidden,
            base.follow_symlinks if follow_symlinks is None else follow_symlinks,
        )


DEFAULT_READING = ReadOptions()


@dataclass(frozen=True)
class _Entry:
    """A folder entry to read (``problem`` empty) or to report: its id (relative path) and
    the path to open (a symlink's resolved target)."""

    name: str
    path: str
    problem: str = ""


def _special(mode: int) -> str:
    """What a file that is neither a regular file nor a folder is."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def _classify(path: str, real: str, real_root: str, options: ReadOptions) -> tuple[str, str, str]:
    """(kind, problem, real path) of a folder entry (``real``: its path below the folder's
    resolved path): kind ``file``, ``dir`` or ``problem``. Symlinks are resolved (never
    opened): dangling ones, loops, targets outside the root (unless ``follow_symlinks``) and
    anything but a file or folder are problems."""
    try:
        info = os.lstat(path)
    except OSError as exc:
        return "problem", f"cannot read: {exc.strerror}", ""
    link = stat.S_ISLNK(info.st_mode)
    if link:
        try:
            real = os.path.realpath(path, strict=True)
            info = os.stat(real)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "problem", "symlink loop: not followed", ""
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return "problem", f"dangling symlink: its target {escape_name(target)} does not exist", ""
        if not options.follow_symlinks and not _inside(real, real_root):
            return (
                "problem",
                f"symlink to {escape_name(real)}, outside the collection: not followed (--follow-symlinks follows it)",
                "",
            )
    if stat.S_ISDIR(info.st_mode):
        return "dir", "", real
    if stat.S_ISREG(info.st_mode):
        return "file", "", real if link else path
    what = _special(info.st_mode)
    return "problem", (f"symlink to {what}" if link else what) + ": not read", ""


def _folder_entries(root: Path, options: ReadOptions = DEFAULT_READING) -> list[_Entry]:
    """Every file below ``root`` to read or report, sorted by id: hidden ones passed over
    unless asked for, folders holding an index never entered, symlinks resolved (a folder
    reached again through a symlink to one of its own ancestors is a loop, reported)."""
    entries: list[_Entry] = []
    real_root = os.path.realpath(root)
    stack: list[tuple[str, str, str, frozenset[str]]] = [(str(root), real_root, "", frozenset({real_root}))]
    while stack:
        folder, real_folder, rel, ancestors = stack.pop()
        try:
            with os.scandir(folder) as listing:
                names = sorted(entry.name for entry in listing)
        except OSError as exc:
            if rel:
                entries.append(_Entry(rel.rstrip("/"), folder, f"cannot list the folder: {exc.strerror}"))
                continue
            raise InputError(f"cannot read {escape_name(folder)}: {exc.strerror}") from exc
        for name in names:
            if name.startswith(".") and not options.hidden:
                continue
            path = os.path.join(folder, name)
            kind, problem, real = _classify(path, os.path.join(real_folder, name), real_root, options)
            if kind == "dir":
                if real in ancestors:
                    entries.append(_Entry(rel + name, path, "symlink loop: points to a folder that holds it"))
                elif not holds_an_index(Path(path)):
                    stack.append((path, real, f"{rel}{name}/", ancestors | {real}))
            else:
                entries.append(_Entry(rel + name, real if kind == "file" else path, problem))
    entries.sort(key=lambda e: e.name)
    return entries


def folder_ids(root: Path, options: ReadOptions = DEFAULT_READING) -> Iterator[str]:
    """The ids :func:`iter_folder` gives, without reading the files."""
    return (_document_id(entry.name)[0] for entry in _folder_entries(root, options))


def _binary_start(name: str, head: bytes) -> bool:
    """Whether the first :data:`SNIFF_BYTES` of a document already show it is binary, exactly
    as :func:`coderiv.text.formats.extract` would decide on the whole: no format of ours
    (by name or magic bytes) and not text. The rest of such a file is never read."""
    return _first_look(name, head) == "binary"


def _first_look(name: str, head: bytes) -> str:
    """What the first :data:`SNIFF_BYTES` of a document show: ``binary`` (see
    :func:`_binary_start`), ``plain`` (its name declares a text format, its magic bytes show
    no other and it is not binary: :attr:`RawDocument.plain`), or ``""`` (extraction decides).
    A head without magic bytes of ours sniffs the same as the whole document, and
    :func:`looks_binary` reads only the head, so the answer holds for the whole."""
    if declared(name).binary or sniff(head) is not None:
        return ""
    return "binary" if looks_binary(head) else "plain"


def _read_regular(path: str, name: str | None) -> tuple[bytes, os.stat_result, str]:
    """A regular file's bytes, opened without blocking and checked after opening, so a FIFO
    or device that replaced it is refused rather than read. With the document's ``name``:
    nothing of a file over the size limit, and only the first block of one that block shows
    to be binary; with what that first block shows (:func:`_first_look`)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{_special(info.st_mode)}, not a regular file")
        if name is None:
            return handle.read(), info, ""
        if info.st_size > MAX_DOCUMENT_BYTES:
            return b"", info, ""
        head = handle.read(SNIFF_BYTES)
        look = _first_look(name, head)
        if look == "binary" or len(head) < SNIFF_BYTES:
            return head, info, look
        handle.seek(0)  # the whole file in one read: no copy of it joining the head and the rest
        return handle.read(), info, look


#: which document ids to read (the others are passed over unread: a shard's build reads its own)
Wanted = Callable[[str], bool]


def iter_folder(root: Path, options: ReadOptions = DEFAULT_READING, wanted: Wanted | None = None) -> Iterator[RawDocument]:
    """Every file below ``root`` in sorted id order: regular files (and symlinks to them, see
    :class:`ReadOptions`) with their bytes; what cannot be read (FIFOs, devices, sockets,
    dangling or looping symlinks, symlinks leaving the collection, binary files) with empty
    bytes and a ``problem``, reported by the caller."""
    for entry in _folder_entries(root, options):
        doc_id, escaped = _document_id(entry.name)
        if wanted is not None and not wanted(doc_id):
            continue
        if entry.problem:
            yield RawDocument(doc_id, b"", escaped=escaped, problem=entry.problem)
            continue
        try:
            data, info, look = _read_regular(entry.path, entry.name)
        except OSError as exc:
            yield RawDocument(doc_id, b"", escaped=escaped, problem=f"cannot read: {exc.strerror}")
            continue
        if info.st_size > MAX_DOCUMENT_BYTES:
            yield RawDocument(doc_id, b"", oversize=info.st_size, stored=info.st_size, escaped=escaped)
        elif look == "binary":
            yield RawDocument(doc_id, b"", stored=info.st_size, escaped=escaped, problem="binary")
        else:
            yield RawDocument(
                doc_id, data, modified=info.st_mtime, stored=info.st_size, escaped=escaped, plain=look == "plain"
            )


#: links followed in a chain before a tar symlink is called a loop
_MAX_LINKS = 40


def _link_target(name: str, member: tarfile.TarInfo) -> str | None:
    """The member name a tar symlink points to, or None when it leaves the archive."""
    target = member.linkname
    if target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return _member_name(joined)


def _resolve_member(
    index: int, members: list[tarfile.TarInfo], names: list[str], last: dict[str, int]
) -> tuple[tarfile.TarInfo | None, str]:
    """The regular member whose content a tar member gives, as ``tar -x`` extracts it: itself,
    a hard link's target (the latest earlier member of that name), or a symlink's target
    inside the archive (the final copy of that name); else (None, why it is not read)."""
    member, name = members[index], names[index]
    for _ in range(_MAX_LINKS):
        if member.isfile():
            return member, ""
        if member.islnk():
            target = _member_name(member.linkname)
            earlier = next((i for i in range(index - 1, -1, -1) if names[i] == target), None)
            if earlier is None:
                return None, f"hard link to {escape_name(target)}, which is not an earlier member of the archive"
            index, member, name = earlier, members[earlier], target
        elif member.issym():
            resolved = _link_target(name, member)
            if resolved is None:
                return None, f"symlink to {escape_name(member.linkname)}, outside the archive: not followed"
            if resolved not in last:
                return None, f"dangling symlink: {escape_name(resolved)} is not in the archive"
            index = last[resolved]
            member, name = members[index], resolved
            if member.isdir():
                return None, f"symlink to the folder {escape_name(resolved)}: not followed"
        else:
            return None, f"{_member_kind(member)} member: not read"
    return None, "symlink loop: not followed"


def _member_kind(member: tarfile.TarInfo) -> str:
    if member.isfifo():
        return "a FIFO"
    if member.ischr() or member.isblk():
        return "a device"
    return f"an unknown (type {member.type!r})"


class _MemberData:
    """A regular member of an uncompressed archive read straight from the archive file: what
    ``TarFile.extractfile`` gives (the same bytes, the same error for a truncated archive)
    without its per-member file objects. ``read(n)`` reads n bytes, ``read()`` the rest."""

    def __init__(self, raw: IO[bytes], member: tarfile.TarInfo) -> None:
        self.raw, self.member = raw, member
        self.position = member.offset_data
        self.left = member.size

    def read(self, size: int = -1) -> bytes:
        size = self.left if size < 0 else min(size, self.left)
        if not size:
            return b""
        self.raw.seek(self.position)
        data = self.raw.read(size)
        if len(data) != size:
            raise tarfile.ReadError("unexpected end of data")
        self.position += size
        self.left -= size
        return data

    def whole(self) -> bytes:
        """All the member's bytes in one read, whatever was read before (the head read again:
        no copy of the whole joining the head and the rest)."""
        start = self.position - (self.member.size - self.left)
        self.position, self.left = start, self.member.size
        return self.read()


def _has_fileno(raw: IO[bytes]) -> bool:
    try:
        raw.fileno()
    except (OSError, AttributeError, ValueError):  # io.UnsupportedOperation is an OSError
        return False
    return True


def iter_archive(
    path: Path | BinaryIO, options: ReadOptions = DEFAULT_READING, name: str = "", wanted: Wanted | None = None
) -> Iterator[RawDocument]:
    """Every non-hidden member of a tar archive that is a file to ``tar -x``, in archive
    order: regular members; hard links and symlinks resolving to one inside the archive (read
    as that content); a name stored twice once, as its last copy (``note`` says so). Links
    leaving the archive, dangling ones, loops, devices and FIFOs come with empty bytes and a
    ``problem``. The headers are read first (a second pass through a compressed archive).
    ``path`` may be an open seekable file (an archive read by URL, ``name``)."""
    try:
        with (open(path, "rb") if isinstance(path, (str, os.PathLike)) else contextlib.nullcontext(path)) as raw, \
                tarfile.open(fileobj=raw, tarinfo=TarHeader) as archive:
            # not compressed: a regular member's bytes are read straight from the file
            direct = archive.fileobj is raw
            usual = usual_headers(raw, archive.encoding, archive.errors) if direct and _has_fileno(raw) else None
            members = archive.getmembers() if usual is None else usual
            names = [_member_name(m.name) for m in members]
            last = {name: i for i, name in enumerate(names)}
            copies = Counter(names)
            with collector_frozen():
                read = 0

                def consumed() -> int:
                    nonlocal read
                    before, read = read, raw.tell()
                    return max(0, read - before)

                for i, member in enumerate(members):
                    name = names[i]
                    if member.isdir() or not name or last[name] != i:
                        continue
                    if not options.hidden and _hidden(tuple(name.split("/"))):
                        continue
                    doc_id, escaped = _document_id(name)
                    if wanted is not None and not wanted(doc_id):
                        continue
                    note = ""
                    if copies[name] > 1:
                        note = f"{copies[name]} members of the archive have this name: the last one is read, as tar -x keeps it"
                    content, problem = _resolve_member(i, members, names, last)
                    if content is None:
                        yield RawDocument(doc_id, b"", stored=consumed(), escaped=escaped, problem=problem, note=note)
                        continue
                    if content.size > MAX_DOCUMENT_BYTES:
                        yield RawDocument(doc_id, b"", oversize=content.size, stored=consumed(), escaped=escaped, note=note)
                        continue
                    handle: _MemberData | IO[bytes] | None
                    if direct and not content.issparse():
                        handle = _MemberData(raw, content)
                    else:
                        handle = archive.extractfile(content)
                    if handle is None:
                        yield RawDocument(doc_id, b"", stored=consumed(), escaped=escaped, problem="cannot be read", note=note)
                        continue
                    head = handle.read(SNIFF_BYTES)
                    look = _first_look(name, head)
                    if look == "binary":
                        yield RawDocument(doc_id, b"", stored=consumed(), escaped=escaped, problem="binary", note=note)
                        continue
                    data = handle.whole() if isinstance(handle, _MemberData) else head + handle.read()
                    yield RawDocument(
                        doc_id, data, modified=float(member.mtime), stored=consumed(), escaped=escaped, note=note,
                        plain=look == "plain",
                    )
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise InputError(f"cannot read archive {name or path}: {exc}") from exc


def stored_size(source: Source, options: ReadOptions = DEFAULT_READING) -> int | None:
    """Bytes the documents of ``source`` take where they are stored (the files of a folder, the
    archive file), the total of :attr:`RawDocument.stored`; None for documents given by a
    program."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    path = Path(source)
    if path.is_dir():
        total = 0
        for entry in _folder_entries(path, options):
            if entry.problem:
                continue
            try:
                total += os.stat(entry.path).st_size
            except OSError:
                pass  # reading it will report the problem
        return total
    return path.stat().st_size if path.is_file() else None


Source = Union[str, "os.PathLike[str]", Iterable[RawDocument]]


def iter_collection(source: Source, options: ReadOptions = DEFAULT_READING, wanted: Wanted | None = None) -> Iterator[RawDocument]:
    """Documents of a folder or a tar archive (or any iterable of :class:`RawDocument`, for
    embedding coderiv over documents kept elsewhere); a clear error for anything else."""
    if not isinstance(source, (str, os.PathLike)):
        return iter(source) if wanted is None else (raw for raw in source if wanted(raw.doc_id))
    path = Path(source)
    if path.is_dir():
        return iter_folder(path, options, wanted)
    if not path.exists():
        raise InputError(f"no such folder or archive: {path}")
    if is_archive(path):
        return iter_archive(path, options, wanted=wanted)
    raise InputError(f"{path} is neither a folder nor a tar archive")


def read_member(source: str | os.PathLike[str], doc_id: str) -> bytes:
    """The bytes of one document of a folder or archive (for verification and reports). An id
    that leaves the folder (``..``, absolute) or names something other than a regular file is
    an error, never read."""
    path = Path(source)
    if path.is_dir():
        name = doc_id
        if not (path / doc_id).exists() and (path / unescape_name(doc_id)).exists():
            name = unescape_name(doc_id)
        parts = name.split("/")
        if not name or name.startswith("/") or ".." in parts:
            raise InputError(f"{escape_name(doc_id)} is not a document of {path}")
        target = os.path.join(path, name)
        try:
            data, _, _ = _read_regular(target, None)
        except OSError as exc:
            raise InputError(f"cannot read {escape_name(target)}: {exc.strerror}") from exc
        return data
    for doc in iter_archive(path, ReadOptions(hidden=True)):
        if doc.doc_id == doc_id and not doc.problem:
            return doc.data
    raise InputError(f"{doc_id} is not in {path}")

