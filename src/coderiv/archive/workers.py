"""The bounded pool of worker processes (:mod:`coderiv.archive.worker`): ``size`` of them, each
restarted when it dies, all stopped (by their PIDs) when the server stops. Processes, not
threads: a check that crashes or hangs its interpreter takes one worker with it, never the
server, and its lease lets another worker check the submission again."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from coderiv.text.extract import MAX_DOCUMENT_BYTES
from coderiv.text.isolated import Budget

#: Seconds between looks at the workers.
WATCH = 0.5


class WorkerPool:
    def __init__(
        self, database_url: str, index: Path, size: int, lease: float, notify: bool = False,
        budget: Budget | None = None, max_bytes: int = MAX_DOCUMENT_BYTES,
    ) -> None:
        budget = budget or Budget()
        self.command = [
            sys.executable, "-m", "coderiv.archive.worker", "--database", database_url, "--index", str(index),
            "--lease", str(lease), "--parent", str(os.getpid()), "--read-seconds", str(budget.seconds),
            "--read-memory", str(budget.memory_bytes), "--max-words", str(budget.words), "--max-bytes", str(max_bytes),
        ] + (["--notify"] if notify else [])
        self.size = size
        self.processes: list[subprocess.Popen[bytes]] = []
        self.restarts = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    def start(self) -> None:
        """Start the watcher thread, which starts the workers (their parent-death signal is tied
        to the thread that started them, so one thread starts them all)."""
        self._thread = threading.Thread(target=self._watch, name="coderiv-archive-workers", daemon=True)
        self._thread.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self.command, stdin=subprocess.DEVNULL)

    def _watch(self) -> None:
        self.processes = [self._spawn() for _ in range(self.size)]
        while not self._stop.wait(WATCH):
            for i, process in enumerate(self.processes):
                if process.poll() is not None and not self._stop.is_set():
                    self.processes[i] = self._spawn()
                    self.restarts += 1
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
