"""The folder of a sharded index, as this coderiv writes and reads it: the live set named by
``SHARDS.json`` (its format and version), each set's shard folders and collection-wide tables,
their recorded CRC-32s, and which shard a document goes to.

Layout::

    SHARDS.json             the live set (written aside, fsynced, renamed: the atomic commit)
    set-000002/
      shard-000/ …          normal indexes (their own generations and checksums)
      global/terms_keys.npy, terms_df.npy         every term of the collection and its f_t
      global/shard-000.norms.npy, .max_unit.npy   W_d and the cosine bound, from global f_t and N
      global/shard-000.cosine_class_norms.npy, .cosine_class_limits.npy   per-document cosine bounds (same)
      global/shard-000.numbers.npy                each document's number in the whole collection

A document goes to shard ``blake2b(id) mod K``: stable across runs, machines and Python versions.
"""

from __future__ import annotations

import hashlib
import json
import os
import zlib
from pathlib import Path

from coderiv.errors import CorruptIndexError

SHARDS_MANIFEST = "SHARDS.json"


#: ``<index>/pairs-view/<set>/``: the generation folder of a sharded index's :class:`ShardView`
VIEW_DIR = "pairs-view"


FORMAT = "coderiv-shards"


#: 2 records a CRC-32 of every collection-wide table (``global/``), checked at open
FORMAT_VERSION = 2


def shard_of(doc_id: str, k: int) -> int:
    """The shard of a document among ``k``: a stable hash of its id (BLAKE2b, 64 bits) mod k."""
    digest = hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % k


def is_sharded(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a sharded index."""
    return (Path(path) / SHARDS_MANIFEST).is_file()


def shard_folder(set_dir: Path, shard: int) -> Path:
    return set_dir / f"shard-{shard:03d}"


def global_table(set_dir: Path, name: str) -> Path:
    return set_dir / "global" / name


def file_crc32(path: Path) -> int:
    """CRC-32 of a whole file, read in 16 MiB pieces."""
    crc = 0
    with open(path, "rb") as handle:
        while piece := handle.read(16 << 20):
            crc = zlib.crc32(piece, crc)
    return crc


def global_checksums(set_dir: Path) -> dict[str, int]:
    """CRC-32 of every collection-wide table of a set (``global/``), by file name."""
    return {path.name: file_crc32(path) for path in sorted((set_dir / "global").iterdir()) if path.is_file()}


def check_global_tables(set_dir: Path, recorded: object) -> None:
    """Refuse (one line) a set whose collection-wide tables differ from their recorded CRC-32s.

    Every query of a sharded index reads them (f_t, N, W_d, the cosine bounds, the global
    numbers), and each shard's own block checksums do not cover them: checked whole at open,
    about 0.2 s a GB (CRC-32 at ~5 GB/s; a million documents hold some tens of MB)."""
    if not isinstance(recorded, dict):
        raise CorruptIndexError(f"sharded index at {set_dir.parent} records no checksums of its tables; rebuild it")
    found = global_checksums(set_dir)
    for name in sorted(set(found) | set(recorded)):
        if found.get(name) != recorded.get(name):
            what = "is missing" if name not in found else "is not recorded" if name not in recorded else "fails its checksum"
            raise CorruptIndexError(f"index damaged: global/{name} of {set_dir.parent} {what}; rebuild with coderiv index")


# -- reading ---------------------------------------------------------------------------------------
def live_set(root: Path) -> str | None:
    """The set ``SHARDS.json`` names now (None if it cannot be read)."""
    try:
        live: str = json.loads((root / SHARDS_MANIFEST).read_text("utf-8"))["set"]
        return live
    except (OSError, ValueError, KeyError, TypeError):
        return None
