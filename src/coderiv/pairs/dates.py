"""When each document was written, where it is known: a dates file given by the user, the
creation dates written inside DOCX, ODT and PDF files, or the modification times recorded at
indexing (files of a folder, members of a tar archive). Each date says which it is.

A dates file is tab-separated, one ``doc_id<TAB>date`` per line, the date in ISO 8601 (``2024-03-01``
or ``2024-03-01T12:30:00``, with or without a UTC offset). Blank lines and lines starting with ``#``
are passed over, and so is a first line ``doc_id<TAB>date`` (a header). Dates without an offset
are taken as UTC so that every date compares with every other. Lineage uses a date only to say
which of two documents is the earlier; equal dates say nothing about order.

Modification times are weaker evidence: copying, downloading or checking files out resets them
to the moment of the copy, in an arbitrary order. So lineage uses them only when asked
(``--file-times``), to the whole second (files written within one second are not ordered), flagged
by source; a dates file overrides them document by document. An index made before coderiv
recorded them has none.
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coderiv.errors import CoderivError, InputError
from coderiv.index.index import Index
from coderiv.text.collection import ReadOptions, is_archive, iter_archive, read_member
from coderiv.text.formats.created import creation_date

#: Source labels: a ``--dates`` file, a date inside the document, a time recorded at indexing.
DATES_FILE = "dates file"
DOCUMENT_DATE = "creation date in the document"
FILE_TIME = "file modification time"
#: Names of the files whose creation date is looked for (their bytes are read again).
DATED_SUFFIXES = (".docx", ".odt", ".pdf")


@dataclass(frozen=True)
class DocDate:
    """A document's date and where it came from (``dates file``, ...)."""

    when: _dt.datetime
    source: str

    def to_dict(self) -> dict[str, str]:
        return {"date": self.iso, "source": self.source}

    @property
    def iso(self) -> str:
        """The date as written back: a bare date when it has no time of day."""
        if self.when.time() == _dt.time(0) and self.when.utcoffset() == _dt.timedelta(0):
            return self.when.date().isoformat()
        return self.when.isoformat()


def parse_date(text: str) -> _dt.datetime:
    """An ISO 8601 date or date-time, as an aware datetime (UTC when no offset is given)."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    when = _dt.datetime.fromisoformat(value)  # also accepts a bare date
    return when if when.tzinfo is not None else when.replace(tzinfo=_dt.timezone.utc)


def read_dates_file(path: str | os.PathLike[str]) -> dict[str, DocDate]:
    """doc id → date from a dates file (see the module docstring); a one-line error on bad input."""
    try:
        lines = Path(path).read_text("utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read dates file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"dates file {path} is not UTF-8 text") from None
    dates: dict[str, DocDate] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise InputError(f"{path}:{number}: expected 'doc_id<TAB>date', got {line[:80]!r}")
        doc_id, text = fields[0].strip(), fields[1].strip()
        if number == 1 and (doc_id.lower(), text.lower()) == ("doc_id", "date"):
            continue
        try:
            when = parse_date(text)
        except ValueError:
            raise InputError(f"{path}:{number}: {text!r} is not an ISO 8601 date (e.g. 2024-03-01)") from None
        if doc_id in dates and dates[doc_id].when != when:
            raise InputError(f"{path}:{number}: {doc_id} is given two different dates")
        dates[doc_id] = DocDate(when, DATES_FILE)
    if not dates:
        raise InputError(f"dates file {path} holds no dates")
    return dates


def recorded_dates(index: Index) -> dict[str, DocDate]:
    """doc id → modification time recorded at indexing, for the documents that have one."""
    if index.doc_modified is None:
        return {}
    times = np.asarray(index.doc_modified)
    return {
        doc_id: DocDate(_dt.datetime.fromtimestamp(float(np.floor(t)), _dt.timezone.utc), FILE_TIME)
        for doc_id, t in zip(index.doc_ids, times.tolist())
        if not np.isnan(t)
    }


def document_dates(index: Index, doc_ids: list[str]) -> dict[str, DocDate]:
    """doc id → the creation date written inside it, for the DOCX, ODT and PDF files among
    ``doc_ids`` (by name) that have one; their bytes are read again from the indexed source."""
    wanted = {d for d in doc_ids if d.lower().endswith(DATED_SUFFIXES)}
    if not wanted:
        return {}
    source = index.source
    if not source or not Path(source).exists():
        raise CoderivError(f"the indexed collection {source} is gone: document dates cannot be read from it")
    found: dict[str, _dt.datetime | None] = {}
    if is_archive(Path(source)):
        for raw in iter_archive(Path(source), ReadOptions(hidden=True)):  # any id the index holds
            if raw.doc_id in wanted:
                found[raw.doc_id] = creation_date(raw.data)
    else:
        for doc_id in sorted(wanted):
            found[doc_id] = creation_date(read_member(source, doc_id))
    return {doc_id: DocDate(when, DOCUMENT_DATE) for doc_id, when in found.items() if when is not None}
