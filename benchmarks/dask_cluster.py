"""A real Dask cluster for the shard benchmarks: ``dask scheduler`` and single-threaded
``dask worker`` processes on 127.0.0.1 (a free port), killed (only those PIDs) at the end.
Workers inherit this process's environment (PYTHONPATH: the coderiv measured).

tests/support/dask_cluster.py starts the same cluster for the tests; the two are kept apart
on purpose (benchmarks import only coderiv and each other, never the tests)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]


@contextlib.contextmanager
def real_cluster(n_workers: int = 2) -> Iterator[Cluster]:
    """A scheduler and ``n_workers`` single-threaded workers, each its own process."""
    from distributed import Client

    dask = str(Path(sys.executable).parent / "dask")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    started = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **quiet)]
    try:
        for _ in range(n_workers):
            started.append(subprocess.Popen(
                [dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard", "--nworkers", "1"], **quiet
            ))
        with Client(address, timeout="10s") as client:
            client.wait_for_workers(n_workers, timeout=30)
        yield Cluster(address, started[0], started[1:])
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait(timeout=10)
