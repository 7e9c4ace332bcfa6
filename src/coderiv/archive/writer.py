"""The one writer that adds checked submissions to the collection.

How archived submissions join the index: the index's source is a folder, and the index is
always the image of its folder, so an archived submission becomes a file of that folder,
``archive/<submission id>.txt`` (its extracted text, UTF-8), and the index is brought up to
date from the folder (:meth:`Index.update_from`: only new or changed files are analysed, the
rest is copied). Then the pair tables already computed are updated incrementally
(:func:`coderiv.pairs.run.run_pairs` from the stored table), so older documents gain the new
match, and each new match is recorded with the time it was found
(:class:`~coderiv.archive.models.DocumentMatch`: a document's matches over time, as theses.cz
shows them). Submissions waiting to be archived are taken in batches; a crash between writing
the files and recording them is repaired by the next batch (the same files, the same index).
Every step is idempotent, so two servers' writers sharing one database and index folder may
take the same batch: the index's write lock orders their updates (the second finds nothing new)
and a pair recorded by both is kept once."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from coderiv.archive.db import Database
from coderiv.archive.models import DocumentMatch, Submission, now
from coderiv.archive.retention import expire
from coderiv.archive.states import RepositoryMode, SubmissionState
from coderiv.errors import CoderivError
from coderiv.index.index import Index
from coderiv.pairs.methods import METHODS
from coderiv.pairs.run import run_pairs
from coderiv.pairs.table import PairTable, table_root

log = logging.getLogger("coderiv.archive.writer")

#: The folder of the collection archived submissions are written to.
ARCHIVE_FOLDER = "archive"
#: Submissions archived in one index update at most.
BATCH = 200
#: Seconds between two runs of the retention setting's expiry.
EXPIRE_EVERY = 3600.0


def archive_doc_id(submission_id: str) -> str:
    return f"{ARCHIVE_FOLDER}/{submission_id}.txt"


def collection_folder(index_dir: Path) -> Path:
    """The local folder the index was built from (archiving into a tar or URL is refused)."""
    source = Index.open(index_dir).source
    if not source or not os.path.isdir(source):
        raise CoderivError(f"the index's source {source!r} is not a folder: archiving adds files to the collection's folder")
    return Path(source)


def _write_file(folder: Path, doc_id: str, text: str) -> None:
    path = folder / doc_id
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(text, "utf-8")
    os.replace(partial, path)


def pair_methods(index: Index) -> list[str]:
    """The methods whose pair table is stored (those kept up to date as documents arrive)."""
    return [method for method in sorted(METHODS) if (table_root(index, method) / "CURRENT").is_file()]


def record_matches(session: Session, index: Index, doc_ids: list[str], methods: list[str]) -> int:
    """Record every stored match of the new documents, both ways (the older document's row gains
    the new one); returns how many pairs were new."""
    known = {(m.doc, m.match) for m in session.scalars(select(DocumentMatch).where(DocumentMatch.doc.in_(doc_ids)))}
    added = 0
    found = now()
    for method in methods:
        table = PairTable.open(index, method)
        for new in doc_ids:
            for _, percent, other in table.similar(new):
                back = {d: p for _, p, d in table.similar(other)}.get(new, percent)
                for doc, match, value in ((new, other, percent), (other, new, back)):
                    if (doc, match) in known:
                        continue
                    known.add((doc, match))
                    if session.scalar(select(DocumentMatch.id).where(DocumentMatch.doc == doc, DocumentMatch.match == match)):
                        continue
                    try:  # another server's writer may record the same pair at the same moment
                        with session.begin_nested():
                            session.add(DocumentMatch(doc=doc, match=match, percent=value, found=found))
                    except IntegrityError:
                        continue
                    added += 1
    return added


class ArchiveWriter:
    """Archives the submissions an examiner (or the archive-all policy) chose, in batches, in one
    thread of the server; :meth:`wake` after choosing one, :meth:`run_once` in tests."""

    def __init__(self, database: Database, index_dir: Path, interval: float = 5.0,
                 retention_days: float | None = None) -> None:
        self.database = database
        self.index_dir = index_dir
        self.interval = interval
        self.retention_days = retention_days
        self._expired_at: float | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Apply the retention setting now (before the server answers anything: an expired
        submission is never served), then archive and expire in the writer's thread."""
        self.expire_due()
        self._thread = threading.Thread(target=self._loop, name="coderiv-archive-writer", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self.run_once()
            except Exception:
                log.exception("archiving failed; retried at the next batch")
            self.expire_due()

    def expire_due(self) -> None:
        """Delete the submissions past the retention setting, if an hour has passed since the
        last time (or it never ran); a failure is logged and retried at the next batch. When
        pending sources (mode all) expired, the index forgets their files at once."""
        if self.retention_days is None or (self._expired_at is not None and time.monotonic() - self._expired_at <= EXPIRE_EVERY):
            return
        try:
            with self.database.session() as session:
                gone = expire(session, self.retention_days, self._folder())
            if gone.pooled:
                self.run_once(reindex=True)
        except Exception:
            log.exception("expiring old submissions failed; retried at the next batch")
            return
        self._expired_at = time.monotonic()

    def _folder(self) -> Path | None:
        try:
            return collection_folder(self.index_dir)
        except CoderivError:  # no folder: nothing was ever pooled or archived into it
            return None

    def run_once(self, reindex: bool = False) -> list[str]:
        """Archive the waiting submissions (and re-read the folder when ``reindex``, after a
        deletion); returns the new document ids."""
        with self._lock:
            with self.database.session() as session:
                to_archive = Submission.archive_requested.is_(True) & Submission.archived.is_(None)
                to_pool = (Submission.repository == RepositoryMode.ALL) & Submission.archived_doc.is_(None)
                waiting = list(session.scalars(
                    select(Submission).where(or_(to_archive, to_pool),
                                             Submission.archive_error.is_(None), Submission.state == SubmissionState.DONE)
                    .order_by(Submission.created).limit(BATCH)))
                if not waiting and not reindex:
                    return []
                try:
                    folder = collection_folder(self.index_dir)
                except CoderivError as exc:
                    for submission in waiting:
                        submission.archive_error = str(exc)
                    return []
                batch = {s.id: s.text for s in waiting}
            doc_ids = []
            for submission_id, text in batch.items():
                _write_file(folder, archive_doc_id(submission_id), text)
                doc_ids.append(archive_doc_id(submission_id))
            Index.update_from(folder, self.index_dir, workers=1)
            index = Index.open(self.index_dir)
            methods = pair_methods(index)
            for method in methods:
                run_pairs(index, method)
            with self.database.session() as session:
                if doc_ids:
                    record_matches(session, index, doc_ids, methods)
                moment = now()
                for submission_id in batch:
                    archived = session.get(Submission, submission_id)
                    if archived is None:  # deleted meanwhile: its file goes too
                        (folder / archive_doc_id(submission_id)).unlink(missing_ok=True)
                        continue
                    archived.archived_doc = archive_doc_id(submission_id)
                    if archived.archive_requested:
                        archived.archived = moment
                    elif archived.pooled is None:  # a pending source (mode all) until it is archived
                        archived.pooled = moment
            return doc_ids
