"""Checks started from the web page: each is a job with a random id that the results page polls
while verification runs. Jobs live in memory only (the uploaded text is never written to disk),
a bounded number of them holding a bounded amount of text, each for a limited time."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from coderiv.web.checks import CheckOptions, CheckOutcome

#: Finished jobs are forgotten after this many seconds.
JOB_TTL = 3600.0
#: At most this many jobs are kept; the oldest finished ones go first.
MAX_JOBS = 200
#: And at most about this many characters of text in them (query, sources, rendered report).
MAX_CHARS = 200_000_000


@dataclass
class Job:
    """One check: its state (``verifying``, ``done``, ``failed``), progress and outcome.

    ``done``/``total`` count verified candidates when the fallback verification runs; while the
    report is built they stay 0/0 (the report is one library call): ``stage`` says what it is
    doing, and the page shows an indeterminate progress bar with the time elapsed."""

    id: str
    options: CheckOptions
    outcome: CheckOutcome
    state: str = "verifying"
    done: int = 0
    total: int = 0
    stage: str = "finding candidate sources"
    error: str | None = None
    created: float = field(default_factory=time.monotonic)
    report_html: str | None = None

    def chars(self) -> int:
        """Characters of text the job holds (what its memory mostly is)."""
        report = self.outcome.report
        held = len(self.outcome.document.text) + len(self.report_html or "")
        return held + (sum(len(s.text) for s in report.sources) if report is not None else 0)

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        self.stage = "verifying the ranked matches with aligned passages"

    def at_stage(self, stage: str) -> None:
        self.stage = stage

    def status(self) -> dict[str, Any]:
        return {
            "id": self.id, "state": self.state, "stage": self.stage, "done": self.done, "total": self.total, "error": self.error,
            "elapsed": round(time.monotonic() - self.created, 1),
        }


class JobStore:
    """Jobs by id, bounded in number and age."""

    def __init__(self, ttl: float = JOB_TTL, limit: int = MAX_JOBS, max_chars: int = MAX_CHARS) -> None:
        self.ttl = ttl
        self.limit = limit
        self.max_chars = max_chars
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def add(self, options: CheckOptions, outcome: CheckOutcome) -> Job:
        job = Job(secrets.token_urlsafe(16), options, outcome)
        with self._lock:
            self._expire(room=1)
            self._jobs[job.id] = job
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            self._expire()
            return self._jobs.get(job_id)

    def _expire(self, room: int = 0) -> None:
        """Forget jobs past their time, then the oldest finished ones while the store holds too
        many (counting ``room`` for one about to be added) or too much text."""
        now = time.monotonic()
        for key in [k for k, j in self._jobs.items() if now - j.created > self.ttl]:
            del self._jobs[key]
        finished = [k for k, j in self._jobs.items() if j.state != "verifying"]  # oldest first
        held = sum(j.chars() for j in self._jobs.values())
        while finished and (len(self._jobs) + room > self.limit or held > self.max_chars):
            held -= self._jobs[finished[0]].chars()
            del self._jobs[finished.pop(0)]
