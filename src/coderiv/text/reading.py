"""Reading query documents: one from a path, standard input or bytes already in memory (a web
upload), or a whole batch from folders, tar archives and glob patterns, with the same checks as
indexing: too large, binary, and undecodable bytes (replaced and reported). Every reader takes
the index's :class:`~coderiv.text.extract.Markup` choice, so that a query is read as the
collection was."""

from __future__ import annotations

import glob
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from coderiv.errors import CoderivError, InputError, MissingExtraError
from coderiv.text.collection import RawDocument, folder_ids, is_archive, iter_archive, iter_folder
from coderiv.text.extract import DEFAULT_MARKUP, MAX_DOCUMENT_BYTES, BinaryContentError, ExtractionError, Markup, extract
from coderiv.text.formats import LocationMap


@dataclass(frozen=True)
class QueryDocument:
    """A query's label (its path, ``ARCHIVE:MEMBER``, or ``<stdin>``), its visible text, whether
    bytes that were not valid UTF-8 were replaced, the format it was read as, the map from text
    offsets to pages or paragraphs, and a note when its content was not what its extension
    declares. ``doc_id`` is the id the document has inside the folder, archive or pattern it
    was read from (as ``coderiv index`` of that folder or archive would name it), None for a
    file given alone."""

    label: str
    text: str
    lossy: bool
    format: str = "text"
    locations: LocationMap = LocationMap()
    note: str | None = None
    doc_id: str | None = None


@dataclass(frozen=True)
class SkippedQuery:
    """A document of a folder or archive that cannot be a query, and why (as indexing says)."""

    label: str
    reason: str


def read_query_bytes(
    data: bytes, label: str, max_bytes: int = MAX_DOCUMENT_BYTES, markup: Markup = DEFAULT_MARKUP
) -> QueryDocument:
    """The visible text of a document given as bytes (``label`` is its name: its extension and
    content choose the format, ``markup`` how markup is read, as for indexing), or a one-line :class:`InputError` for bytes
    that are too many, binary, or a damaged document. A document without words is the caller's
    check: it depends on the index's analysis."""
    if len(data) > max_bytes:
        raise InputError(f"{label}: {len(data)} bytes is larger than the {max_bytes}-byte limit")
    try:
        extracted = extract(data, label, markup)
    except BinaryContentError:
        raise InputError(f"{label} is a binary file, not a text document") from None
    except ExtractionError as exc:
        raise InputError(f"{label}: {exc.reason}") from None
    return QueryDocument(label, extracted.text, extracted.lossy, extracted.format, extracted.locations, extracted.note)


def read_query(path: str, markup: Markup = DEFAULT_MARKUP) -> QueryDocument:
    """The visible text of the document at ``path`` (``-``: standard input; markup read by
    ``markup``), or a one-line :class:`CoderivError` for a file that is unreadable, too large or
    binary."""
    if path == "-":
        return read_query_bytes(sys.stdin.buffer.read(), "<stdin>", markup=markup)
    if Path(path).is_dir():
        raise CoderivError(f"{path} is a folder: iter_queries reads every document in it")
    try:
        info = Path(path).stat()
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
            raise InputError(f"{path} is not a regular file (a pipe, socket or device); pass its content on stdin with '-'")
        size = info.st_size
        if size > MAX_DOCUMENT_BYTES:
            raise CoderivError(f"{path}: {size} bytes is larger than the {MAX_DOCUMENT_BYTES}-byte limit")
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CoderivError(f"cannot read query {path}: {exc.strerror}") from None
    return read_query_bytes(data, path, markup=markup)


def _member(raw: RawDocument, label: str, markup: Markup) -> QueryDocument | SkippedQuery:
    """A document of a folder or archive as a query, or why it cannot be one (as indexing
    skips it)."""
    if raw.problem:
        return SkippedQuery(label, raw.problem)
    if raw.oversize:
        return SkippedQuery(label, f"too large ({raw.oversize} bytes > {MAX_DOCUMENT_BYTES})")
    if not raw.data.strip():
        return SkippedQuery(label, "empty")
    try:
        extracted = extract(raw.data, raw.doc_id, markup)
    except ExtractionError as exc:
        return SkippedQuery(label, exc.reason)
    except MissingExtraError as exc:
        return SkippedQuery(label, str(exc))
    note = "; ".join(n for n in (raw.note, extracted.note) if n) or None
    return QueryDocument(label, extracted.text, extracted.lossy, extracted.format, extracted.locations, note, raw.doc_id)


def is_batch(paths: Sequence[str]) -> bool:
    """Whether query arguments name a batch: a folder, an archive or a glob pattern."""
    return any(path != "-" and (_is_pattern(path) or Path(path).is_dir() or is_archive(Path(path))) for path in paths)


def _is_pattern(path: str) -> bool:
    return any(c in path for c in "*?[") and not Path(path).exists()


def iter_queries(paths: Sequence[str], markup: Markup = DEFAULT_MARKUP) -> Iterator[QueryDocument | SkippedQuery]:
    """Every query document named by ``paths`` (markup read by ``markup``), in order: a file (``-``: standard input) as
    :func:`read_query` reads it; every document of a folder (recursively, hidden files passed
    over, sorted) or of a tar archive, as ``coderiv index`` would read them, labelled
    ``FOLDER/ID`` or ``ARCHIVE:ID``; and every path a glob pattern matches (``**`` crosses
    folders), sorted, its id being its path below the pattern's fixed folder. Documents of
    folders and archives that are empty, binary or too large are yielded as
    :class:`SkippedQuery`; a file given by name that is, or a pattern that matches nothing, is
    an error."""
    for path in paths:
        if _is_pattern(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                raise CoderivError(f"no file matches {path}")
            base = _pattern_base(path)
            for match in matches:
                if Path(match).is_file() and not is_archive(Path(match)):
                    document = read_query(match, markup)
                    yield replace(document, doc_id=Path(match).relative_to(base).as_posix())
                else:
                    yield from iter_queries([match], markup)
        elif path != "-" and Path(path).is_dir():
            for raw in iter_folder(Path(path)):
                yield _member(raw, str(Path(path) / raw.doc_id), markup)
        elif path != "-" and is_archive(Path(path)):
            for raw in iter_archive(Path(path)):
                yield _member(raw, f"{path}:{raw.doc_id}", markup)
        else:
            yield read_query(path, markup)


def _pattern_base(pattern: str) -> Path:
    """The folder a glob pattern starts from: its leading parts without wildcards
    (``subs/**/*.md`` → ``subs``), so that a match's id is its path below it."""
    parts = Path(pattern).parts
    fixed = [p for p in parts[: next(i for i, p in enumerate(parts) if any(c in p for c in "*?["))]]
    return Path(*fixed) if fixed else Path(".")


def count_queries(paths: Sequence[str]) -> int | None:
    """How many documents :func:`iter_queries` will give (None when an archive is among them:
    counting its members means reading it through)."""
    total = 0
    for path in paths:
        if _is_pattern(path):
            sub = count_queries(sorted(glob.glob(path, recursive=True)))
            if sub is None:
                return None
            total += sub
        elif path != "-" and Path(path).is_dir():
            total += sum(1 for _ in folder_ids(Path(path)))
        elif path != "-" and is_archive(Path(path)):
            return None
        else:
            total += 1
    return total
