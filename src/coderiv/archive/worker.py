"""A worker process: claim a submission from the queue, read its upload (the first time, in a
child process within the read budget), check it, store the result, repeat.

Started by :class:`coderiv.archive.workers.WorkerPool` as ``python -m coderiv.archive.worker``.
While it checks, a thread renews its lease; when the server that started it dies (even by
SIGKILL) the kernel kills it too (``PR_SET_PDEATHSIG``, and a parent check as a fallback), so
its lease runs out and the restarted server's workers check the submission again."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

from sqlalchemy import CursorResult, update

from coderiv.archive.checker import Checker, CheckResult, GenerationMoved
from coderiv.archive.db import Database
from coderiv.archive.models import Check, Submission, now
from coderiv.archive.notifications import enqueue
from coderiv.archive.queue import DEFAULT_LEASE, Claim, claim, heartbeat
from coderiv.archive.states import CheckState, SubmissionState
from coderiv.errors import CoderivError
from coderiv.system.child_processes import die_with_parent
from coderiv.text.extract import MAX_DOCUMENT_BYTES, Markup
from coderiv.text.isolated import Budget, read_isolated

log = logging.getLogger("coderiv.archive.worker")

#: Seconds between looks at an empty queue.
POLL = 0.5
#: Fault tests only: seconds a check pauses after it is claimed (so a test can kill it mid-check).
FAULT_DELAY_ENV = "CODERIV_ARCHIVE_FAULT_DELAY"


class Worker:
    def __init__(
        self, database: Database, index: Path, lease: float, notify: bool, parent: int | None,
        budget: Budget | None = None, max_bytes: int = MAX_DOCUMENT_BYTES,
    ) -> None:
        self.database = database
        self.budget = budget or Budget()
        self.max_bytes = max_bytes
        self.checker = Checker(index)
        self.lease = lease
        #: record a webhook delivery with each result (sent by the server, never by this worker)
        self.notify = notify
        self.parent = parent
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    def _orphaned(self) -> bool:
        return self.parent is not None and os.getppid() != self.parent

    def run(self) -> None:
        while not self._orphaned():
            with self.database.session() as session:
                claimed = claim(session, self.name, self.lease)
            if claimed is None:
                time.sleep(POLL)
                continue
            self.check(claimed)

    def _beat(self, claimed: Claim, stop: threading.Event) -> None:
        while not stop.wait(self.lease / 3):
            if self._orphaned():
                os._exit(1)
            try:
                with self.database.session() as session:
                    heartbeat(session, claimed, self.name, self.lease)
            except Exception:  # a missed beat is retried; the lease is three beats long
                log.exception("heartbeat failed")

    def check(self, claimed: Claim) -> None:
        stop = threading.Event()
        beat = threading.Thread(target=self._beat, args=(claimed, stop), daemon=True)
        beat.start()
        try:
            try:
                index = self.checker.index()  # held to the check's end, whatever a writer publishes
                delay = float(os.environ.get(FAULT_DELAY_ENV, "0") or 0)
                if delay:
                    time.sleep(delay)
                text = self.read(claimed, index.markup)
                result: CheckResult | str = self.checker.check(text, claimed.label, claimed.archived_doc, index)
            except GenerationMoved as exc:
                log.warning("check of %s queued again: %s", claimed.submission_id, exc)
                self.requeue(claimed, str(exc))
                return
            except CoderivError as exc:
                result = str(exc)
            except Exception as exc:  # logged; the submission names only its type
                log.exception("check of %s failed", claimed.submission_id)
                result = f"internal error ({type(exc).__name__})"
        finally:
            stop.set()
            beat.join()
        self.finish(claimed, result)

    def requeue(self, claimed: Claim, why: str) -> None:
        """Put the submission back in the queue (this attempt not counted) if this worker still
        holds it; its check row says why it stopped."""
        with self.database.session() as session:
            owned = cast(CursorResult[Any], session.execute(
                update(Submission)
                .where(Submission.id == claimed.submission_id, Submission.worker == self.name, Submission.state == SubmissionState.CHECKING)
                .values(state=SubmissionState.QUEUED, lease_until=None, worker=None, attempts=Submission.attempts - 1)
                .execution_options(synchronize_session=False)))
            check = session.get(Check, claimed.check_id)
            if owned.rowcount == 1 and check is not None:
                check.finished, check.state, check.reason = now(), CheckState.INTERRUPTED, f"{why}; queued again"

    def read(self, claimed: Claim, markup: Markup | None = None) -> str:
        """The submission's visible text: read from its upload the first time (in a child
        process within the read budget, :func:`coderiv.text.isolated.read_isolated`, markup read
        as the index read its documents: ``markup``, by default the live generation's), then
        kept in place of the bytes."""
        if claimed.upload is None:
            return claimed.text
        markup = self.checker.index().markup if markup is None else markup
        document = read_isolated(claimed.upload, claimed.label, self.budget, self.max_bytes, markup)
        with self.database.session() as session:
            session.execute(
                update(Submission)
                .where(Submission.id == claimed.submission_id, Submission.worker == self.name)
                .values(text=document.text, upload=None).execution_options(synchronize_session=False))
        return document.text

    def finish(self, claimed: Claim, result: CheckResult | str) -> None:
        """Store the result if this worker still holds the submission (else another took over)."""
        moment = now()
        done = not isinstance(result, str)
        with self.database.session() as session:
            state = SubmissionState.DONE if done else SubmissionState.FAILED
            values: dict[str, object] = {"state": state, "lease_until": None}
            if isinstance(result, CheckResult):
                values.update(overall=result.overall, top_source=result.top_source, reason=None)
            else:
                values["reason"] = result
            owned = cast(CursorResult[Any], session.execute(
                update(Submission)
                .where(Submission.id == claimed.submission_id, Submission.worker == self.name, Submission.state == SubmissionState.CHECKING)
                .values(**values).execution_options(synchronize_session=False)))
            if owned.rowcount != 1:
                return
            check = session.get(Check, claimed.check_id)
            if check is not None:
                check.finished, check.state = moment, CheckState.DONE if done else CheckState.FAILED
                if isinstance(result, CheckResult):
                    check.generation, check.coderiv_version, check.overall = result.generation, result.coderiv_version, result.overall
                    check.ranking_json, check.report_json, check.report_html = result.ranking_json, result.report_json, result.report_html
                else:
                    check.reason = result
            if self.notify:  # told by the server's sender, in the transaction that stores the result
                enqueue(session, claimed.submission_id, state,
                        result.overall if isinstance(result, CheckResult) else None)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m coderiv.archive.worker")
    parser.add_argument("--database", required=True)
    parser.add_argument("--index", required=True, type=Path)
    parser.add_argument("--lease", type=float, default=DEFAULT_LEASE)
    parser.add_argument("--notify", action="store_true")
    parser.add_argument("--parent", type=int, default=None)
    parser.add_argument("--read-seconds", type=float, default=Budget().seconds)
    parser.add_argument("--read-memory", type=int, default=Budget().memory_bytes)
    parser.add_argument("--max-words", type=int, default=Budget().words)
    parser.add_argument("--max-bytes", type=int, default=MAX_DOCUMENT_BYTES)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s worker %(process)d %(message)s")
    if args.parent is not None:
        die_with_parent(args.parent)  # (elsewhere than Linux the poll loop checks)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    budget = Budget(args.read_seconds, args.read_memory, args.max_words)
    worker = Worker(Database(args.database), args.index, args.lease, args.notify, args.parent, budget, args.max_bytes)
    try:
        worker.run()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
