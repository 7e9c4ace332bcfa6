"""The visible texts an index has extracted, kept by content hash so that no document is
rendered twice (issue 43 item 5).

Rendering a reStructuredText page costs docutils 10-30 ms of CPU where decoding plain text
costs 0.005 ms, and a PDF or Word file's extraction is of the same order. The build renders
every document once; until now every later reading rendered it again: a report re-reads each
of its candidates (hundreds), adding a store re-reads the whole collection, a rebuild with other
analysis settings too. So the build keeps what it extracted in ``extracted.sqlite`` beside the
index's generations, keyed by the SHA-256 of the document's bytes, the extraction version
(``EXTRACTION_VERSION``) and the markup reading; a later reading of the same bytes takes the
text from there (a lookup and a zlib inflate: ~0.05 ms).

What is kept: only documents whose text is not their bytes decoded (reStructuredText and
Markdown rendered, HTML, PDF, DOCX, ODT, RTF, EPUB); plain text never. The cache holds the
documents of the live generation only: each new generation prunes the entries of documents it no
longer holds, so a deleted document's text does not outlive it. It is a cache: a missing,
unreadable or damaged file is a miss (the document is rendered as before) and is never an error;
SQLite's write-ahead log lets the build's workers and concurrent readers share it. A connection
is never used, nor closed, in a process forked after it was opened (SQLite's rule: a child's
close could check the log back while the parent writes): such a process opens its own.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import zlib
from collections.abc import Collection
from pathlib import Path

from coderiv.text.formats import Extracted, Markup, extract
from coderiv.text.formats.registry import declared

#: The cache's file, in the index's root folder (beside ``CURRENT`` and the generations).
CACHE_FILE = "extracted.sqlite"
#: zlib level of the kept texts: the fastest (a text of 13 KB deflates in ~0.1 ms).
LEVEL = 1
#: Connections inherited through a fork: kept referenced so that they are never closed in the child.
_INHERITED: list[sqlite3.Connection | None] = []
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS texts (key BLOB PRIMARY KEY, sha BLOB NOT NULL, format TEXT NOT NULL, "
    "lossy INTEGER NOT NULL, note TEXT, text BLOB NOT NULL)"
)


def cache_key(sha256: bytes, version: int, markup: str) -> bytes:
    """The key of a document's text: its bytes' SHA-256, the extraction version and the markup
    reading (a text rendered otherwise is another entry)."""
    return sha256 + f":{version}:{markup}".encode()


class ExtractedCache:
    """The index's kept texts (see the module docstring). Every method swallows SQLite's errors:
    a failing cache turns itself off for this process and answers misses."""

    def __init__(self, root: str | os.PathLike[str], *, create: bool = False) -> None:
        self.path = Path(root) / CACHE_FILE
        self._db_: sqlite3.Connection | None = None
        self._pid = os.getpid()
        #: the file is made on the first text kept (a collection of plain text never makes it)
        self._lazy = create and not self.path.exists()
        if not self._lazy:
            self._open(False)

    @property
    def _db(self) -> sqlite3.Connection | None:
        """This process's connection: one inherited through a fork is left alone, and the
        child opens its own."""
        if self._pid != os.getpid():
            _INHERITED.append(self._db_)  # kept, never closed here
            self._db_, self._pid = None, os.getpid()
            self._open(False)
        return self._db_

    @_db.setter
    def _db(self, db: sqlite3.Connection | None) -> None:
        self._db_ = db

    def _open(self, create: bool) -> None:
        if not create and not self.path.exists():
            return
        try:
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a crash loses at most the last entries, never the file
            db.execute(_SCHEMA)
            self._db = db
        except sqlite3.Error:
            self._db = None

    @property
    def usable(self) -> bool:
        return self._lazy or self._db is not None

    def get(self, key: bytes) -> Extracted | None:
        """The kept extraction of ``key`` (text, format, lossy, note; no page map), or None."""
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT format, lossy, note, text FROM texts WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            return Extracted(zlib.decompress(row[3]).decode("utf-8"), row[0], bool(row[1]), note=row[2])
        except (sqlite3.Error, zlib.error, UnicodeDecodeError):
            self._fail()
            return None

    def put(self, key: bytes, extracted: Extracted) -> None:
        """Keep ``extracted`` under ``key`` (an entry already there stays)."""
        if self._lazy:
            self._lazy = False
            self._open(True)
        if self._db is None:
            return
        try:
            self._db.execute(
                "INSERT OR IGNORE INTO texts VALUES (?, ?, ?, ?, ?, ?)",
                (key, key[:32], extracted.format, int(extracted.lossy), extracted.note,
                 zlib.compress(extracted.text.encode("utf-8"), LEVEL)),
            )
        except sqlite3.Error:
            self._fail()

    def prune(self, keep: Collection[bytes]) -> int:
        """Drop every entry whose document (by SHA-256) is not in ``keep``; how many went."""
        if self._db is None:
            return 0
        try:
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS keep (sha BLOB PRIMARY KEY)")
            self._db.execute("DELETE FROM keep")
            self._db.executemany("INSERT OR IGNORE INTO keep VALUES (?)", ((sha,) for sha in keep))
            gone = self._db.execute("DELETE FROM texts WHERE sha NOT IN (SELECT sha FROM keep)").rowcount
            self._db.execute("DELETE FROM keep")
            return int(gone)
        except sqlite3.Error:
            self._fail()
            return 0

    def readable(self) -> bool:
        """Its table can be read (one row looked at: a check of the whole file would cost every
        build time in proportion to the cache; damage found later is a miss, :meth:`_fail`)."""
        db = self._db
        if db is None:
            return False
        try:
            db.execute("SELECT key FROM texts LIMIT 1").fetchall()
            return True
        except sqlite3.Error:
            self._fail()
            return False

    def __len__(self) -> int:
        if self._db is None:
            return 0
        try:
            return int(self._db.execute("SELECT count(*) FROM texts").fetchone()[0])
        except sqlite3.Error:
            return 0

    def _fail(self) -> None:
        self._lazy = False
        db = self._db
        if db is not None:
            try:
                db.close()
            except sqlite3.Error:
                pass
        self._db = None

    def close(self) -> None:
        """Close the connection (the entries stay)."""
        self._fail()


def reset_if_damaged(root: str | os.PathLike[str]) -> bool:
    """Remove the cache at ``root`` when it exists but cannot be read as one (a damaged or
    foreign file), so that the next build keeps texts again; whether it was removed."""
    path = Path(root) / CACHE_FILE
    if not path.exists():
        return False
    cache = ExtractedCache(root)
    try:
        if cache.usable and cache.readable():
            return False
    finally:
        cache.close()
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)
    return True


def worth_keeping(name: str, markup: Markup) -> bool:
    """Whether a document's extraction is worth keeping: not when its text is its bytes decoded
    (plain text, or markup read as text)."""
    fmt = declared(name)
    return fmt.name != "text" and not (fmt.markup and markup is Markup.TEXT)


def content_sha256(data: bytes) -> bytes:
    """The SHA-256 digest of a document's bytes (the index's change detection uses the same)."""
    return hashlib.sha256(data).digest()


def kept_extract(
    data: bytes, name: str, markup: Markup, cache: ExtractedCache | None, version: int, sha256: bytes | None = None,
) -> Extracted:
    """:func:`coderiv.text.formats.extract` of a document, through ``cache``: the kept text when
    these bytes were extracted before by extraction ``version`` (``EXTRACTION_VERSION`` of
    :mod:`coderiv.text.extract`), else extracted and kept (see :func:`worth_keeping`).
    ``sha256``: the bytes' digest when the caller has it. Errors are extract's."""
    if cache is None or not cache.usable or not worth_keeping(name, markup):
        return extract(data, name, markup)
    key = cache_key(sha256 or content_sha256(data), version, markup.value)
    kept = cache.get(key)
    if kept is not None:
        return kept
    extracted = extract(data, name, markup)
    cache.put(key, extracted)
    return extracted
