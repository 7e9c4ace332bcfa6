"""The process table, read from /proc, for the fault tests: which processes a run started,
and whether any outlived it. Only PIDs a test started are killed. (benchmarks/faults.py reads
/proc the same way with its own few lines: benchmarks never import the tests.)"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def _parents() -> dict[int, int]:
    """Every live (not zombie) process and its parent."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    return parents


def children_of(pid: int) -> list[int]:
    """Live processes whose parent is ``pid``."""
    return sorted(p for p, parent in _parents().items() if parent == pid)


def descendants_of(pid: int) -> set[int]:
    """Every live process below ``pid``: children, grandchildren…"""
    parents = _parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(condition: Callable[[], T], seconds: float = 30.0) -> T:
    """The first true value of ``condition`` within ``seconds`` (else its last value)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


def signal_and_reap(proc: subprocess.Popen[bytes], signum: int, timeout: float = 60) -> None:
    """Send ``signum`` to a process this test started and wait for it (SIGKILL if it lingers)."""
    try:
        os.kill(proc.pid, signum)
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def stop_process(process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    """SIGTERM to a process the test started (by its PID), SIGKILL if it is still there after
    ``seconds``, then reap it."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

