"""Small helpers shared by the benchmark scripts (timing, percentiles, peak memory, a
collection's texts)."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def machine() -> str:
    """One line naming this machine, for docs/performance.md."""
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    pinned = f" ({usable} usable by this process)" if usable != cores else ""
    return f"{cpu}, {cores} {'core' if cores == 1 else 'cores'}{pinned}, Python {platform.python_version()}, {platform.system()}"


def tar_texts(tar: Path) -> Iterator[tuple[str, str]]:
    """(name, text) of every file of a collection's tar, in the tar's order (UTF-8, undecodable
    bytes replaced)."""
    with tarfile.open(tar) as archive:
        for member in archive:
            handle = archive.extractfile(member)
            if handle is not None:
                yield member.name, handle.read().decode("utf-8", "replace")


def peak_rss_mb() -> tuple[float, float]:
    """Peak resident memory (MB) of this process (VmHWM: unlike ru_maxrss it is not inherited
    across exec) and of its largest finished child."""
    own = 0.0
    with open("/proc/self/status", encoding="utf-8") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                own = int(line.split()[1]) / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


class AnonymousPeak:
    """Samples this process's anonymous resident memory (RssAnon: heap and arrays, not the
    memory-mapped index files, which the kernel can drop and re-read) and keeps the maximum."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def current_mb() -> float:
        with open("/proc/self/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, self.current_mb())
            self._stop.wait(self.interval)

    def __enter__(self) -> AnonymousPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mb = max(self.peak_mb, self.current_mb())


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def latency_summary(seconds: list[float]) -> str:
    """Median and p90 in milliseconds."""
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return f"median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms"
