"""What one generation folder of an index holds, as this coderiv writes and reads it: the
format's name and version (and the older versions it reads), the documents' tables, and how a
store's manifest record says which value and key layout its files have."""

from __future__ import annotations

from typing import Any

import numpy as np

from coderiv.errors import CorruptIndexError
from coderiv.index.format.counts import COUNTS, PRESENCE
from coderiv.index.format.postings import PLAIN, SPLIT

FORMAT = "coderiv-index"


FORMAT_VERSION = 8


#: The formats this coderiv opens: format 6 added the block checksums every read is checked
#: against (:mod:`.integrity`); an older index is rebuilt by the next ``coderiv index``. Format
#: 7 dropped the per-file SHA-256s (the block checksums cover every file) and writes no values
#: for a presence store; format 8 splits the keys and offsets of a store whose keys fit 32 bits
#: (:data:`~coderiv.index.format.postings.SPLIT`). Formats 6 and 7 read as they are (a full verify
#: checks a format 6 index's SHA-256s), while an older coderiv refuses a newer index with its
#: "rebuild" line instead of misreading it (a format 7 reader would take split keys for keys).
READABLE_FORMATS = (6, 7, FORMAT_VERSION)


MODIFIED_FILE = "doc_modified.npy"


def doc_table_arrays(ids: list[str], shas: list[str]) -> tuple[bytes, np.ndarray]:
    blob = "\0".join(ids).encode("utf-8")
    digest = np.frombuffer(bytes.fromhex("".join(shas)), np.uint8).reshape(len(shas), 32) if shas else np.zeros((0, 32), np.uint8)
    return blob, digest


def store_is_presence(record: dict[str, Any]) -> bool:
    """Whether a store's manifest record declares a presence store (every value 1, no values
    files: :data:`~coderiv.index.format.counts.PRESENCE`); a record without ``values`` was written
    before presence stores and has the files."""
    values = record.get("values", COUNTS)
    if values not in (PRESENCE, COUNTS):
        raise CorruptIndexError(f"index store {record.get('dir')} has values {values!r}, which this coderiv cannot read; rebuild it")
    return bool(values == PRESENCE)


def store_is_split(record: dict[str, Any]) -> bool:
    """Whether a store's manifest record declares split keys and offsets
    (:data:`~coderiv.index.format.postings.SPLIT`); a record without ``layout`` was written before
    them and has plain arrays."""
    layout = record.get("layout", PLAIN)
    if layout not in (SPLIT, PLAIN):
        raise CorruptIndexError(f"index store {record.get('dir')} has layout {layout!r}, which this coderiv cannot read; rebuild it")
    return bool(layout == SPLIT)
