"""What one generation folder of an index holds, as this coderiv writes and reads it: the
format's name and version, the documents' tables, and how a
store's manifest record says which value and key layout its files have."""

from __future__ import annotations

from typing import Any

import numpy as np

from coderiv.errors import CorruptIndexError
from coderiv.index.format.counts import COUNTS, PRESENCE
from coderiv.index.format.postings import PLAIN, SPLIT

FORMAT = "coderiv-index"
#: The one format this coderiv reads and writes. Format 6 added the block checksums every read is
#: checked against (:mod:`.integrity`); 7 dropped the per-file SHA-256s and writes no values for
#: a presence store; 8 splits the keys and offsets of a store whose keys fit 32 bits
#: (:data:`~coderiv.index.format.postings.SPLIT`) and records every store's ``values`` and
#: ``layout``. An index of another format is refused in one line naming ``coderiv index
#: --rebuild`` (its next ``coderiv index`` rebuilds it with the settings it records), and an
#: older coderiv refuses this one with its own "rebuild" line instead of misreading it.
FORMAT_VERSION = 8
#: The documents' modification times (POSIX seconds, NaN: unknown).
MODIFIED_FILE = "doc_modified.npy"


def doc_table_arrays(ids: list[str], shas: list[str]) -> tuple[bytes, np.ndarray]:
    """The ids table (UTF-8 ids joined by NUL) and the SHA-256 table (32 bytes a document)."""
    blob = "\0".join(ids).encode("utf-8")
    digest = np.frombuffer(bytes.fromhex("".join(shas)), np.uint8).reshape(len(shas), 32) if shas else np.zeros((0, 32), np.uint8)
    return blob, digest


def store_is_presence(record: dict[str, Any]) -> bool:
    """Whether a store's manifest record declares a presence store (every value 1, no values
    files: :data:`~coderiv.index.format.counts.PRESENCE`)."""
    values = record.get("values")
    if values not in (PRESENCE, COUNTS):
        raise CorruptIndexError(f"index store {record.get('dir')} has values {values!r}, which this coderiv cannot read; rebuild it")
    return bool(values == PRESENCE)


def store_is_split(record: dict[str, Any]) -> bool:
    """Whether a store's manifest record declares split keys and offsets
    (:data:`~coderiv.index.format.postings.SPLIT`)."""
    layout = record.get("layout")
    if layout not in (SPLIT, PLAIN):
        raise CorruptIndexError(f"index store {record.get('dir')} has layout {layout!r}, which this coderiv cannot read; rebuild it")
    return bool(layout == SPLIT)
