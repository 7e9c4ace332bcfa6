"""A real Dask cluster for tests: ``dask scheduler`` and ``dask worker`` processes started with
Dask's own command-line tools on 127.0.0.1 (a free port), killed (only those PIDs) at the end.
Workers inherit this process's environment (PYTHONPATH: the coderiv under test).
(benchmarks/dask_cluster.py starts the same cluster: benchmarks never import the tests.)"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_workers(address: str, n: int, deadline: float) -> None:
    from distributed import Client

    with Client(address, timeout="10s") as client:
        client.wait_for_workers(n, timeout=max(1.0, deadline - time.monotonic()))


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]


@contextlib.contextmanager
def real_cluster(n_workers: int = 2) -> Iterator[Cluster]:
    """A scheduler and ``n_workers`` single-threaded workers, each its own process."""
    dask = str(Path(sys.executable).parent / "dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        ))
        for _ in range(n_workers):
            started.append(subprocess.Popen(
                [dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard", "--nworkers", "1"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
        wait_for_workers(address, n_workers, time.monotonic() + 30)
        yield Cluster(address, started[0], started[1:])
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait(timeout=10)
